/// A JSON Web Key (RFC 7517) as ID-token issuers publish RSA signing keys, `n` and `e` in ``Base64URL``: what a
/// plugin reads from its vendor's key set (IDaaS) and what emulators publish (IDaaS, Firebase).
public struct JWK: Codable, Sendable, Equatable {
    /// The key type (`RSA`).
    public var kty: String
    /// The algorithm the key is for (`RS256`), if the set says.
    public var alg: String?
    /// What the key is for (`sig` for signing), if the set says.
    public var use: String?
    /// The key's id, which a token's `kid` header names.
    public var kid: String?
    /// The RSA modulus, big-endian bytes in base64url.
    public var n: String?
    /// The RSA public exponent, big-endian bytes in base64url.
    public var e: String?

    /// A key with the given members; ``rs256(modulus:exponent:kid:)`` builds the usual RSA signing key.
    public init(
        kty: String, alg: String? = nil, use: String? = nil, kid: String? = nil, n: String? = nil, e: String? = nil
    ) {
        self.kty = kty
        self.alg = alg
        self.use = use
        self.kid = kid
        self.n = n
        self.e = e
    }

    /// An RS256 signing key from its public modulus and exponent (big-endian bytes).
    public static func rs256(modulus: some Collection<UInt8>, exponent: some Collection<UInt8>, kid: String) -> JWK {
        JWK(kty: "RSA", alg: "RS256", use: "sig", kid: kid, n: Base64URL.encode(modulus), e: Base64URL.encode(exponent))
    }
}
