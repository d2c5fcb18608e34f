import Foundation

/// Lowercase hexadecimal without `String(format:)`, which goes through Foundation's formatter for every
/// byte, which costs more than the hashing it formats (the API key of each request is hashed).
package enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Two digits per byte, for bytes that are stored contiguously (digests, message authentication codes,
    /// `Data`, arrays): one pass over the buffer into the string's own storage. The `Sequence` overload
    /// below walks a digest through its iterator, one unspecialized call per byte.
    package static func lowercase(_ bytes: some ContiguousBytes & Sequence<UInt8>) -> String {
        let digits = table.utf8Start
        return bytes.withUnsafeBytes { raw in
            String(unsafeUninitializedCapacity: raw.count * 2) { out in
                var index = 0
                for byte in raw {
                    out[index] = digits[Int(byte >> 4)]
                    out[index + 1] = digits[Int(byte & 0x0F)]
                    index += 2
                }
                return index
            }
        }
    }

    /// The sixteen digits, in the binary's constant data.
    private static let table: StaticString = "0123456789abcdef"

    /// Two digits per byte.
    package static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Sixteen digits, zero-padded.
    package static func lowercase(_ value: UInt64) -> String {
        var out = [UInt8](repeating: 0, count: 16)
        var rest = value
        for index in stride(from: 15, through: 0, by: -1) {
            out[index] = digits[Int(rest & 0x0F)]
            rest >>= 4
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Thirty-two digits that sort by when they were made: the milliseconds since 1970 (48 bits, good until
    /// the year 10889), then 80 bits from the system's secure generator. For ids stored under B-tree
    /// indexes: a random id lands on a random page of each index, a time-ordered one next to the last.
    package static func timeOrdered(now: Date = Date()) -> String {
        var generator = SystemRandomNumberGenerator()
        let millis = UInt64(max(0, min(now.timeIntervalSince1970 * 1000, Double(UInt64(1) << 48 - 1))))
        let high = millis << 16 | (generator.next() as UInt64) & 0xFFFF
        return lowercase(high) + lowercase(generator.next() as UInt64)
    }
}
