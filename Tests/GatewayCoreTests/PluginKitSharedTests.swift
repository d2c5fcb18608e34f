import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@Suite("Plugin kit: shapes, JWT keys, snake_case JSON, emulator bodies")
struct PluginKitSharedTests {
    @Test("a token is ASCII letters, digits and the given extras, within its length; anything else is not kept")
    func tokens() {
        #expect(ASCIIText.isToken("IDAAS.SDK.LOGIN.1003", extra: "._"))
        #expect(!ASCIIText.isToken("IDAAS.SDK.LOGIN.1003"))
        #expect(!ASCIIText.isToken(""))
        #expect(!ASCIIText.isToken(String(repeating: "A", count: 65)))
        #expect(ASCIIText.isToken("abc", length: 2...3) && !ASCIIText.isToken("abcd", length: 2...3))
        #expect(!ASCIIText.isToken("é1", extra: "_"), "a non-ASCII letter is not a token's")
        #expect(ASCIIText.token("keyInvalid", extra: "_") == "keyInvalid")
        #expect(ASCIIText.token("API key not valid +16505550100", extra: "_") == nil)
        #expect(ASCIIText.token(nil) == nil)
    }

    @Test("printable ASCII: space to tilde within the limit; cleaning drops the rest, cuts and trims")
    func printable() {
        #expect(ASCIIText.isPrintable("Mozilla/5.0 (iPhone)", max: 100))
        #expect(!ASCIIText.isPrintable("a b", max: 100, spaces: false))
        #expect(!ASCIIText.isPrintable("tab\there", max: 100))
        #expect(!ASCIIText.isPrintable("abcd", max: 3))
        #expect(ASCIIText.printable("  caf\u{E9}\u{0}\n ok  ", max: 100) == "caf ok")
        #expect(ASCIIText.printable(String(repeating: "x", count: 300), max: 256).count == 256)
    }

    @Test(
        "language tags: a 2-3 letter language and optional subtags",
        arguments: [
            ("zh", true), ("en", true), ("zh-Hans", true), ("es-419", true), ("e", false), ("engl", false),
            ("zh-", false), ("中文", false), ("zh_CN", false),
        ])
    func languageTags(_ value: String, _ valid: Bool) {
        #expect(ASCIIText.isLanguageTag(value) == valid)
    }

    @Test("an RS256 key in JWK form; a set finds the key a kid names, or its only RSA signing key without one")
    func keys() throws {
        let key = JWK.rs256(modulus: [0xFF, 0x01], exponent: [0x01, 0x00, 0x01], kid: "k1")
        #expect(key == JWK(kty: "RSA", alg: "RS256", use: "sig", kid: "k1", n: "_wE", e: "AQAB"))
        let encryption = JWK(kty: "RSA", use: "enc", kid: "k2", n: "AQ", e: "AQAB")
        let set = JWKSet(keys: [key, encryption, JWK(kty: "EC", kid: "k3")])
        #expect(set.rsaSigningKey(kid: "k1") == key)
        #expect(set.rsaSigningKey(kid: "k2") == nil, "an encryption key never checks a signature")
        #expect(set.rsaSigningKey(kid: "k3") == nil && set.rsaSigningKey(kid: "other") == nil)
        #expect(set.rsaSigningKey(kid: nil) == key)
        #expect(JWKSet(keys: [key, JWK(kty: "RSA", kid: "k4")]).rsaSigningKey(kid: nil) == nil, "which one?")
        let decoded = try JSONDecoder().decode(JWKSet.self, from: Data(#"{"keys":[{"kty":"RSA","kid":"a"}]}"#.utf8))
        #expect(decoded.keys == [JWK(kty: "RSA", kid: "a")])
    }

    @Test("a JWT audience reads a string or an array, and writes one value as a string")
    func audience() throws {
        let one = try JSONDecoder().decode(JWTAudience.self, from: Data(#""client""#.utf8))
        let many = try JSONDecoder().decode(JWTAudience.self, from: Data(#"["a","b"]"#.utf8))
        #expect(one.values == ["client"] && many.values == ["a", "b"])
        #expect(String(decoding: try JSONEncoder().encode(one), as: UTF8.self) == #""client""#)
        #expect(String(decoding: try JSONEncoder().encode(many), as: UTF8.self) == #"["a","b"]"#)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(JWTAudience.self, from: Data("42".utf8)) }
    }

    struct Body: Codable, Equatable {
        var captchaToken: String?
        var verifyCode: String?
        var url: String?
    }

    @Test("snake_case bodies: written with sorted keys and plain slashes, read back; a bad 2xx body is malformed")
    func snakeCase() throws {
        let client = VendorHTTPClient(
            vendor: "Acme",
            context: ProviderContext(
                providerID: "acme", settings: [:], transport: StubTransport.failing(.timeout), clock: SystemClock(),
                logger: .quiet),
            baseURL: "https://api.acme.test")
        let body = Body(captchaToken: "t", verifyCode: "123456", url: "https://a/b")
        let data = try client.snakeCaseJSON(body)
        #expect(
            String(decoding: data, as: UTF8.self)
                == #"{"captcha_token":"t","url":"https://a/b","verify_code":"123456"}"#)
        let operation = VendorOperation("login")
        let good = TransportResponse(status: .ok, headerFields: [:], body: data)
        #expect(try client.decodeSnakeCase(Body.self, from: good, operation: operation) == body)
        let bad = TransportResponse(status: .ok, headerFields: [:], body: Data("not json".utf8))
        let error = expectGatewayError(.providerError) {
            try client.decodeSnakeCase(Body.self, from: bad, operation: operation)
        }
        #expect(error?.vendor?.httpStatus == 200)
    }

    @Test("an emulator reads a JSON body with the vendor's decoder, or nil")
    func emulatorBodies() {
        func request(_ body: String) -> EmulatorRequest {
            EmulatorRequest(method: .post, path: "/x", query: nil, headerFields: [:], body: Data(body.utf8))
        }
        #expect(request(#"{"captcha_token":"t"}"#).json(Body.self, decoder: SnakeCaseJSON.decoder)?.captchaToken == "t")
        #expect(request(#"{"captcha_token":"t"}"#).json(Body.self)?.captchaToken == nil)
        #expect(request(#"{"captchaToken":"t"}"#).json(Body.self)?.captchaToken == "t")
        #expect(request("{").json(Body.self) == nil)
    }

    @Test("an emulator's random values: codes of digits with their leading zeros, hex tokens, all different")
    func randomValues() {
        let codes = (0..<2_000).map { _ in EmulatorRandom.code() }
        #expect(codes.allSatisfy { $0.count == 6 && $0.allSatisfy(\.isNumber) })
        #expect(codes.contains { $0.hasPrefix("0") }, "1 in 10 codes starts with 0: a lost leading zero shows")
        #expect(Set(codes).count > 1_900)
        #expect(EmulatorRandom.code(digits: 4).count == 4)
        let token = EmulatorRandom.hex(bytes: 16)
        #expect(token.count == 32 && token.allSatisfy(\.isHexDigit) && token == token.lowercased())
        #expect(EmulatorRandom.hex(bytes: 16) != token)
    }
}
