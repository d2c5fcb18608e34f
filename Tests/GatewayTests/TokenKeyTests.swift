@preconcurrency import Crypto
import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import gateway

/// One signing key for every instance, and its rotation (docs/operations.md "Rotating the token signing key").
@Suite("Token signing keys shared by instances")
struct TokenKeyTests {
    static let record = VerificationRecord(
        id: VerificationService.newID(), destination: .email("a@example.com"), channel: .email, providerID: "twilio",
        providerReference: nil, maxAttempts: 5, createdAt: Date(timeIntervalSince1970: 1_900_000_000),
        updatedAt: Date(timeIntervalSince1970: 1_900_000_000), expiresAt: Date(timeIntervalSince1970: 1_900_000_600))

    static func jwks(_ signer: VerificationTokenSigner) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: JSONResponse.encode(signer.jwks)) as? [String: Any]
        return try #require(object?["keys"] as? [[String: Any]])
    }

    static func verifies(_ token: String, with signer: VerificationTokenSigner) throws -> Bool {
        try jwks(signer).contains { try VerificationAPITests.verify(token: token, jwk: $0) }
    }

    @Test("two instances loading one PEM serve the same JWKS, and each verifies the other's tokens")
    func sameKeySameJWKS() throws {
        let pem = P256.Signing.PrivateKey().pemRepresentation
        let directory = ScratchDirectories.make("token-keys")
        let a = try VerificationTokenSigner.load(pem: pem, file: directory.appendingPathComponent("a.pem"))
        let b = try VerificationTokenSigner.load(pem: pem, file: directory.appendingPathComponent("b.pem"))
        #expect(JSONResponse.encode(a.jwks) == JSONResponse.encode(b.jwks))
        let now = Date(timeIntervalSince1970: 1_900_000_000)
        let tokens = (0..<20).map { _ in a.sign(Self.record, at: now) }
        #expect(try tokens.filter { try Self.verifies($0, with: b) }.count == 20)
    }

    @Test("a rotation publishes the next key before it signs and the previous one after, each once")
    func rotation() throws {
        let old = P256.Signing.PrivateKey()
        let new = P256.Signing.PrivateKey()
        let now = Date(timeIntervalSince1970: 1_900_000_000)
        // Step 1: still signing with the old key, the new one published (a private or a public PEM).
        let before = VerificationTokenSigner(privateKey: old, verificationKeys: [new.publicKey, new.publicKey])
        let published = try Self.jwks(before).map { $0["kid"] as? String }
        #expect(published == [before.keyID, VerificationTokenSigner.keyID(new.publicKey)])
        // Step 2: signing with the new key, the old one kept until its tokens have expired.
        let after = try VerificationTokenSigner(
            privateKey: new, verificationKeys: [VerificationTokenSigner.publicKey(pem: old.pemRepresentation)])
        let oldToken = before.sign(Self.record, at: now)
        let newToken = after.sign(Self.record, at: now)
        #expect(try Self.verifies(oldToken, with: after))
        #expect(try Self.verifies(newToken, with: before))
        // Step 3: the old key dropped; its tokens no longer verify.
        let done = VerificationTokenSigner(privateKey: new)
        #expect(try Self.verifies(oldToken, with: done) == false)
        let parsed = try VerificationTokenSigner.publicKey(pem: new.publicKey.pemRepresentation)
        #expect(parsed.rawRepresentation == new.publicKey.rawRepresentation)
    }

    @Test("the configuration reads verification_keys_env, and names every problem with it")
    func configuration() throws {
        let pem = P256.Signing.PrivateKey().pemRepresentation
        let config = try GatewayConfiguration.parse(
            ["sandbox": true, "token": ["signing_key_env": "SIGN", "verification_keys_env": ["NEXT"]]],
            plugins: InstalledPlugins.all, environment: ["SIGN": pem, "NEXT": pem])
        #expect(config.tokenSigningKeyPEM == pem && config.tokenVerificationKeyPEMs == [pem])
        let error = #expect(throws: ConfigurationError.self) {
            try GatewayConfiguration.parse(
                ["sandbox": true, "token": ["signing_key_env": "SIGN", "verification_keys_env": ["MISSING", 3]]],
                plugins: InstalledPlugins.all, environment: ["SIGN": pem])
        }
        #expect(error?.problems.contains("token: environment variable MISSING is not set") == true)
        #expect(error?.problems.contains("token: `verification_keys_env` must list variable names") == true)
    }

    @Test("a gateway on a shared store refuses to start without a shared signing key")
    func sharedStoreNeedsAKey() async throws {
        var options = GatewayHarness().options()
        options.storeURL = "postgres://gateway@127.0.0.1:1/gateway"
        let error = await #expect(throws: ConfigurationError.self) { _ = try await buildApplication(options) }
        #expect(error?.problems.first?.contains("signing_key_env") == true)
        #expect(error?.problems.first?.contains("GATEWAY_TOKEN_SIGNING_KEY") == true)
    }

    @Test("without token.signing_key_env the key comes from GATEWAY_TOKEN_SIGNING_KEY; the file's variable wins")
    func defaultSigningKeyVariable() throws {
        let pem = P256.Signing.PrivateKey().pemRepresentation
        let other = P256.Signing.PrivateKey().pemRepresentation
        var options = GatewayHarness().options()
        options.environment["GATEWAY_TOKEN_SIGNING_KEY"] = pem
        #expect(try GatewayConfiguration.serving(options).tokenSigningKeyPEM == pem)
        options.environment["GATEWAY_TOKEN_SIGNING_KEY"] = ""
        #expect(try GatewayConfiguration.serving(options).tokenSigningKeyPEM == nil)

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString).yaml")
        try "sandbox: true\ntoken: {signing_key_env: SIGN}\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        options.configFile = file
        options.environment["SIGN"] = other
        options.environment["GATEWAY_TOKEN_SIGNING_KEY"] = pem
        #expect(try GatewayConfiguration.serving(options).tokenSigningKeyPEM == other)
    }
}
