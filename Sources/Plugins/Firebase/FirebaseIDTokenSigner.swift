import Crypto
import Foundation
import GatewayCore
import _CryptoExtras

/// Signs the emulator's Firebase ID tokens as Google does: JWTs with `alg: RS256` and a `kid`, verifiable
/// with the key the emulator publishes in JWK form (firebase.md §5, [ADMIN] `_token_gen.py`).
///
/// The Auth Emulator itself issues unsigned tokens (firebase.md §4); this sandbox signs them with a 2048-bit
/// RSA key made on first use, so code that verifies real Firebase tokens can be pointed at it unchanged
/// except for the key URL. The key lives only in memory: a restarted sandbox has a new one.
struct FirebaseIDTokenSigner: Sendable {
    /// The claims of a phone sign-in's ID token.
    struct Claims: Codable, Sendable, Equatable {
        var iss: String
        var aud: String
        var authTime: Int
        var userID: String
        var sub: String
        var iat: Int
        var exp: Int
        var phoneNumber: String
        var firebase: FirebaseClaim

        struct FirebaseClaim: Codable, Sendable, Equatable {
            var identities: [String: [String]]
            var signInProvider: String

            enum CodingKeys: String, CodingKey {
                case identities
                case signInProvider = "sign_in_provider"
            }
        }

        enum CodingKeys: String, CodingKey {
            case iss, aud, sub, iat, exp, firebase
            case authTime = "auth_time"
            case userID = "user_id"
            case phoneNumber = "phone_number"
        }

        /// The claims Firebase puts in a phone sign-in's token: issuer and audience from the project,
        /// `sub` = `user_id` = the uid, one hour of validity.
        init(projectID: String, localID: String, phoneNumber: String, issuedAt: Date) {
            let now = Int(issuedAt.timeIntervalSince1970)
            iss = "https://securetoken.google.com/\(projectID)"
            aud = projectID
            authTime = now
            userID = localID
            sub = localID
            iat = now
            exp = now + FirebaseIDTokenSigner.lifetime
            self.phoneNumber = phoneNumber
            firebase = FirebaseClaim(identities: ["phone": [phoneNumber]], signInProvider: "phone")
        }
    }

    struct Header: Codable, Sendable, Equatable {
        var alg: String
        var kid: String
        var typ: String
    }

    /// One key of the published set, as `https://www.googleapis.com/service_accounts/v1/jwk/…` lists them.
    struct JWK: Codable, Sendable, Equatable {
        var kty: String
        var alg: String
        var use: String
        var kid: String
        var n: String
        var e: String
    }

    struct JWKSet: Codable, Sendable, Equatable {
        var keys: [JWK]
    }

    /// Seconds an ID token is valid, as Firebase's (`expiresIn` "3600").
    static let lifetime = 3600

    let privateKey: _RSA.Signing.PrivateKey
    /// The first 20 bytes of the SHA-256 of the public key, in hex: stable for the key, 40 characters like
    /// Google's key ids.
    let keyID: String
    let keySet: JWKSet

    /// Makes a new 2048-bit key.
    init() throws {
        privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let digest = SHA256.hash(data: privateKey.publicKey.derRepresentation)
        keyID = digest.prefix(20).map { String(format: "%02x", $0) }.joined()
        let primitives = try privateKey.publicKey.getKeyPrimitives()
        keySet = JWKSet(keys: [
            JWK(
                kty: "RSA", alg: "RS256", use: "sig", kid: keyID, n: Self.base64URL(primitives.modulus),
                e: Self.base64URL(primitives.publicExponent))
        ])
    }

    /// A compact JWS: base64url(header).base64url(claims).base64url(RSASSA-PKCS1-v1_5 SHA-256 signature).
    func sign(_ claims: Claims) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(Header(alg: "RS256", kid: keyID, typ: "JWT"))
        let payload = try encoder.encode(claims)
        let input = Self.base64URL(header) + "." + Self.base64URL(payload)
        // RS256 is PKCS#1 v1.5 padding over SHA-256 (RFC 7518 §3.3); swift-crypto names it "insecure"
        // only to steer encryption users away from it.
        let signature = try privateKey.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + Self.base64URL(signature.rawRepresentation)
    }

    /// Base64 with the URL alphabet and no padding (RFC 7515 §2).
    static func base64URL(_ data: Data) -> String {
        Base64URL.encode(data)
    }
}
