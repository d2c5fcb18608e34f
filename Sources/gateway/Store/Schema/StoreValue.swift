import Foundation

/// A value bound to a statement parameter, in either store: the column types of the one schema
/// (``StoreSchema``). Dates are Unix seconds in a `REAL` / `DOUBLE PRECISION` column; maps and lists are
/// JSON text (``StoreJSON``); flags are integers 0 and 1.
enum StoreValue: Sendable, Equatable {
    case text(String)
    case integer(Int64)
    case real(Double)
    case blob(Data)
    case null

    static func optionalText(_ value: String?) -> StoreValue { value.map { .text($0) } ?? .null }
    static func int(_ value: Int) -> StoreValue { .integer(Int64(value)) }
    static func optionalInt(_ value: Int?) -> StoreValue { value.map(int) ?? .null }
    static func flag(_ value: Bool) -> StoreValue { .integer(value ? 1 : 0) }
    /// Dates are stored as Unix seconds.
    static func date(_ value: Date) -> StoreValue { .real(value.timeIntervalSince1970) }
    static func optionalDate(_ value: Date?) -> StoreValue { value.map(date) ?? .null }
}
