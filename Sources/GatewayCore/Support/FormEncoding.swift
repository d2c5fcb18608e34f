import Foundation

/// `application/x-www-form-urlencoded` bodies, as Twilio and other vendors take them.
package enum FormEncoding {

    /// Encodes pairs in order.
    package static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    /// Percent-encodes every UTF-8 byte but ASCII letters, digits and `-._~` (RFC 3986's unreserved set),
    /// with upper-case hex digits, as `addingPercentEncoding(withAllowedCharacters:)` did with that set, by
    /// bytes rather than through Foundation (a start encodes its vendor form on every call).
    package static func escape(_ value: String) -> String {
        let utf8 = value.utf8
        guard utf8.contains(where: { !isUnreserved($0) }) else { return value }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 8)
        for byte in utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(upperHex[Int(byte >> 4)])
                bytes.append(upperHex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let upperHex = Array("0123456789ABCDEF".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// Decodes a form body or query string; `+` is a space. The last value of a repeated key wins.
    package static func decode(_ body: String) -> [String: String] {
        var result: [String: String] = [:]
        for (key, value) in decodePairs(body) { result[key] = value }
        return result
    }

    /// Decodes a form body or query string into its pairs, in order, repeated keys kept (for a reader that
    /// refuses them, or takes them as a list). Split by bytes, not characters: `&` and `=` are ASCII, and a
    /// Twilio create decodes its form on every call.
    package static func decodePairs(_ body: String) -> [(key: String, value: String)] {
        body.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { pair in
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else {
                return (unescape(String(decoding: pair, as: UTF8.self)), "")
            }
            return (
                unescape(String(decoding: pair[..<equals], as: UTF8.self)),
                unescape(String(decoding: pair[pair.index(after: equals)...], as: UTF8.self))
            )
        }
    }

    static func unescape(_ value: String) -> String {
        if let decoded = fastUnescape(value) { return decoded }
        let spaced = value.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// ``unescape(_:)`` without Foundation for the usual case (`+` and `%XX` escapes of printable ASCII or
    /// of well-formed UTF-8): the same result; `nil` for anything else (a malformed or control-character
    /// escape, invalid UTF-8), which Foundation then decodes as before.
    static func fastUnescape(_ value: String) -> String? {
        let utf8 = value.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return value }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            index = utf8.index(after: index)
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index != utf8.endIndex, let high = hexValue(utf8[index]) else { return nil }
                index = utf8.index(after: index)
                guard index != utf8.endIndex, let low = hexValue(utf8[index]) else { return nil }
                index = utf8.index(after: index)
                let decoded = high << 4 | low
                guard decoded >= 0x20, decoded != 0x7F else { return nil }
                bytes.append(decoded)
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
