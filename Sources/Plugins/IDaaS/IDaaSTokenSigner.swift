import Crypto
import Foundation
import _CryptoExtras

/// Signs the emulator's ID tokens: JWTs with `alg: RS256` and a `kid`, verifiable with the key set the
/// emulator publishes at its JWKS path (docs/vendors/idaas.md §2.7). The 2048-bit key is made on first use and lives
/// only
/// in memory: a restarted sandbox has a new one.
struct IDaaSTokenSigner: Sendable {
    let privateKey: _RSA.Signing.PrivateKey
    let keyID: String
    let keySet: IDaaSWire.JWKSet

    init() throws {
        privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let digest = SHA256.hash(data: privateKey.publicKey.derRepresentation)
        keyID = digest.prefix(16).map { String(format: "%02x", $0) }.joined()
        let primitives = try privateKey.publicKey.getKeyPrimitives()
        keySet = IDaaSWire.JWKSet(keys: [
            IDaaSWire.JWK(
                kty: "RSA", alg: "RS256", use: "sig", kid: keyID, n: IDaaSWire.base64URL(primitives.modulus),
                e: IDaaSWire.base64URL(primitives.publicExponent))
        ])
    }

    /// A compact JWS over `claims`.
    func sign(_ claims: IDaaSWire.IDTokenClaims) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(IDaaSWire.JWTHeader(alg: "RS256", kid: keyID, typ: "JWT"))
        let payload = try encoder.encode(claims)
        let input = IDaaSWire.base64URL(header) + "." + IDaaSWire.base64URL(payload)
        // RS256 is PKCS#1 v1.5 over SHA-256 (RFC 7518 §3.3).
        let signature = try privateKey.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + IDaaSWire.base64URL(signature.rawRepresentation)
    }
}
