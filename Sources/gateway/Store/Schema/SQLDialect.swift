/// What differs between the SQL the two stores take, and nothing else (sql-kit's `SQLDialect`, reduced to
/// what this schema and its statements need): how a parameter is written, row locks, and the column types
/// of the schema. Every statement and table is written once, with PostgreSQL's `$n` parameters, and each
/// dialect renders it once (``StoreStatement``, ``StoreSchema``).
enum SQLDialect: Sendable, CaseIterable {
    case sqlite
    case postgres

    /// Where a template asks for row locks: `FOR UPDATE SKIP LOCKED` in PostgreSQL, so other instances'
    /// senders and pruners pass over the rows this transaction holds; nothing in SQLite, whose one writer
    /// holds the whole file.
    static let skipLockedRows = "{skip locked rows}"

    /// Where a template takes the floor of a non-negative number before casting it to an integer:
    /// `floor` in PostgreSQL (whose cast rounds), nothing in SQLite (whose cast truncates, and which may lack
    /// the math functions).
    static let floorOfNonNegative = "{floor}"

    /// The text of `template` in this dialect: `$n` becomes `?n` for SQLite (numbered, so a parameter may be
    /// used twice and in any order), and ``skipLockedRows`` becomes the dialect's clause.
    func render(_ template: String) -> String {
        switch self {
        case .postgres:
            return template.replacingOccurrences(of: Self.skipLockedRows, with: "FOR UPDATE SKIP LOCKED")
                .replacingOccurrences(of: Self.floorOfNonNegative, with: "floor")
        case .sqlite:
            var text = ""
            var rest = template.replacingOccurrences(of: " " + Self.skipLockedRows, with: "")
                .replacingOccurrences(of: Self.skipLockedRows, with: "")
                .replacingOccurrences(of: Self.floorOfNonNegative, with: "")[...]
            while let dollar = rest.firstIndex(of: "$") {
                text += rest[..<dollar]
                let digits = rest[rest.index(after: dollar)...].prefix { $0.isASCII && $0.isNumber }
                text += digits.isEmpty ? "$" : "?" + digits
                rest = rest[digits.endIndex...]
            }
            return text + rest
        }
    }

    /// A column's type: dates as seconds in a double (microseconds survive), flags and counts as 64-bit
    /// integers, JSON as text.
    func type(_ type: ColumnType) -> String {
        switch (self, type) {
        case (_, .text): "TEXT"
        case (.sqlite, .integer): "INTEGER"
        case (.postgres, .integer): "BIGINT"
        case (.sqlite, .real): "REAL"
        case (.postgres, .real): "DOUBLE PRECISION"
        case (.sqlite, .blob): "BLOB"
        case (.postgres, .blob): "BYTEA"
        // Numbers handed out in commit order: SQLite's one writer at a time does that for AUTOINCREMENT;
        // PostgreSQL's identity does not, and the store takes the event-log lock for it (StoreLock.eventLog).
        case (.sqlite, .sequence): "INTEGER PRIMARY KEY AUTOINCREMENT"
        case (.postgres, .sequence): "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
        }
    }

    /// Whether every index ends with the table's row key by itself: SQLite's do (the rowid, which an
    /// `INTEGER PRIMARY KEY` column is), PostgreSQL's do not.
    var indexesEndWithRowKey: Bool { self == .sqlite }

    /// Whether a table may be declared `WITHOUT ROWID` (SQLite: a table that is only its primary key).
    var hasRowIDTables: Bool { self == .sqlite }
}

/// The column types of the one schema.
enum ColumnType: Sendable {
    case text
    case integer
    case real
    case blob
    /// An integer key numbered by the database, in commit order (the event log's `seq`).
    case sequence
}

/// One statement of the store, written once with `$1 … $n` parameters. Both dialects' texts are rendered
/// when it is first used, so running it costs no rendering (and SQLite's statement cache, keyed by text,
/// sees one text per statement).
struct StoreStatement: Sendable {
    let sqlite: String
    let postgres: String

    init(_ template: String) {
        sqlite = SQLDialect.sqlite.render(template)
        postgres = SQLDialect.postgres.render(template)
    }

    func text(_ dialect: SQLDialect) -> String { dialect == .sqlite ? sqlite : postgres }

    /// `$1, $2, … $count`: the parameters of a row of `count` values.
    static func parameters(_ count: Int) -> String {
        (1...max(1, count)).map { "$\($0)" }.joined(separator: ", ")
    }
}
