import Foundation

/// A value bound to a statement parameter.
enum SQLiteValue: Sendable, Equatable {
    case text(String)
    case integer(Int64)
    case real(Double)
    case blob(Data)
    case null

    static func optionalText(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
    static func int(_ value: Int) -> SQLiteValue { .integer(Int64(value)) }
    /// Dates are stored as Unix seconds.
    static func date(_ value: Date) -> SQLiteValue { .real(value.timeIntervalSince1970) }
}
