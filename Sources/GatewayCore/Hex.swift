/// Lowercase hexadecimal without `String(format:)`, which goes through Foundation's formatter for every
/// byte (issue 13: hashing the API key of each request spent more time formatting than hashing).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Two digits per byte.
    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Sixteen digits, zero-padded.
    public static func lowercase(_ value: UInt64) -> String {
        var out = [UInt8](repeating: 0, count: 16)
        var rest = value
        for index in stride(from: 15, through: 0, by: -1) {
            out[index] = digits[Int(rest & 0x0F)]
            rest >>= 4
        }
        return String(decoding: out, as: UTF8.self)
    }
}
