import CSQLite
import Foundation

/// How far a commit goes before it returns (SQLite's `synchronous` pragma, in WAL mode).
enum SQLiteSynchronous: String, Sendable {
    /// Every commit is synced to the device (`fdatasync` of the WAL) before it returns: an answered request
    /// survives a power loss or an operating-system crash. The gateway's store by default.
    case full
    /// A commit is written to the WAL file and synced at checkpoints: it survives the process crashing or
    /// being killed, not a power loss. The sandbox emulators' file, or the store when `sqlite_sync: normal`.
    case normal
}

/// One open SQLite database file: a thin, safe layer over the C API.
///
/// It is not thread-safe on its own; ``SQLiteDatabase`` owns it and serializes every call.
final class SQLiteConnection {
    private var handle: OpaquePointer?
    /// The `synchronous` mode the connection was opened with, and runs in outside ``withoutSync(_:)``.
    let synchronous: SQLiteSynchronous
    /// Prepared statements by SQL text, reset and reused: the store runs a handful of statements over and
    /// over, and preparing one costs more than running it.
    private var statements: [String: OpaquePointer] = [:]
    static let statementCacheLimit = 64

    /// Opens (creating if needed) the database at `path`, creating its directory, and sets the pragmas the
    /// store relies on: WAL, a busy timeout for other processes' writes, foreign keys, and `synchronous`.
    init(path: String, synchronous: SQLiteSynchronous) throws(SQLiteError) {
        self.synchronous = synchronous
        if path != ":memory:" {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw SQLiteError(
                    code: SQLITE_CANTOPEN, message: "cannot create directory \(directory.path): \(error)")
            }
        }
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let error = Self.error(code, opened)
            sqlite3_close_v2(opened)
            throw error
        }
        sqlite3_extended_result_codes(opened, 1)
        handle = opened
        do {
            // busy_timeout first: switching to WAL takes a lock another process may hold.
            try execute("PRAGMA busy_timeout=5000")
            try execute("PRAGMA journal_mode=WAL")
            try execute("PRAGMA foreign_keys=ON")
            try execute(synchronous == .full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    var isOpen: Bool { handle != nil }

    /// Closes the file; later calls fail with ``SQLiteError/closed``. Closing twice is harmless.
    func close() {
        guard let handle else { return }
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Runs one or more statements that take no parameters (schema, pragmas); result rows are discarded.
    func execute(_ sql: String) throws(SQLiteError) {
        let handle = try openHandle()
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            throw SQLiteError(code: code, message: message.map { String(cString: $0) } ?? Self.describe(code))
        }
    }

    /// Prepares `sql`, hands the statement to `body`, and finalizes it however `body` ends.
    func withStatement<T>(
        _ sql: String, _ body: (SQLiteStatement) throws(SQLiteError) -> T
    ) throws(SQLiteError) -> T {
        let handle = try openHandle()
        if let cached = statements[sql] {
            defer {
                sqlite3_reset(cached)
                sqlite3_clear_bindings(cached)
            }
            return try body(SQLiteStatement(handle: cached, connection: handle))
        }
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
        guard code == SQLITE_OK, let prepared else {
            sqlite3_finalize(prepared)
            throw Self.error(code, handle)
        }
        guard statements.count < Self.statementCacheLimit else {
            defer { sqlite3_finalize(prepared) }
            return try body(SQLiteStatement(handle: prepared, connection: handle))
        }
        statements[sql] = prepared
        defer {
            sqlite3_reset(prepared)
            sqlite3_clear_bindings(prepared)
        }
        return try body(SQLiteStatement(handle: prepared, connection: handle))
    }

    /// Runs a statement to completion and returns how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        try withStatement(sql) { (statement) throws(SQLiteError) in
            try statement.bind(values)
            while try statement.step() {}
        }
        return changes
    }

    /// Runs a query and maps every result row.
    func query<Row>(
        _ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) throws(SQLiteError) -> Row
    ) throws(SQLiteError) -> [Row] {
        try withStatement(sql) { (statement) throws(SQLiteError) in
            try statement.bind(values)
            var rows: [Row] = []
            while try statement.step() {
                rows.append(try row(statement))
            }
            return rows
        }
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    var changes: Int {
        handle.map { Int(sqlite3_changes($0)) } ?? 0
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: the write lock is taken up front, so a read followed
    /// by a write cannot be overtaken by another connection. Any error rolls back.
    func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try run("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            // The transaction may already be gone (SQLite rolls back on some errors); that is fine.
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` with `synchronous=NORMAL`, then restores `FULL`: its commits reach the WAL file but are
    /// not synced by themselves; the next synced commit's `fdatasync` of the WAL covers them. For commits
    /// nothing is answered from until a later one (``StoreWriteDurability/provisional``). `body` must run
    /// whole transactions: SQLite refuses to change the mode inside one. A connection opened with `NORMAL`
    /// runs `body` as it is.
    func withoutSync<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        guard synchronous == .full else { return try body() }
        try run("PRAGMA synchronous=NORMAL")
        let result = Result { () throws(SQLiteError) -> T in try body() }
        // Restored whatever `body` did; this fails only on a closed handle or an open transaction.
        try run("PRAGMA synchronous=FULL")
        return try result.get()
    }

    private func openHandle() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError.closed }
        return handle
    }

    static func error(_ code: Int32, _ handle: OpaquePointer?) -> SQLiteError {
        // The handle's message is only meaningful when it describes this failure.
        if let handle, sqlite3_extended_errcode(handle) & 0xFF == code & 0xFF, let message = sqlite3_errmsg(handle) {
            return SQLiteError(code: code, message: String(cString: message))
        }
        return SQLiteError(code: code, message: describe(code))
    }

    private static func describe(_ code: Int32) -> String {
        sqlite3_errstr(code).map { String(cString: $0) } ?? "unknown error"
    }
}
