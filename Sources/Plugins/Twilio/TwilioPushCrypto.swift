import Crypto
import Foundation
import GatewayCore
import HTTPTypes

/// The cryptography of Verify Push, as twilio-verify-ios and Twilio use it (the vendor notes `docs/vendors/twilio.md`
/// §3.1–3.3):
/// ES256 JWTs signed by a factor's P-256 key, the factor-verification proof, and the `X-Twilio-Signature`
/// Twilio puts on its webhooks.
enum TwilioPushCrypto {
    // MARK: keys

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

    // MARK: JWT

    /// A JWT as read, before its signature is checked.
    struct JWT: Sendable {
        var header: [String: JSONValue]
        var claims: [String: JSONValue]
        var signingInput: String
        var signature: Data

        /// Whether the raw r‖s ES256 signature verifies with `key`.
        func isSigned(by key: P256.Signing.PublicKey) -> Bool {
            guard header["alg"]?.stringValue == "ES256",
                let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return key.isValidSignature(signature, for: Data(signingInput.utf8))
        }
    }

    /// Splits and decodes a compact JWT; `nil` when it is not one.
    static func parseJWT(_ token: String) -> JWT? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = base64URLDecode(parts[0]), let claimsData = base64URLDecode(parts[1]),
            let signature = base64URLDecode(parts[2]),
            let header = (try? JSONDecoder().decode(JSONValue.self, from: headerData))?.objectValue,
            let claims = (try? JSONDecoder().decode(JSONValue.self, from: claimsData))?.objectValue
        else { return nil }
        return JWT(header: header, claims: claims, signingInput: parts[0] + "." + parts[1], signature: signature)
    }

    /// Signs `claims` as the SDK does: `{typ: JWT, alg: ES256}` plus `extraHeader`, raw r‖s, base64url.
    static func signJWT(
        claims: [String: JSONValue], extraHeader: [String: JSONValue] = [:], key: P256.Signing.PrivateKey
    ) throws -> String {
        var header: [String: JSONValue] = ["typ": "JWT", "alg": "ES256"]
        header.merge(extraHeader) { _, new in new }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input =
            base64URLEncode(try encoder.encode(JSONValue.object(header))) + "."
            + base64URLEncode(try encoder.encode(JSONValue.object(claims)))
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + base64URLEncode(signature.rawRepresentation)
    }

    static func base64URLEncode(_ data: Data) -> String {
        Base64URL.encode(data)
    }

    static func base64URLDecode(_ text: Substring) -> Data? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            return nil
        }
        return Base64URL.decode(text)
    }

    // MARK: webhook signature

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

    /// Whether `signature` is Twilio's over this URL and form, compared in constant time.
    static func isValidWebhook(signature: String?, url: String, parameters: [(String, String)], authToken: String)
        -> Bool
    {
        guard let signature, !signature.isEmpty else { return false }
        let expected = webhookSignature(url: url, parameters: parameters, authToken: authToken)
        return ConstantTime.equals(signature, expected)
    }
}
