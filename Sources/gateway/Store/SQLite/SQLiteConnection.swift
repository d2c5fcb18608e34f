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
    /// The `synchronous` mode the connection was opened with, and runs in outside ``withSynchronous(_:_:)``.
    let synchronous: SQLiteSynchronous
    /// Prepared statements by SQL text, reset and reused: the store runs a handful of statements over and
    /// over, and preparing one costs more than running it.
    private var statements: [String: OpaquePointer] = [:]
    static let statementCacheLimit = 64

    /// Opens (creating if needed) the database at `path`, creating its directory, and sets the pragmas the
    /// store relies on: WAL, a busy timeout for other processes' writes, foreign keys, and `synchronous`.
    ///
    /// `reader`: a connection for ``SQLiteDatabase/read(_:)`` instead, to a database that exists and is in
    /// WAL mode already: it refuses to write (`query_only`), and has no busy timeout, so that a read that
    /// would have to wait fails at once with `SQLITE_BUSY` rather than blocking its thread.
    ///
    /// `cacheKiB`: the most memory the writer's page cache may hold (SQLite's default, 2 MiB, without it).
    init(path: String, synchronous: SQLiteSynchronous, reader: Bool = false, cacheKiB: Int? = nil)
        throws(SQLiteError)
    {
        self.synchronous = synchronous
        if !reader, path != ":memory:" {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw SQLiteError(
                    code: SQLITE_CANTOPEN, message: "cannot create directory \(directory.path): \(error)")
            }
        }
        var opened: OpaquePointer?
        // A reader is used by one thread at a time (taken from its pool), so it needs no mutex of its own.
        let flags = SQLITE_OPEN_READWRITE | (reader ? SQLITE_OPEN_NOMUTEX : SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX)
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let error = Self.error(code, opened)
            sqlite3_close_v2(opened)
            throw error
        }
        sqlite3_extended_result_codes(opened, 1)
        handle = opened
        do {
            if reader {
                try execute("PRAGMA query_only=ON")
            } else {
                // busy_timeout first: switching to WAL takes a lock another process may hold.
                try execute("PRAGMA busy_timeout=5000")
                try execute("PRAGMA journal_mode=WAL")
                try execute("PRAGMA foreign_keys=ON")
                try execute(synchronous == .full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
                if let cacheKiB { try execute("PRAGMA cache_size=-\(cacheKiB)") }
            }
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
        sqlite3_wal_hook(handle, nil, nil)
        sqlite3_commit_hook(handle, nil, nil)
        commitCounts = nil
        checkpointer = nil
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
    func run(_ sql: String, _ values: [StoreValue] = []) throws(SQLiteError) -> Int {
        try withStatement(sql) { (statement) throws(SQLiteError) in
            try statement.bind(values)
            while try statement.step() {}
        }
        return changes
    }

    /// Runs a query and maps every result row.
    func query<Row>(
        _ sql: String, _ values: [StoreValue] = [], row: (SQLiteStatement) throws(SQLiteError) -> Row
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

    /// Rows changed by every INSERT, UPDATE and DELETE since the connection opened: a difference says
    /// whether statements in between wrote.
    var totalChanges: Int64 {
        handle.map { sqlite3_total_changes64($0) } ?? 0
    }

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    var inTransaction: Bool {
        handle.map { sqlite3_get_autocommit($0) == 0 } ?? false
    }

    /// Savepoints opened by ``transaction(_:)`` inside an enclosing transaction, for their names.
    private var savepointDepth = 0

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: the write lock is taken up front, so a read followed
    /// by a write cannot be overtaken by another connection. Any error rolls back. Inside an enclosing
    /// transaction (a group of ``SQLiteDatabase``) it is a savepoint instead: an error rolls back what
    /// `body` did, and the enclosing transaction goes on.
    func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        if inTransaction { return try savepoint(body) }
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

    private func savepoint<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "nested_\(savepointDepth)"
        try run("SAVEPOINT " + name)
        do {
            let result = try body()
            try run("RELEASE " + name)
            return result
        } catch {
            // Gone with the enclosing transaction if SQLite rolled that back; the caller sees it there.
            if inTransaction {
                try? execute("ROLLBACK TO " + name)
                try? execute("RELEASE " + name)
            }
            throw error
        }
    }

    /// Runs `body` with the `synchronous` mode `mode`, then restores the one the connection was opened
    /// with. Under `normal` a commit reaches the WAL file but is not synced by itself; the next synced
    /// commit's `fdatasync` of the WAL covers it (``SQLiteWriteDurability/unsynced``). Must be called
    /// outside a transaction: SQLite refuses to change the mode inside one.
    func withSynchronous<T>(
        _ mode: SQLiteSynchronous, _ body: () throws(SQLiteError) -> T
    ) throws(SQLiteError) -> T {
        guard mode != synchronous else { return try body() }
        try run(mode == .full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        let result = Result { () throws(SQLiteError) -> T in try body() }
        // Restored whatever `body` did; this fails only on a closed handle or an open transaction.
        try run(synchronous == .full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        return try result.get()
    }

    /// The checkpointer the WAL's growth is handed to, kept alive while its hook is installed.
    private var checkpointer: SQLiteCheckpointer?

    /// Hands the WAL's checkpoints to `checkpointer` (``SQLiteCheckpointer``) instead of running them inside
    /// the commit that crosses SQLite's threshold; `nil` goes back to SQLite's automatic checkpoint.
    func checkpoint(with checkpointer: SQLiteCheckpointer?) {
        guard let handle else { return }
        self.checkpointer = checkpointer
        guard let checkpointer else {
            sqlite3_wal_autocheckpoint(handle, 1_000)
            return
        }
        // Replaces the automatic checkpoint, which is itself a WAL hook.
        sqlite3_wal_hook(
            handle,
            { context, writer, schema, pages in
                guard let context else { return SQLITE_OK }
                return Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue()
                    .walGrew(to: pages, connection: writer, schema: schema)
            },
            Unmanaged.passUnretained(checkpointer).toOpaque())
    }

    /// Where commits are counted (``countCommits(into:)``), kept alive while the commit hook points at it.
    private var commitCounts: StoreCallCounts?

    /// Counts every transaction this connection commits that wrote (SQLite calls the commit hook for those
    /// only) into `counts`: a group, a call's own transaction, a statement committing by itself.
    func countCommits(into counts: StoreCallCounts) {
        commitCounts = counts
        installCommitHook()
    }

    private func installCommitHook() {
        guard let handle else { return }
        guard let commitCounts else {
            sqlite3_commit_hook(handle, nil, nil)
            return
        }
        sqlite3_commit_hook(
            handle,
            { context in
                guard let context else { return 0 }
                Unmanaged<StoreCallCounts>.fromOpaque(context).takeUnretainedValue().recordCommits()
                return 0
            },
            Unmanaged.passUnretained(commitCounts).toOpaque())
    }

    /// While `true`, SQLite turns every `COMMIT` into a rollback (`SQLITE_CONSTRAINT_COMMITHOOK`), as a
    /// failing device would fail it: for the tests of what a failed group commit answers.
    func vetoCommits(_ veto: Bool) {
        guard let handle else { return }
        if veto {
            sqlite3_commit_hook(handle, { _ in 1 }, nil)
        } else {
            installCommitHook()
        }
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
