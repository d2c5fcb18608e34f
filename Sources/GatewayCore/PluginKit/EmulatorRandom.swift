/// Random values an emulator hands out as its vendor does, from the system's secure generator: the codes it
/// "sends" and the hex tokens and ids it answers with.
public enum EmulatorRandom {
    /// `digits` random decimal digits, leading zeros kept (`042917`).
    public static func code(digits: Int = 6) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<digits).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
    }

    /// `bytes` random bytes in lowercase hex (a 16-byte token is 32 digits).
    public static func hex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.lowercase((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
