import Foundation

/// One JWS algorithm as a plugin provides it: its `alg` name and the signature primitive.
///
/// The core holds no cryptography (it depends on no crypto library), so the primitive comes from the plugin,
/// usually one line over swift-crypto (`HMAC<SHA256>` for HS256, `_RSA.Signing` with PKCS#1 v1.5 for RS256,
/// `P256.Signing` with the raw r‖s form for ES256). Everything around it, the JSON, base64url and the compact
/// form, is ``JWS``'s.
public struct JWSAlgorithm: Sendable {
    /// The `alg` header value (`HS256`, `RS256`, `ES256`).
    public var name: String
    /// Signs the signing input (`base64url(header).base64url(payload)` as bytes).
    public var sign: @Sendable (Data) throws -> Data
    /// Whether a signature is valid for the signing input.
    public var verify: @Sendable (_ signature: Data, _ input: Data) -> Bool

    /// An algorithm named `name`, signing and verifying with the plugin's primitives.
    public init(
        name: String, sign: @escaping @Sendable (Data) throws -> Data,
        verify: @escaping @Sendable (_ signature: Data, _ input: Data) -> Bool
    ) {
        self.name = name
        self.sign = sign
        self.verify = verify
    }
}
