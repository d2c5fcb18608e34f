import GatewayCore
import GatewayKitCrypto
import Testing

@Suite struct OwnCodeFormatTests {
    @Test func bytesPickCharactersByRejection() {
        // 250...255 are the partial last run of ten: passed over, so every digit is equally likely.
        #expect(OwnCodeFormat(length: 6).code(from: [250, 255, 1, 2, 3, 4, 5, 16]) == "123456")
        #expect(OwnCodeFormat(length: 6).code(from: [1, 2, 3]) == nil)
        let alphanumeric = OwnCodeFormat(length: 4, alphabet: .alphanumeric)
        // 31 characters: 248...255 are passed over.
        #expect(alphanumeric.code(from: [248, 0, 30, 31, 62]) == "2Z22")
    }

    @Test func lengthIsClampedToFourThroughTen() {
        #expect(OwnCodeFormat(length: 2).length == 4)
        #expect(OwnCodeFormat(length: 12).length == 10)
        #expect(OwnCodeFormat(length: 8).length == 8)
    }

    @Test func alphanumericHasNoLookAlikes() {
        let characters = OwnCodeFormat.Alphabet.alphanumeric.characters
        #expect(characters.count == 31)
        for lookAlike in "0O1IL" { #expect(!characters.contains(lookAlike)) }
    }

    @Test func enteredCodesAreNormalized() {
        #expect(OwnCodeFormat(length: 6).normalized("123 456") == "123456")
        #expect(OwnCodeFormat(length: 6).normalized("123-456") == "123456")
        #expect(OwnCodeFormat(length: 6).normalized("12345") == nil)
        #expect(OwnCodeFormat(length: 6).normalized("12345x") == nil)
        #expect(OwnCodeFormat(length: 4, alphabet: .alphanumeric).normalized("ab7z") == "AB7Z")
        #expect(OwnCodeFormat(length: 4, alphabet: .alphanumeric).normalized("AB0Z") == nil)
    }
}

@Suite struct OwnCodeKeyTests {
    let key = HMACOwnCodeKey(secret: Array("a secret of thirty-two bytes or more, for tests".utf8))!

    @Test func shortSecretsAreRefused() {
        #expect(HMACOwnCodeKey(secret: [UInt8](repeating: 7, count: 31)) == nil)
        #expect(HMACOwnCodeKey(secret: [UInt8](repeating: 7, count: 32)) != nil)
    }

    @Test func aSeedStandsForOneCode() {
        let seed: [UInt8] = Array(0..<16)
        let code = key.code(seed: seed, format: .standard)
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        #expect(key.code(seed: seed, format: .standard) == code)
        let other = HMACOwnCodeKey(secret: Array("another secret of thirty-two bytes, for tests".utf8))!
        let codes = (0..<20).map { seedByte in
            other.code(seed: [UInt8](repeating: seedByte, count: 16), format: .standard)
        }
        #expect(Set(codes).count > 15, "20 seeds under one key give (nearly) 20 codes")
    }

    @Test func digestIsBoundToTheSeedAndComparesTrue() {
        let first: [UInt8] = Array(0..<16)
        let second: [UInt8] = Array(16..<32)
        #expect(key.digest(code: "123456", seed: first) != key.digest(code: "123456", seed: second))
        let stored = key.digest(code: "123456", seed: first)
        #expect(key.matches("123456", seed: first, stored: stored))
        #expect(!key.matches("123457", seed: first, stored: stored))
        #expect(!key.matches("123456", seed: second, stored: stored))
        #expect(!key.matches("123456", seed: first, stored: Array(stored.dropLast())))
    }

    /// Ten thousand derived codes from counted seeds (deterministic: HMAC of fixed inputs): each digit of each
    /// position within 20% of its expected count.
    @Test func derivedDigitsAreUniform() {
        var counts = [[Int]](repeating: [Int](repeating: 0, count: 10), count: 6)
        for index in 0..<10_000 {
            let seed = withUnsafeBytes(of: UInt64(index).littleEndian, Array.init) + [UInt8](repeating: 0, count: 8)
            for (position, digit) in key.code(seed: seed, format: .standard).enumerated() {
                counts[position][digit.wholeNumberValue!] += 1
            }
        }
        for position in counts { for count in position { #expect((800...1200).contains(count)) } }
    }
}
