import Dispatch

/// Owns a ``SQLiteConnection`` and runs every call on it one at a time.
///
/// A dedicated serial queue rather than a `Mutex`: SQLite calls do disk I/O and can wait up to
/// `busy_timeout` for another process, which must not pin a thread of the cooperative pool.
final class SQLiteDatabase: @unchecked Sendable {  // unchecked: `connection` is only ever touched on `queue`.
    private let connection: SQLiteConnection
    private let queue: DispatchQueue

    init(path: String, synchronous: SQLiteSynchronous) throws(SQLiteError) {
        connection = try SQLiteConnection(path: path, synchronous: synchronous)
        queue = DispatchQueue(label: "gateway.store.sqlite")
    }

    /// Runs `body` on the database queue; the calling task suspends instead of blocking.
    @discardableResult
    func perform<T: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T
    ) async throws(SQLiteError) -> T {
        let result: Result<T, SQLiteError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(SQLiteError) -> T in try body(self.connection) })
            }
        }
        return try result.get()
    }

    /// Runs `body` on the database queue and blocks until it is done: for set-up and synchronous callers.
    @discardableResult
    func performSync<T>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        let result = queue.sync { Result { () throws(SQLiteError) -> T in try body(connection) } }
        return try result.get()
    }

    /// Closes the file after the work already queued; later calls fail with ``SQLiteError/closed``.
    func close() {
        queue.sync { connection.close() }
    }
}
