@preconcurrency import Crypto
import Foundation
import GatewayCore

/// Signs the verification token an approved check returns: a compact JWT, ES256, whose public key is
/// served at `/.well-known/jwks.json` so any backend can verify it without calling the gateway.
///
/// Several instances sign with one key from the environment (`token.signing_key_env`; required with a shared
/// store), so each serves the same JWKS. A rotation publishes the next key first and the previous one until its
/// tokens have expired (`token.verification_keys_env`, docs/operations.md "Rotating the token signing key").
struct VerificationTokenSigner: Sendable {
    let privateKey: P256.Signing.PrivateKey
    let keyID: String
    let issuer: String
    let lifetime: TimeInterval
    /// Keys the JWKS publishes besides the signing key (the next one, the previous one).
    let verificationKeys: [P256.Signing.PublicKey]

    init(
        privateKey: P256.Signing.PrivateKey, verificationKeys: [P256.Signing.PublicKey] = [],
        issuer: String = "verification-gateway", lifetime: TimeInterval = 600
    ) {
        self.privateKey = privateKey
        self.issuer = issuer
        self.lifetime = lifetime
        self.keyID = Self.keyID(privateKey.publicKey)
        self.verificationKeys = verificationKeys
    }

    /// The `kid` of a key: the first 8 bytes of the SHA-256 of its X9.63 form, as hex.
    static func keyID(_ key: P256.Signing.PublicKey) -> String {
        SHA256.hash(data: key.x963Representation).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// A public key from PEM: a public key, or the public part of a private one.
    static func publicKey(pem: String) throws -> P256.Signing.PublicKey {
        if let key = try? P256.Signing.PublicKey(pemRepresentation: pem) { return key }
        return try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey
    }

    /// Loads the key from PEM text, or from `file` (creating it, readable by the owner only, when absent);
    /// `verification` are the other keys the JWKS publishes.
    static func load(pem: String?, verification: [String] = [], file: URL) throws -> VerificationTokenSigner {
        let others = try verification.map(publicKey(pem:))
        if let pem {
            return VerificationTokenSigner(
                privateKey: try P256.Signing.PrivateKey(pemRepresentation: pem), verificationKeys: others)
        }
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            return VerificationTokenSigner(
                privateKey: try P256.Signing.PrivateKey(pemRepresentation: existing), verificationKeys: others)
        }
        let key = P256.Signing.PrivateKey()
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(
            atPath: file.path, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
        return VerificationTokenSigner(privateKey: key, verificationKeys: others)
    }

    func sign(_ record: VerificationRecord, at now: Date) -> String {
        let header: JSONValue = ["alg": "ES256", "typ": "JWT", "kid": .string(keyID)]
        var generator = SystemRandomNumberGenerator()
        var claims: [String: JSONValue] = [
            "iss": .string(issuer),
            "sub": .string(record.id),
            "destination": .string(record.destination.value),
            "channel": .string(record.channel.rawValue),
            "provider": .string(record.providerID),
            "iat": .number(now.timeIntervalSince1970.rounded(.down)),
            "exp": .number((now.timeIntervalSince1970 + lifetime).rounded(.down)),
            "jti": .string(String(generator.next() as UInt64, radix: 16)),
        ]
        // What the start's risk step found (`sim_swap: recent`): the back end can ask for a second factor.
        if !record.risk.isEmpty { claims["risk"] = .object(record.risk.mapValues(JSONValue.string)) }
        let signingInput =
            Self.base64URL(JSONResponse.encode(header)) + "." + Self.base64URL(JSONResponse.encode(.object(claims)))
        let signature = (try? privateKey.signature(for: Data(signingInput.utf8)).rawRepresentation) ?? Data()
        return signingInput + "." + Self.base64URL(signature)
    }

    /// The JWK set: the signing key first, then the other published keys (each once).
    var jwks: JSONValue {
        var seen: Set<String> = []
        var keys: [JSONValue] = []
        for key in [privateKey.publicKey] + verificationKeys where seen.insert(Self.keyID(key)).inserted {
            let x963 = key.x963Representation  // 0x04 || X || Y
            let x = x963.dropFirst().prefix(32)
            let y = x963.dropFirst(33)
            keys.append([
                "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": .string(Self.keyID(key)),
                "x": .string(Self.base64URL(Data(x))), "y": .string(Self.base64URL(Data(y))),
            ])
        }
        return ["keys": .array(keys)]
    }

    static func base64URL(_ data: Data) -> String {
        Base64URL.encode(data)
    }
}
