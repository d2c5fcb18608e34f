import Crypto
import Foundation
import GatewayCore
import _CryptoExtras

/// The JWS algorithms plugins sign and check with, over swift-crypto: the one place for the primitives
/// ``JWSAlgorithm`` leaves out of the core, which holds no cryptography.
extension JWSAlgorithm {
    /// RS256, RSASSA-PKCS1-v1_5 over SHA-256 (RFC 7518 §3.3), signing with `key`; swift-crypto names the padding
    /// "insecure" only to steer encryption users away from it.
    public static func rs256(signingWith key: _RSA.Signing.PrivateKey) -> JWSAlgorithm {
        JWSAlgorithm(
            name: "RS256", sign: { try key.signature(for: $0, padding: .insecurePKCS1v1_5).rawRepresentation },
            verify: rs256(verifyingWith: key.publicKey).verify)
    }

    /// RS256 that only checks, with a public key.
    public static func rs256(verifyingWith key: _RSA.Signing.PublicKey) -> JWSAlgorithm {
        JWSAlgorithm(
            name: "RS256", sign: { _ in throw GatewayError.internal("A public key does not sign.") },
            verify: { signature, input in
                key.isValidSignature(
                    _RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
            })
    }

    /// RS256 that only checks, with the RSA key a JWK gives (a vendor's key set); `nil` when its modulus and
    /// exponent make no key.
    public static func rs256(verifyingWith key: JWK) -> JWSAlgorithm? {
        guard key.kty == "RSA", let n = key.n.flatMap(Base64URL.decode), let e = key.e.flatMap(Base64URL.decode),
            let publicKey = try? _RSA.Signing.PublicKey(n: n, e: e)
        else { return nil }
        return rs256(verifyingWith: publicKey)
    }

    /// HS256, HMAC-SHA256 keyed with `secret`.
    public static func hs256(secret: Data) -> JWSAlgorithm {
        // The secret, not a `SymmetricKey` (not `Sendable`), travels in the closures.
        JWSAlgorithm(
            name: "HS256", sign: { Data(HMAC<SHA256>.authenticationCode(for: $0, using: SymmetricKey(data: secret))) },
            verify: {
                HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: $1, using: SymmetricKey(data: secret))
            })
    }

    /// ES256, ECDSA P-256 with the raw r‖s signature (RFC 7518 §3.4), signing with `key`.
    public static func es256(signingWith key: P256.Signing.PrivateKey) -> JWSAlgorithm {
        // The keys are not `Sendable`: their raw bytes travel in the closures.
        let raw = key.rawRepresentation
        return JWSAlgorithm(
            name: "ES256",
            sign: { try P256.Signing.PrivateKey(rawRepresentation: raw).signature(for: $0).rawRepresentation },
            verify: es256(verifyingWith: key.publicKey).verify)
    }

    /// ES256 that only checks, with a public key.
    public static func es256(verifyingWith key: P256.Signing.PublicKey) -> JWSAlgorithm {
        let raw = key.rawRepresentation
        return JWSAlgorithm(
            name: "ES256", sign: { _ in throw GatewayError.internal("A public key does not sign.") },
            verify: { signature, input in
                guard let key = try? P256.Signing.PublicKey(rawRepresentation: raw),
                    let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
                else { return false }
                return key.isValidSignature(signature, for: input)
            })
    }
}
