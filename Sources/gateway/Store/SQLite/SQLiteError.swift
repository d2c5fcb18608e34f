import CSQLite

/// A failure reported by SQLite (or by the store while reading a row back).
///
/// It carries SQLite's result code and message for the logs. It never reaches API clients: the store turns
/// it into `GatewayError(.internal, "storage failure")`.
struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SQLite's (extended) result code, `SQLITE_MISMATCH` for a row the store cannot decode.
    var code: Int32
    var message: String

    init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// The primary result code (`SQLITE_CONSTRAINT` for `SQLITE_CONSTRAINT_PRIMARYKEY`, …).
    var primaryCode: Int32 { code & 0xFF }

    var isConstraintViolation: Bool { primaryCode == SQLITE_CONSTRAINT }

    var description: String { "sqlite error \(code): \(message)" }

    /// A stored row the store cannot turn back into a value.
    static func undecodableRow(_ message: String) -> SQLiteError {
        SQLiteError(code: SQLITE_MISMATCH, message: message)
    }

    static let closed = SQLiteError(code: SQLITE_MISUSE, message: "the database connection is closed")
}
