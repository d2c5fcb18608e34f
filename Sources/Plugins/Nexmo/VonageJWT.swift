import Crypto
import Foundation
import GatewayCore
import GatewayKitCrypto
import _CryptoExtras

/// The two JWTs of Vonage Verify v2:
///
/// * the **application JWT** the gateway sends as `Authorization: Bearer …` (RS256 with the application's
///   private key; claims `application_id`, `iat`, `exp`, `jti`), and
/// * the **signed callback**: Vonage puts `Authorization: Bearer …` on its webhooks, an HS256 JWT keyed
///   with the account's signature secret, whose `payload_hash` is the SHA-256 of the body (Vonage's
///   "signed webhooks"; docs/vendors/vonage.md does not cover them, see the plugin's design note).
enum VonageJWT {
    struct ApplicationClaims: Codable, Sendable, Equatable {
        var applicationID: String
        var iat: Int
        var exp: Int
        var jti: String

        enum CodingKeys: String, CodingKey {
            case iat, exp, jti
            case applicationID = "application_id"
        }
    }

    struct CallbackClaims: Codable, Sendable, Equatable {
        var iat: Int
        var jti: String
        var iss: String
        var payloadHash: String
        var apiKey: String?
        var applicationID: String?

        enum CodingKeys: String, CodingKey {
            case iat, jti, iss
            case payloadHash = "payload_hash"
            case apiKey = "api_key"
            case applicationID = "application_id"
        }
    }

    /// How long an application JWT lives, and how far a callback's `iat` may be from now.
    static let lifetime = 900
    static let callbackSkew: TimeInterval = 300

    static func isUsablePrivateKey(_ pem: String) -> Bool {
        (try? _RSA.Signing.PrivateKey(pemRepresentation: pem)) != nil
    }

    static func applicationToken(applicationID: String, privateKeyPEM: String, now: Date) throws -> String {
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        let iat = Int(now.timeIntervalSince1970)
        let claims = ApplicationClaims(
            applicationID: applicationID, iat: iat, exp: iat + lifetime, jti: UUID().uuidString.lowercased())
        return try JWS.sign(claims, with: .rs256(signingWith: key))
    }

    /// The claims of an RS256 application JWT signed by `publicKey`, valid at `now`; `nil` otherwise.
    static func verifyApplicationToken(_ token: String, publicKey: _RSA.Signing.PublicKey, now: Date)
        -> ApplicationClaims?
    {
        guard let jws = JWS.parse(token), jws.isSigned(by: .rs256(verifyingWith: publicKey)),
            let claims = jws.claims(ApplicationClaims.self)
        else { return nil }
        let seconds = Int(now.timeIntervalSince1970)
        guard claims.exp > seconds, claims.iat <= seconds + Int(callbackSkew) else { return nil }
        return claims
    }

    static func payloadHash(_ body: Data) -> String { Hex.lowercase(SHA256.hash(data: body)) }

    /// The `Authorization` value Vonage puts on a callback with `body`.
    static func signCallback(body: Data, secret: String, apiKey: String?, applicationID: String?, now: Date) throws
        -> String
    {
        let claims = CallbackClaims(
            iat: Int(now.timeIntervalSince1970), jti: UUID().uuidString.lowercased(), iss: "Vonage",
            payloadHash: payloadHash(body), apiKey: apiKey, applicationID: applicationID)
        return "Bearer " + (try JWS.sign(claims, with: .hs256(secret: Data(secret.utf8))))
    }

    /// Why a callback's `Authorization` is not Vonage's signature over `body`, or `nil` when it is.
    static func callbackProblem(authorization: String?, body: Data, secret: String, now: Date) -> String? {
        guard let token = VendorHTTPClient.bearerToken(authorization) else { return "no bearer token" }
        guard let jws = JWS.parse(token), jws.algorithm == "HS256" else { return "not an HS256 JWT" }
        guard jws.isSigned(by: .hs256(secret: Data(secret.utf8))) else { return "bad signature" }
        guard let claims = jws.claims(CallbackClaims.self) else { return "unreadable claims" }
        guard claims.payloadHash.lowercased() == payloadHash(body) else {
            return "payload_hash does not match the body"
        }
        guard abs(now.timeIntervalSince1970 - TimeInterval(claims.iat)) <= callbackSkew else { return "stale iat" }
        return nil
    }
}
