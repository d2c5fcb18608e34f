/// A hash that is the same in every process, on every machine, in every version: FNV-1a over the UTF-8
/// bytes, then SplitMix64's finalizer to spread the bits. Swift's `Hasher` is seeded per process and
/// must never decide anything that has to be stable (experiment arms, simulated delivery).
public enum StableHash {
    /// 64 bits from the parts, each followed by a separator byte so `("ab", "c")` ≠ `("a", "bc")`.
    public static func hash(_ parts: [String]) -> UInt64 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for part in parts {
            for byte in part.utf8 {
                value ^= UInt64(byte)
                value = value &* 0x0000_0100_0000_01B3
            }
            value ^= 0x1F
            value = value &* 0x0000_0100_0000_01B3
        }
        value ^= value >> 30
        value = value &* 0xBF58_476D_1CE4_E5B9
        value ^= value >> 27
        value = value &* 0x94D0_49BB_1331_11EB
        value ^= value >> 31
        return value
    }

    /// A number in the open interval (0, 1), uniform over the hash's top 53 bits.
    public static func unit(_ parts: [String]) -> Double {
        (Double(hash(parts) >> 11) + 0.5) / 9_007_199_254_740_992.0
    }
}
