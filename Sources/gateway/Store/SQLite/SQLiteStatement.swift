import CSQLite
import Foundation

/// A prepared statement, valid only inside ``SQLiteConnection/withStatement(_:_:)``, which finalizes it.
struct SQLiteStatement {
    /// SQLite copies bound bytes immediately (`SQLITE_TRANSIENT`); the C macro is a cast Swift cannot import.
    private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    private let handle: OpaquePointer
    private let connection: OpaquePointer

    init(handle: OpaquePointer, connection: OpaquePointer) {
        self.handle = handle
        self.connection = connection
    }

    /// Binds `values` to the parameters `?1`, `?2`, … in order.
    func bind(_ values: [StoreValue]) throws(SQLiteError) {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw SQLiteError(
                code: SQLITE_RANGE, message: "statement takes \(expected) parameters, \(values.count) were bound")
        }
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    private func bind(_ value: StoreValue, at index: Int32) throws(SQLiteError) {
        let code: Int32
        switch value {
        case .text(let text):
            var text = text
            code = text.withUTF8 { bytes in
                // A nil pointer would bind NULL, so the empty string is bound from a literal.
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite3_bind_text(handle, index, "", 0, Self.transient)
                }
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text64(handle, index, $0, UInt64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
                }
            }
        case .integer(let integer):
            code = sqlite3_bind_int64(handle, index, integer)
        case .real(let real):
            code = sqlite3_bind_double(handle, index, real)
        case .blob(let data):
            code = data.withUnsafeBytes { bytes in
                // A nil pointer would bind NULL; an empty blob must stay an empty blob.
                guard let base = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite3_bind_zeroblob(handle, index, 0)
                }
                return sqlite3_bind_blob64(handle, index, base, UInt64(bytes.count), Self.transient)
            }
        case .null:
            code = sqlite3_bind_null(handle, index)
        }
        guard code == SQLITE_OK else { throw SQLiteConnection.error(code, connection) }
    }

    /// Whether the statement has result columns (a query, or a write with `RETURNING`).
    var returnsRows: Bool { sqlite3_column_count(handle) > 0 }

    /// Advances to the next row; `false` once the statement is done.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteConnection.error(code, connection)
        }
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String? {
        guard !isNull(column), let bytes = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func int64(_ column: Int32) -> Int64? {
        isNull(column) ? nil : sqlite3_column_int64(handle, column)
    }

    func double(_ column: Int32) -> Double? {
        isNull(column) ? nil : sqlite3_column_double(handle, column)
    }

    func blob(_ column: Int32) -> Data? {
        guard !isNull(column) else { return nil }
        // SQLite returns a nil pointer for a zero-length blob.
        guard let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(handle, column)))
    }
}

/// A row of SQLite's, read where the statement stands.
extension SQLiteStatement: StoreRow {}
