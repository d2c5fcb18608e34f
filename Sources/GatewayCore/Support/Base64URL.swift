import Foundation

/// Base64 with the URL alphabet and no padding (RFC 7515 §2), as JWTs and WebAuthn-style keys use it.
///
/// Written byte by byte rather than from `base64EncodedString()` and `replacingOccurrences` calls, which on
/// Linux go through Foundation's string search and cost more than the ES256 signature of a verification
/// token itself (BENCHMARKS.md has the figure).
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The encoding of `bytes`, without `=` padding.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let chunk = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            out.append(alphabet[Int(chunk >> 18 & 0x3F)])
            out.append(alphabet[Int(chunk >> 12 & 0x3F)])
            if second != nil { out.append(alphabet[Int(chunk >> 6 & 0x3F)]) }
            if third != nil { out.append(alphabet[Int(chunk & 0x3F)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text` in the URL alphabet, padded or not; `nil` when it is not base64. `-` and `_` are
    /// read as `+` and `/`, so text in the standard alphabet decodes too, as `Data(base64Encoded:)` reads it.
    package static func decode(_ text: some StringProtocol) -> Data? {
        var standard: [UInt8] = []
        standard.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: standard.append(byte)
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(standard))
    }
}
