import Foundation
import GatewayCore
import Testing

@Suite("Base64URL")
struct Base64URLTests {
    @Test("RFC 4648's test vectors, in the URL alphabet without padding")
    func vectors() {
        let vectors = [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Data(plain.utf8))
        }
        // The two letters that differ from the standard alphabet: 0xFB 0xFF is "+/8=" there.
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode("-_8") == Data([0xFB, 0xFF]))
    }

    @Test("every length and byte agrees with Foundation's base64 with the URL alphabet swapped in")
    func agreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let foundation = Data(bytes).base64EncodedString()
                .map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }.filter { $0 != "=" }
            let encoded = Base64URL.encode(bytes)
            #expect(encoded == String(foundation))
            #expect(Base64URL.decode(encoded) == Data(bytes))
            #expect(Base64URL.decode(encoded[...]) == Data(bytes))
        }
    }

    @Test("text that is not base64 decodes to nil")
    func rejects() {
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("ab!c") == nil)
        #expect(Base64URL.decode("Zm9v YmFy") == nil)
    }
}
