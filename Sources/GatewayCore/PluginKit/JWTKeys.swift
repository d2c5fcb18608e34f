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

/// A JWK Set (RFC 7517 §5).
public struct JWKSet: Codable, Sendable, Equatable {
    /// The keys of the set, in the issuer's order.
    public var keys: [JWK]

    /// A set of `keys`.
    public init(keys: [JWK]) { self.keys = keys }

    /// The RSA signing key a token's `kid` names; with no `kid`, the set's only RSA signing key. `nil` when none
    /// fits.
    public func rsaSigningKey(kid: String?) -> JWK? {
        let rsa = keys.filter { $0.kty == "RSA" && ($0.use == nil || $0.use == "sig") }
        guard let kid else { return rsa.count == 1 ? rsa.first : nil }
        return rsa.first { $0.kid == kid }
    }
}

/// A JWT's `aud` claim: one string or an array of strings (RFC 7519 §4.1.3); written as a string when it has
/// one value.
public struct JWTAudience: Codable, Sendable, Equatable {
    /// The audiences, in order.
    public var values: [String]

    /// An audience of `values`.
    public init(_ values: [String]) { self.values = values }

    /// Reads a single string or an array of strings.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let one = try? container.decode(String.self) {
            values = [one]
        } else {
            values = try container.decode([String].self)
        }
    }

    /// Writes a single string for one value, an array otherwise.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if values.count == 1 { try container.encode(values[0]) } else { try container.encode(values) }
    }
}
