import CSQLite
import Foundation
import GatewayCore

/// An emulator's ``EmulatorTable`` as rows of `emulator_rows` in `sandbox/emulators.sqlite`, beside the
/// `emulator_state` rows of ``SQLiteEmulatorPersistence``. A transaction runs on the file's queue, where
/// calls that wait together are committed as one group, each in its own savepoint; it reads only the rows
/// it asks for (by key, by lookup, or due), through the primary key and two indexes, so a call costs the
/// same, and the emulator holds nothing in memory, however many rows there are.
struct SQLiteEmulatorTable: EmulatorTable {
    let database: SQLiteDatabase
    let plugin: String
    let name: String

    static func createSchema(_ connection: SQLiteConnection) throws(SQLiteError) {
        // A rowid table: a key keeps its rowid when it is replaced, which orders the keys of a lookup.
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS emulator_rows (
                plugin TEXT NOT NULL,
                tbl TEXT NOT NULL,
                key TEXT NOT NULL,
                value BLOB NOT NULL,
                lookup TEXT NOT NULL,
                due REAL NOT NULL,
                UNIQUE (plugin, tbl, key)
            );
            CREATE INDEX IF NOT EXISTS emulator_rows_lookup ON emulator_rows (plugin, tbl, lookup);
            CREATE INDEX IF NOT EXISTS emulator_rows_due ON emulator_rows (plugin, tbl, due);
            """)
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any EmulatorRows) throws -> T) async throws -> T {
        let plugin = plugin
        let name = name
        let outcome = try await database.perform { (connection) throws(SQLiteError) -> Result<T, EmulatorTableError> in
            try Self.run(connection, plugin: plugin, name: name, body)
        }
        return try Self.value(outcome)
    }

    func transactionNow<T>(_ body: (any EmulatorRows) throws -> T) throws -> T {
        try Self.value(
            database.performSync { (connection) throws(SQLiteError) -> Result<T, EmulatorTableError> in
                try Self.run(connection, plugin: plugin, name: name, body)
            })
    }

    /// The body's value, or the error it threw itself.
    private static func value<T>(_ outcome: Result<T, EmulatorTableError>) throws -> T {
        switch outcome {
        case .success(let value): return value
        case .failure(let failure): throw failure.underlying
        }
    }

    /// Runs `body` in a transaction (a savepoint inside a group): SQLite's errors roll it back and are
    /// thrown; any other error `body` throws rolls it back too and comes back as the failure.
    private static func run<T>(
        _ connection: SQLiteConnection, plugin: String, name: String, _ body: (any EmulatorRows) throws -> T
    ) throws(SQLiteError) -> Result<T, EmulatorTableError> {
        var other: (any Error)?
        do {
            return .success(
                try connection.transaction { () throws(SQLiteError) -> T in
                    let rows = Rows(connection: connection, plugin: plugin, name: name)
                    do {
                        return try body(rows)
                    } catch let error as SQLiteError {
                        throw error
                    } catch {
                        other = error
                        throw Self.bodyFailed
                    }
                })
        } catch {
            guard let other else { throw error }
            return .failure(EmulatorTableError(underlying: other))
        }
    }

    /// Thrown through SQLite's transaction to roll back a body that failed with its own error.
    private static let bodyFailed = SQLiteError(code: SQLITE_ABORT, message: "emulator transaction failed")

    private struct Rows: EmulatorRows {
        let connection: SQLiteConnection
        let plugin: String
        let name: String

        func value(forKey key: String) throws -> Data? {
            try connection.query(
                "SELECT value FROM emulator_rows WHERE plugin = ? AND tbl = ? AND key = ?",
                [.text(plugin), .text(name), .text(key)]
            ) { (row) throws(SQLiteError) in row.blob(0) ?? Data() }.first
        }

        func keys(lookup: String) throws -> [String] {
            try connection.query(
                "SELECT key FROM emulator_rows WHERE plugin = ? AND tbl = ? AND lookup = ? ORDER BY rowid",
                [.text(plugin), .text(name), .text(lookup)]
            ) { (row) throws(SQLiteError) in row.text(0) ?? "" }
        }

        func keysDue(at now: Date, limit: Int) throws -> [String] {
            try connection.query(
                "SELECT key FROM emulator_rows WHERE plugin = ? AND tbl = ? AND due <= ? ORDER BY due, rowid LIMIT ?",
                [.text(plugin), .text(name), .real(now.timeIntervalSince1970), .integer(Int64(limit))]
            ) { (row) throws(SQLiteError) in row.text(0) ?? "" }
        }

        func put(_ value: Data, forKey key: String, lookup: String, due: Date) throws {
            try connection.run(
                "INSERT INTO emulator_rows (plugin, tbl, key, value, lookup, due) VALUES (?, ?, ?, ?, ?, ?) "
                    + "ON CONFLICT (plugin, tbl, key) DO UPDATE SET "
                    + "value = excluded.value, lookup = excluded.lookup, due = excluded.due",
                [.text(plugin), .text(name), .text(key), .blob(value), .text(lookup), .real(due.timeIntervalSince1970)])
        }

        func remove(_ key: String) throws {
            try connection.run(
                "DELETE FROM emulator_rows WHERE plugin = ? AND tbl = ? AND key = ?",
                [.text(plugin), .text(name), .text(key)])
        }
    }
}

/// A transaction body of an ``SQLiteEmulatorTable`` failed with an error of its own, and was rolled back.
struct EmulatorTableError: Error, @unchecked Sendable {  // unchecked: the underlying error is only rethrown.
    let underlying: any Error
}
