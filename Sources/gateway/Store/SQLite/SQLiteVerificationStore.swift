import CSQLite
import Foundation
import GatewayCore
import Logging

/// The embedded default store: one SQLite file (WAL) under the data directory (docs/design.md §8), on the one
/// schema (`Store/Schema`, whose ``SQLStore`` extensions write every operation). This type only runs the calls.
///
/// Every call runs on the file's ``SQLiteDatabase`` queue as one unit of its group commit, its statements one
/// after another; a call that must commit together runs in a transaction (a savepoint of its group). Updates
/// are compare-and-set on the record's version in SQL, so they stay correct when several processes share the
/// file. SQLite's own errors are logged through the injected logger and surface only as
/// `GatewayError(.internal, "storage failure")`.
final class SQLiteVerificationStore: SQLStore {
    let database: SQLiteDatabase
    let logger: Logger
    let counterPurge = CounterPurge()
    let callCounts = StoreCallCounts()

    /// The writer's page cache: 32 MiB at most, against SQLite's default 2 MiB, so that the upper pages of the
    /// tables and indexes every write walks stay in memory as the store grows. With 10 million verifications
    /// stored, a start cost about 20% more CPU than with one million on the default cache, and no more with this
    /// one (BENCHMARKS.md, "Growth"). The sandbox emulators' file keeps the default.
    static let writerCacheKiB = 32 * 1024

    /// Opens (or creates) the store at `path`, creating its directory and applying pending migrations.
    /// `synchronous` is `.full` unless the configuration says `sqlite_sync: normal`; `commitDelay` lets a
    /// synced group wait for the writes of other requests in flight (``SQLiteDatabase``, "Commit delay").
    init(
        path: String, synchronous: SQLiteSynchronous = .full, commitDelay: SQLiteCommitDelay? = nil,
        logger: Logger = Logger(label: "gateway.store.sqlite")
    ) throws(GatewayError) {
        self.logger = logger
        do {
            let database = try SQLiteDatabase(
                path: path, synchronous: synchronous, commitDelay: commitDelay, cacheKiB: Self.writerCacheKiB)
            try database.performSync { (connection) throws(SQLiteError) in try SQLiteMigration.migrate(connection) }
            let counts = callCounts
            try database.performSync { connection in connection.countCommits(into: counts) }
            self.database = database
        } catch {
            throw Self.failure(error, operation: "open", logger: logger)
        }
    }

    /// Closes the file once queued work is done. Later calls fail with `internal`. Dropping the last
    /// reference closes it too.
    func close() {
        database.close()
    }

    /// A provisional write is committed without a sync of its own: the settle commit that always follows it
    /// syncs the WAL, its frames included (docs/performance.md, "Durability").
    func run<Value: Sendable>(_ call: StoreCall<Value>) async throws(GatewayError) -> Value {
        try await StoreTracing.traced(call.operation, system: "sqlite") { () throws(GatewayError) in
            try await runUntraced(call)
        }
    }

    private func runUntraced<Value: Sendable>(_ call: StoreCall<Value>) async throws(GatewayError) -> Value {
        let counts = callCounts
        do {
            return try await database.perform(durability: call.durability == .provisional ? .unsynced : .synced) {
                (connection) throws(SQLiteError) -> Value in
                guard call.atomicity != .none else { return try Self.run(call, on: connection, counts: counts) }
                return try connection.transaction { () throws(SQLiteError) in
                    try Self.run(call, on: connection, counts: counts)
                }
            }
        } catch {
            let failure = Self.failure(error, operation: call.operation, logger: logger)
            if error.isConstraintViolation, let duplicate = call.duplicate { throw duplicate }
            throw failure
        }
    }

    func read<Value: Sendable>(_ call: StoreCall<Value>) async throws(GatewayError) -> Value {
        try await StoreTracing.traced(call.operation, system: "sqlite") { () throws(GatewayError) in
            try await readUntraced(call)
        }
    }

    private func readUntraced<Value: Sendable>(_ call: StoreCall<Value>) async throws(GatewayError) -> Value {
        let counts = callCounts
        do {
            return try await database.read { (connection) throws(SQLiteError) -> Value in
                try Self.run(call, on: connection, counts: counts)
            }
        } catch {
            throw Self.failure(error, operation: call.operation, logger: logger)
        }
    }

    /// Steps through `call` on the queue: each statement runs, and its answer is read, before the next one
    /// is prepared. The call and its statements are counted in `counts`, run to the end or not.
    private static func run<Value>(
        _ call: StoreCall<Value>, on connection: SQLiteConnection, counts: StoreCallCounts
    ) throws(SQLiteError) -> Value {
        var statements = 0
        defer { counts.record(call.operation, statements: statements) }
        var step = try sqliteErrors { try call.start() }
        while true {
            switch step {
            case .done(let value):
                return value
            case .exclusive(_, let next):
                step = next  // one writer at a time holds the whole file: there is no lock to take
            case .run(let statement, let values, let next):
                statements += 1
                step = try connection.withStatement(statement.sqlite) { (prepared) throws(SQLiteError) in
                    try prepared.bind(values)
                    let answer = try SQLiteAnswer(prepared, connection)
                    return try sqliteErrors { try next(answer) }
                }
            }
        }
    }

    /// `body`'s errors as SQLite's own: a fault of the store (a row it cannot read back) is `SQLITE_MISMATCH`.
    private static func sqliteErrors<T>(_ body: () throws -> T) throws(SQLiteError) -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw error
        } catch let error as StoreError {
            throw SQLiteError.undecodableRow(error.message)
        } catch {
            throw SQLiteError.undecodableRow("\(error)")
        }
    }

    /// Logs what SQLite said (for operators) and returns the error API clients may see.
    static func failure(_ error: SQLiteError, operation: String, logger: Logger) -> GatewayError {
        logger.error(
            "storage failure",
            metadata: [
                "store.operation": "\(operation)",
                "sqlite.code": "\(error.code)",
                "sqlite.message": "\(error.message)",
            ])
        return GatewayError(.internal, "storage failure")
    }
}

/// A statement's answer while it is prepared. A statement without result columns has run to its end; one
/// with them (a query, or `RETURNING`) steps as its rows are read.
private struct SQLiteAnswer: StoreAnswer {
    let statement: SQLiteStatement
    let changed: Int

    init(_ statement: SQLiteStatement, _ connection: SQLiteConnection) throws(SQLiteError) {
        self.statement = statement
        if statement.returnsRows {
            changed = 0
        } else {
            while try statement.step() {}
            changed = connection.changes
        }
    }

    func rows<Row>(_ decode: (any StoreRow) throws -> Row) throws -> [Row] {
        var rows: [Row] = []
        while try statement.step() { rows.append(try decode(statement)) }
        return rows
    }

    func first<Row>(_ decode: (any StoreRow) throws -> Row) throws -> Row? {
        try statement.step() ? try decode(statement) : nil
    }
}
