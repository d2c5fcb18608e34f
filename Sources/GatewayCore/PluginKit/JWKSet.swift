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
