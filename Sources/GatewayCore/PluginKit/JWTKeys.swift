/// A JSON Web Key (RFC 7517) as ID-token issuers publish RSA signing keys, `n` and `e` in ``Base64URL``: what a
/// plugin reads from its vendor's key set (IDaaS) and what emulators publish (IDaaS, Firebase).
public struct JWK: Codable, Sendable, Equatable {
    public var kty: String
    public var alg: String?
    public var use: String?
    public var kid: String?
    public var n: String?
    public var e: String?

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
    public var keys: [JWK]

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
    public var values: [String]

    public init(_ values: [String]) { self.values = values }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let one = try? container.decode(String.self) {
            values = [one]
        } else {
            values = try container.decode([String].self)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if values.count == 1 { try container.encode(values[0]) } else { try container.encode(values) }
    }
}
