import Crypto
import Foundation
import GatewayCore
import _CryptoExtras

/// Signs the emulator's ID tokens: JWTs with `alg: RS256` and a `kid`, verifiable with the key set the emulator
/// publishes at its JWKS path (docs/vendors/idaas.md §2.7). The 2048-bit key is made on first use and lives only in
/// memory: a restarted sandbox has a new one.
struct IDaaSTokenSigner: Sendable {
    let privateKey: _RSA.Signing.PrivateKey
    let keyID: String
    let keySet: JWKSet

    init() throws {
        privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let digest = SHA256.hash(data: privateKey.publicKey.derRepresentation)
        keyID = Hex.lowercase(digest.prefix(16))
        let primitives = try privateKey.publicKey.getKeyPrimitives()
        keySet = JWKSet(keys: [.rs256(modulus: primitives.modulus, exponent: primitives.publicExponent, kid: keyID)])
    }

    /// A compact JWS over `claims`.
    func sign(_ claims: IDaaSWire.IDTokenClaims) throws -> String {
        try JWS.sign(claims, header: ["kid": .string(keyID)], with: Self.rs256(signingWith: privateKey))
    }

    /// RS256: PKCS#1 v1.5 over SHA-256 (RFC 7518 §3.3), signing with `key`.
    static func rs256(signingWith key: _RSA.Signing.PrivateKey) -> JWSAlgorithm {
        var algorithm = rs256(verifyingWith: key.publicKey)
        algorithm.sign = { try key.signature(for: $0, padding: .insecurePKCS1v1_5).rawRepresentation }
        return algorithm
    }

    /// RS256 checking only, with a tenant's public key.
    static func rs256(verifyingWith key: _RSA.Signing.PublicKey) -> JWSAlgorithm {
        JWSAlgorithm(
            name: "RS256", sign: { _ in throw GatewayError.internal("A public key does not sign.") },
            verify: { signature, input in
                key.isValidSignature(
                    _RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
            })
    }
}
