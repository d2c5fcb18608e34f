import Crypto
import Foundation
import GatewayCore
import Testing
import _CryptoExtras

@testable import GatewayFirebase

/// The emulator's ID tokens are checked the way firebase-admin checks Firebase's (docs/vendors/firebase.md §5): the
/// signature against the published key, then the header and the claims. The key is read over the wire from
/// the emulator's JWK endpoint and the signature checked here with swift-crypto, not with the emulator's code.
@Suite("Firebase emulator ID tokens")
struct FirebaseIDTokenTests {
    struct JWK: Decodable {
        var kty: String
        var alg: String
        var use: String
        var kid: String
        var n: String
        var e: String
    }

    struct JWKSet: Decodable {
        var keys: [JWK]
    }

    static func base64URLDecode(_ text: some StringProtocol) throws -> Data {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return try #require(Data(base64Encoded: base64))
    }

    /// Signs in a fresh number and returns the ID token, the uid and the published key set.
    static func signIn(_ h: FirebaseHarness) async throws -> (token: String, localID: String, keys: JWKSet) {
        let started = try await h.start()
        let check = try await h.provider.check(FirebaseHarness.verification(started), code: try h.code())
        let response = try #require(await h.raw(.get, FirebaseWire.jwksPath, query: nil))
        #expect(response.status == .ok)
        let keys = try JSONDecoder().decode(JWKSet.self, from: response.body)
        return (
            try #require(check.tokens["idToken"]?.stringValue), try #require(check.tokens["localId"]?.stringValue), keys
        )
    }

    @Test("the ID token is an RS256 JWT whose signature verifies with the emulator's published key")
    func signatureVerifies() async throws {
        let h = try FirebaseHarness()
        let (token, _, keys) = try await Self.signIn(h)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)

        let header = try jsonObject(try Self.base64URLDecode(parts[0]))
        #expect(header["alg"] as? String == "RS256")
        let kid = try #require(header["kid"] as? String)
        let jwk = try #require(keys.keys.first { $0.kid == kid })
        #expect(jwk.kty == "RSA")
        #expect(jwk.alg == "RS256")

        let publicKey = try _RSA.Signing.PublicKey(
            n: try Self.base64URLDecode(jwk.n), e: try Self.base64URLDecode(jwk.e))
        #expect(publicKey.keySizeInBits == 2048)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try Self.base64URLDecode(parts[2]))
        let signedInput = Data("\(parts[0]).\(parts[1])".utf8)
        #expect(publicKey.isValidSignature(signature, for: signedInput, padding: .insecurePKCS1v1_5))

        var tampered = Data("\(parts[0]).".utf8)
        tampered.append(Data(parts[1].utf8.reversed()))
        #expect(!publicKey.isValidSignature(signature, for: tampered, padding: .insecurePKCS1v1_5))
    }

    @Test("the claims are Firebase's: issuer, audience, uid, phone, provider, one hour of validity")
    func claims() async throws {
        let h = try FirebaseHarness()
        let (token, localID, _) = try await Self.signIn(h)
        let payload = try jsonObject(try Self.base64URLDecode(token.split(separator: ".")[1]))
        let project = FirebaseSandbox.projectID
        let now = Int(h.clock.now.timeIntervalSince1970)

        #expect(payload["iss"] as? String == "https://securetoken.google.com/\(project)")
        #expect(payload["aud"] as? String == project)
        #expect(payload["sub"] as? String == localID)
        #expect(payload["user_id"] as? String == localID)
        #expect(payload["phone_number"] as? String == FirebaseHarness.number)
        #expect(payload["iat"] as? Int == now)
        #expect(payload["auth_time"] as? Int == now)
        #expect(payload["exp"] as? Int == now + 3600)
        let firebase = try #require(payload["firebase"] as? [String: Any])
        #expect(firebase["sign_in_provider"] as? String == "phone")
        let identities = try #require(firebase["identities"] as? [String: [String]])
        #expect(identities["phone"] == [FirebaseHarness.number])
    }

    @Test("two emulators sign with different keys, so a token only verifies against its own emulator's key")
    func keysDiffer() async throws {
        let first = try FirebaseHarness()
        let second = try FirebaseHarness()
        let (token, _, _) = try await Self.signIn(first)
        let (_, _, otherKeys) = try await Self.signIn(second)
        let jwk = try #require(otherKeys.keys.first)
        let parts = token.split(separator: ".")
        let publicKey = try _RSA.Signing.PublicKey(
            n: try Self.base64URLDecode(jwk.n), e: try Self.base64URLDecode(jwk.e))
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try Self.base64URLDecode(parts[2]))
        #expect(
            !publicKey.isValidSignature(
                signature, for: Data("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5))
    }
}
