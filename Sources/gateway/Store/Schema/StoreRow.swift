import Foundation

/// A row read back from either store, by column index: what the row mappings (``RecordRows`` and the
/// others beside the statements) read, so SQLite and PostgreSQL share them.
protocol StoreRow {
    func isNull(_ column: Int32) -> Bool
    func text(_ column: Int32) -> String?
    func int64(_ column: Int32) -> Int64?
    func double(_ column: Int32) -> Double?
    func blob(_ column: Int32) -> Data?
}

extension StoreRow {
    func int(_ column: Int32) -> Int? { int64(column).map { Int($0) } }

    /// A `0`/`1` column; NULL reads as `false`.
    func flag(_ column: Int32) -> Bool { (int64(column) ?? 0) != 0 }

    func optionalDate(_ column: Int32) -> Date? { double(column).map(Date.init(timeIntervalSince1970:)) }

    /// A date column that must not be NULL; `what` names it in the error.
    func date(_ column: Int32, _ what: @autoclosure () -> String) throws(StoreError) -> Date {
        guard let seconds = double(column) else { throw StoreError.undecodableRow("\(what()) is NULL") }
        return Date(timeIntervalSince1970: seconds)
    }
}

/// A fault of the store's own making, not the database's: a stored row it cannot turn back into a value,
/// a value it cannot write, a schema newer than it knows. Logged, never shown to API clients (they get
/// `internal`, "storage failure").
struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    var message: String

    init(_ message: String) { self.message = message }

    var description: String { message }

    /// A stored row the store cannot turn back into a value.
    static func undecodableRow(_ message: String) -> StoreError { StoreError(message) }
}
