import Crypto
import Foundation
import GatewayCore
import _CryptoExtras

/// The two JWTs of Vonage Verify v2:
///
/// * the **application JWT** the gateway sends as `Authorization: Bearer …` (RS256 with the application's
///   private key; claims `application_id`, `iat`, `exp`, `jti`), and
/// * the **signed callback**: Vonage puts `Authorization: Bearer …` on its webhooks, an HS256 JWT keyed
///   with the account's signature secret, whose `payload_hash` is the SHA-256 of the body (Vonage's
///   "signed webhooks"; vonage.md does not cover them, see the plugin's design note).
enum VonageJWT {
    struct Header: Codable, Sendable, Equatable {
        var alg: String
        var typ: String
    }

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

    // MARK: RS256 application JWT

    static func isUsablePrivateKey(_ pem: String) -> Bool {
        (try? _RSA.Signing.PrivateKey(pemRepresentation: pem)) != nil
    }

    static func applicationToken(applicationID: String, privateKeyPEM: String, now: Date) throws -> String {
        let key = try _RSA.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        let iat = Int(now.timeIntervalSince1970)
        let claims = ApplicationClaims(
            applicationID: applicationID, iat: iat, exp: iat + lifetime, jti: UUID().uuidString.lowercased())
        let input = try signingInput(Header(alg: "RS256", typ: "JWT"), claims)
        // RS256 is PKCS#1 v1.5 over SHA-256 (RFC 7518 §3.3).
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// The claims of an RS256 application JWT signed by `publicKey`, valid at `now`; `nil` otherwise.
    static func verifyApplicationToken(_ token: String, publicKey: _RSA.Signing.PublicKey, now: Date)
        -> ApplicationClaims?
    {
        guard let parts = split(token), let header = decode(Header.self, parts.header), header.alg == "RS256",
            let signature = parts.signature,
            publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: Data(parts.input.utf8),
                padding: .insecurePKCS1v1_5),
            let claims = decode(ApplicationClaims.self, parts.payload)
        else { return nil }
        let seconds = Int(now.timeIntervalSince1970)
        guard claims.exp > seconds, claims.iat <= seconds + Int(callbackSkew) else { return nil }
        return claims
    }

    // MARK: HS256 callbacks

    static func payloadHash(_ body: Data) -> String {
        SHA256.hash(data: body).map { String(format: "%02x", $0) }.joined()
    }

    /// The `Authorization` value Vonage puts on a callback with `body`.
    static func signCallback(body: Data, secret: String, apiKey: String?, applicationID: String?, now: Date) throws
        -> String
    {
        let claims = CallbackClaims(
            iat: Int(now.timeIntervalSince1970), jti: UUID().uuidString.lowercased(), iss: "Vonage",
            payloadHash: payloadHash(body), apiKey: apiKey, applicationID: applicationID)
        let input = try signingInput(Header(alg: "HS256", typ: "JWT"), claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "Bearer " + input + "." + base64URL(Data(mac))
    }

    /// Why a callback's `Authorization` is not Vonage's signature over `body`, or `nil` when it is.
    static func callbackProblem(authorization: String?, body: Data, secret: String, now: Date) -> String? {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else {
            return "no bearer token"
        }
        let token = authorization.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        guard let parts = split(token), let header = decode(Header.self, parts.header), header.alg == "HS256",
            let signature = parts.signature
        else { return "not an HS256 JWT" }
        let key = SymmetricKey(data: Data(secret.utf8))
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Data(parts.input.utf8), using: key)
        else { return "bad signature" }
        guard let claims = decode(CallbackClaims.self, parts.payload) else { return "unreadable claims" }
        guard claims.payloadHash.lowercased() == payloadHash(body) else { return "payload_hash does not match the body" }
        guard abs(now.timeIntervalSince1970 - TimeInterval(claims.iat)) <= callbackSkew else { return "stale iat" }
        return nil
    }

    // MARK: helpers

    private static func signingInput(_ header: some Encodable, _ claims: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return base64URL(try encoder.encode(header)) + "." + base64URL(try encoder.encode(claims))
    }

    private static func split(_ token: String) -> (header: Data, payload: Data, signature: Data?, input: String)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = fromBase64URL(parts[0]), let payload = fromBase64URL(parts[1]) else {
            return nil
        }
        return (header, payload, fromBase64URL(parts[2]), parts[0] + "." + parts[1])
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ data: Data) -> T? {
        try? JSONDecoder().decode(type, from: data)
    }

    static func base64URL(_ data: Data) -> String {
        Base64URL.encode(data)
    }

    static func fromBase64URL(_ text: Substring) -> Data? {
        Base64URL.decode(text)
    }
}
