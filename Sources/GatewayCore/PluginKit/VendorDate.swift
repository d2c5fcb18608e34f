import Foundation
import HTTPTypes

/// The date forms vendors write and read.
public enum VendorDate {
    /// ISO 8601 in UTC with a `Z` and whole seconds (`2015-07-30T20:00:00Z`).
    /// Written here for the years 1600 to 9999, the same text as Foundation's `ISO8601FormatStyle` (whole
    /// seconds, the fraction dropped towards the past), which a start's answer pays for several times over
    /// otherwise: the style is built and runs a calendar for each date. Other years go to Foundation, which
    /// also writes dates before the Gregorian calendar's start (1582) in the Julian one.
    public static func iso8601(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate.rounded(.down)
        // 1600-01-01 and 9999-12-31T23:59:59 as seconds since 2001-01-01.
        guard seconds >= -12_654_403_200, seconds <= 252_423_993_599 else {
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
        }
        let (days, second) = floorDivision(Int64(seconds) + 978_307_200, 86_400)
        let (year, month, day) = civil(days: days)
        return String(unsafeUninitializedCapacity: 20) { out in
            func put(_ value: Int64, _ width: Int, at start: Int) {
                var rest = value
                for offset in stride(from: width - 1, through: 0, by: -1) {
                    out[start + offset] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                    rest /= 10
                }
            }
            put(year, 4, at: 0)
            out[4] = 0x2D
            put(month, 2, at: 5)
            out[7] = 0x2D
            put(day, 2, at: 8)
            out[10] = 0x54
            put(second / 3600, 2, at: 11)
            out[13] = 0x3A
            put(second / 60 % 60, 2, at: 14)
            out[16] = 0x3A
            put(second % 60, 2, at: 17)
            out[19] = 0x5A
            return 20
        }
    }

    /// `YYYY-MM-DDThh:mm:ssZ` exactly, the form vendors answer with, for the years 1600 to 9999 and fields in
    /// their ranges; `nil` for anything else, which ``parseISO8601(_:)`` then leaves to Foundation.
    package static func parseWholeSecondsUTC(_ text: String) -> Date? {
        let parsed = text.utf8.withContiguousStorageIfAvailable {
            bytes -> (Int64, Int64, Int64, Int64, Int64, Int64)? in
            guard bytes.count == 20, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54, bytes[13] == 0x3A,
                bytes[16] == 0x3A, bytes[19] == 0x5A
            else { return nil }
            func number(_ from: Int, _ count: Int) -> Int64? {
                var value: Int64 = 0
                for index in from..<from + count {
                    let byte = bytes[index]
                    guard (0x30...0x39).contains(byte) else { return nil }
                    value = value * 10 + Int64(byte - 0x30)
                }
                return value
            }
            guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
                let minute = number(14, 2), let second = number(17, 2)
            else { return nil }
            return (year, month, day, hour, minute, second)
        }
        guard case (let year, let month, let day, let hour, let minute, let second)?? = parsed else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays: Int64 =
            switch month {
            case 2: leap ? 29 : 28
            case 4, 6, 9, 11: 30
            default: 31
            }
        guard (1600...9999).contains(year), (1...12).contains(month), day >= 1, day <= monthDays, hour < 24,
            minute < 60, second < 60
        else { return nil }
        // A proleptic Gregorian date to days since 1970-01-01 (Howard Hinnant's days_from_civil).
        let marchYear = month <= 2 ? year - 1 : year
        let era = marchYear / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's civil_from_days), without a
    /// `Calendar`: for the date forms written on every call.
    package static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDivision(shifted, 146_097).quotient
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
        return (quotient, value - quotient * divisor)
    }

    /// Reads ISO 8601 with or without fractional seconds (any number of digits; Foundation reads three), with
    /// `Z` or an offset (`2026-01-02T03:04:05.123456+00:00`). `nil` when it is not one.
    public static func parseISO8601(_ text: String?) -> Date? {
        if let text, let date = parseWholeSecondsUTC(text) { return date }
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
