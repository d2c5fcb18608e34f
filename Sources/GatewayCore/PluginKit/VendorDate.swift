import Foundation
import HTTPTypes

/// The date forms vendors write and read.
public enum VendorDate {
    /// ISO 8601 in UTC with a `Z` and whole seconds (`2015-07-30T20:00:00Z`).
    public static func iso8601(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }

    /// Reads ISO 8601 with or without fractional seconds (any number of digits; Foundation reads three), with
    /// `Z` or an offset (`2026-01-02T03:04:05.123456+00:00`). `nil` when it is not one.
    public static func parseISO8601(_ text: String?) -> Date? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let date = try? Date(trimmed, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: false)) {
            return date
        }
        var shortened = trimmed
        if let dot = trimmed.firstIndex(of: ".") {
            let fraction = trimmed[trimmed.index(after: dot)...].prefix { $0.isNumber }
            shortened = String(trimmed[...dot]) + fraction.prefix(3) + trimmed[fraction.endIndex...]
        }
        return try? Date(shortened, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// `YYYY-MM-DD` `separator` `hh:mm:ss`, with `.SSS` when `milliseconds`, in UTC without a zone designator.
    public static func utc(_ date: Date, separator: String = "T", milliseconds: Bool = false) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        func pad(_ value: Int?, _ width: Int = 2) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let time = "\(pad(parts.hour)):\(pad(parts.minute)):\(pad(parts.second))"
        let fraction = milliseconds ? "." + pad((parts.nanosecond ?? 0) / 1_000_000, 3) : ""
        return "\(pad(parts.year, 4))-\(pad(parts.month))-\(pad(parts.day))" + separator + time + fraction
    }
}
