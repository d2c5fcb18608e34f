/// The one schema of both stores: its tables, written once as the steps that made them
/// (``StoreSchema/steps``), and rendered for each dialect as the versions that dialect's databases record in
/// `schema_migrations` (``versions(_:)``).
///
/// A shipped step is never edited; a change is a new step, appended to ``steps``: SQLite applies it as its
/// next version, PostgreSQL as its own next one. SQLite has one version per step. PostgreSQL came later: its
/// version 1 made the tables of the first ``postgresBaseline`` steps at once (their added columns declared
/// in the tables), and every step after those is one PostgreSQL version.
enum StoreSchema {
    /// PostgreSQL's first version: the first `steps` steps, under its own name.
    static let postgresBaseline = (
        steps: 8, name: "verifications, events, idempotency keys, rate counters, prefix blocks, api keys, webhooks"
    )

    /// The versions of `dialect`, oldest first, each with the statements that apply it.
    static func versions(_ dialect: SQLDialect) -> [SchemaVersion] {
        switch dialect {
        case .sqlite:
            return steps.enumerated().map { offset, step in
                SchemaVersion(version: offset + 1, name: step.name, statements: render(step.changes, .sqlite))
            }
        case .postgres:
            let baseline = SchemaVersion(
                version: 1, name: postgresBaseline.name,
                statements: render(steps.prefix(postgresBaseline.steps).flatMap(\.changes), .postgres))
            return [baseline]
                + steps.dropFirst(postgresBaseline.steps).enumerated().map { offset, step in
                    SchemaVersion(version: offset + 2, name: step.name, statements: render(step.changes, .postgres))
                }
        }
    }

    /// The versions above `applied` that a database at `applied` still needs, oldest first; a database newer
    /// than this gateway is refused.
    static func pending(after applied: Int, _ dialect: SQLDialect) throws(StoreError) -> [SchemaVersion] {
        let versions = versions(dialect)
        let newest = versions.last?.version ?? 0
        guard applied <= newest else {
            throw StoreError("database schema version \(applied) is newer than this gateway's \(newest)")
        }
        return versions.filter { $0.version > applied }
    }

    /// `changes` as statements. A column added to a table that the same changes create is declared in its
    /// `CREATE TABLE` (PostgreSQL's baseline), in the order it was added.
    static func render(_ changes: [SchemaChange], _ dialect: SQLDialect) -> [String] {
        var made: [SchemaChange] = []
        for change in changes {
            if case .add(let column, let table) = change,
                let index = made.firstIndex(where: {
                    if case .create(let created) = $0 { created.name == table } else { false }
                }),
                case .create(var created) = made[index]
            {
                created.columns.append(column)
                made[index] = .create(created)
            } else {
                made.append(change)
            }
        }
        return made.map { $0.sql(dialect) }
    }

    // MARK: - The record of applied versions

    /// Made when missing, before anything else, in the migration's transaction.
    static let migrationsTable = SchemaTable(
        "schema_migrations", ifNotExists: true,
        [.key("version", .integer), .required("name", .text), .required("applied_at", .real)])
    static let appliedVersion = StoreStatement("SELECT coalesce(max(version), 0) FROM schema_migrations")
    static let recordVersion = StoreStatement(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)")
}

/// One version of a dialect's schema: what `schema_migrations` records, and the statements that apply it
/// (one statement each: PostgreSQL's extended protocol runs one at a time).
struct SchemaVersion: Sendable, Equatable {
    var version: Int
    var name: String
    var statements: [String]
}

/// One step of the schema's history.
struct SchemaStep: Sendable {
    var name: String
    var changes: [SchemaChange]

    init(_ name: String, _ changes: [SchemaChange]) {
        self.name = name
        self.changes = changes
    }
}

/// One change of a step, in either dialect.
enum SchemaChange: Sendable {
    case create(SchemaTable)
    case add(SchemaColumn, to: String)
    case index(SchemaIndex)
    /// A statement the same in both dialects (a data fix).
    case statement(String)

    func sql(_ dialect: SQLDialect) -> String {
        switch self {
        case .create(let table): table.create(dialect)
        case .add(let column, let table): "ALTER TABLE \(table) ADD COLUMN \(column.declaration(dialect))"
        case .index(let index): index.create(dialect)
        case .statement(let sql): sql
        }
    }
}

struct SchemaTable: Sendable {
    var name: String
    var columns: [SchemaColumn]
    /// Table constraints after the columns, the same in both dialects (`PRIMARY KEY (scope, key)`).
    var constraints: [String]
    /// SQLite's `WITHOUT ROWID`, for a table that is only its primary key; PostgreSQL has no such thing.
    var withoutRowID: Bool
    var ifNotExists: Bool

    init(
        _ name: String, ifNotExists: Bool = false, _ columns: [SchemaColumn], constraints: [String] = [],
        withoutRowID: Bool = false
    ) {
        self.name = name
        self.columns = columns
        self.constraints = constraints
        self.withoutRowID = withoutRowID
        self.ifNotExists = ifNotExists
    }

    func create(_ dialect: SQLDialect) -> String {
        let lines = columns.map { $0.declaration(dialect) } + constraints
        return "CREATE TABLE \(ifNotExists ? "IF NOT EXISTS " : "")\(name) (\n"
            + lines.map { "    " + $0 }.joined(separator: ",\n")
            + "\n)" + (withoutRowID && dialect.hasRowIDTables ? " WITHOUT ROWID" : "")
    }
}

struct SchemaColumn: Sendable {
    var name: String
    var type: ColumnType
    /// What follows the type, the same in both dialects (`NOT NULL DEFAULT '[]'`).
    var constraint: String

    init(_ name: String, _ type: ColumnType, _ constraint: String = "") {
        self.name = name
        self.type = type
        self.constraint = constraint
    }

    static func key(_ name: String, _ type: ColumnType) -> SchemaColumn {
        SchemaColumn(name, type, "PRIMARY KEY NOT NULL")
    }

    static func required(_ name: String, _ type: ColumnType, default value: String? = nil) -> SchemaColumn {
        SchemaColumn(name, type, "NOT NULL" + (value.map { " DEFAULT \($0)" } ?? ""))
    }

    static func optional(_ name: String, _ type: ColumnType) -> SchemaColumn { SchemaColumn(name, type) }

    func declaration(_ dialect: SQLDialect) -> String {
        "\(name) \(dialect.type(type))" + (constraint.isEmpty ? "" : " " + constraint)
    }
}

struct SchemaIndex: Sendable {
    var name: String
    var table: String
    var columns: [String]
    /// The table's row key, which the index is ordered by after `columns`: written only where an index does
    /// not end with it by itself (``SQLDialect/indexesEndWithRowKey``).
    var rowKey: String?

    init(_ name: String, on table: String, _ columns: [String], thenRowKey rowKey: String? = nil) {
        self.name = name
        self.table = table
        self.columns = columns
        self.rowKey = rowKey
    }

    func create(_ dialect: SQLDialect) -> String {
        let key = rowKey.flatMap { dialect.indexesEndWithRowKey ? nil : $0 }
        return "CREATE INDEX \(name) ON \(table) (\((columns + (key.map { [$0] } ?? [])).joined(separator: ", ")))"
    }
}
