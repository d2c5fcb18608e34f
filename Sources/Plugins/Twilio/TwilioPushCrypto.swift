import Crypto
import Foundation
import GatewayCore
import GatewayKitCrypto
import HTTPTypes

/// Verify Push's cryptography (`docs/vendors/twilio.md` §3.1–3.3): ES256 JWTs signed by a factor's P-256 key,
/// the factor-verification proof, and the `X-Twilio-Signature` on Twilio's webhooks.
enum TwilioPushCrypto {
    /// The factor's public key from `Binding.PublicKey`: base64 of the SubjectPublicKeyInfo DER.
    static func publicKey(base64 text: String) -> P256.Signing.PublicKey? {
        guard let der = Data(base64Encoded: text) else { return nil }
        return try? P256.Signing.PublicKey(derRepresentation: der)
    }

    /// The factor-verification proof: the standard-base64 DER ECDSA signature over the factor SID.
    static func verifiesFactor(proof: String, sid: String, key: P256.Signing.PublicKey) -> Bool {
        guard let der = Data(base64Encoded: proof),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: der)
        else { return false }
        return key.isValidSignature(signature, for: Data(sid.utf8))
    }

    /// A JWT as read, before its signature is checked.
    struct JWT: Sendable {
        var token: JWS.Token
        var claims: [String: JSONValue]

        var header: [String: JSONValue] { token.header }

        func isSigned(by key: P256.Signing.PublicKey) -> Bool { token.isSigned(by: .es256(verifyingWith: key)) }
    }

    /// A compact JWT whose claims are a JSON object; `nil` when it is not one.
    static func parseJWT(_ text: String) -> JWT? {
        guard let token = JWS.parse(text), let claims = token.claims(JSONValue.self)?.objectValue else { return nil }
        return JWT(token: token, claims: claims)
    }

    /// Signs `claims` as the SDK does: `{typ: JWT, alg: ES256}` plus `extraHeader`, raw r‖s, base64url.
    static func signJWT(
        claims: [String: JSONValue], extraHeader: [String: JSONValue] = [:], key: P256.Signing.PrivateKey
    ) throws -> String {
        try JWS.sign(JSONValue.object(claims), header: extraHeader, with: .es256(signingWith: key))
    }

    static let signatureHeader = HTTPField.Name("X-Twilio-Signature")!

    /// `X-Twilio-Signature`: base64 of HMAC-SHA1, keyed with the auth token, over the full URL followed by
    /// each POST parameter's name and value, sorted by name, with no separators.
    static func webhookSignature(url: String, parameters: [(String, String)], authToken: String) -> String {
        var data = url
        for (name, value) in parameters.sorted(by: { ($0.0, $0.1) < ($1.0, $1.1) }) {
            data += name + value
        }
        let key = SymmetricKey(data: Data(authToken.utf8))
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Data(data.utf8), using: key)
        return Data(mac).base64EncodedString()
    }

    static func isValidWebhook(signature: String?, url: String, parameters: [(String, String)], authToken: String)
        -> Bool
    {
        guard let signature, !signature.isEmpty else { return false }
        let expected = webhookSignature(url: url, parameters: parameters, authToken: authToken)
        return ConstantTime.equals(signature, expected)
    }
}
