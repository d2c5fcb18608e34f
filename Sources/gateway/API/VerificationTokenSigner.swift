@preconcurrency import Crypto
import Foundation
import GatewayCore

/// Signs the verification token an approved check returns: a compact JWT, ES256, whose public key is
/// served at `/.well-known/jwks.json` so any backend can verify it without calling the gateway.
struct VerificationTokenSigner: Sendable {
    let privateKey: P256.Signing.PrivateKey
    let keyID: String
    let issuer: String
    let lifetime: TimeInterval

    init(privateKey: P256.Signing.PrivateKey, issuer: String = "verification-gateway", lifetime: TimeInterval = 600) {
        self.privateKey = privateKey
        self.issuer = issuer
        self.lifetime = lifetime
        let digest = SHA256.hash(data: privateKey.publicKey.x963Representation)
        self.keyID = digest.prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// Loads the key from PEM text, or from `file` (creating it, readable by the owner only, when absent).
    static func load(pem: String?, file: URL) throws -> VerificationTokenSigner {
        if let pem {
            return VerificationTokenSigner(privateKey: try P256.Signing.PrivateKey(pemRepresentation: pem))
        }
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            return VerificationTokenSigner(privateKey: try P256.Signing.PrivateKey(pemRepresentation: existing))
        }
        let key = P256.Signing.PrivateKey()
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(
            atPath: file.path, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
        return VerificationTokenSigner(privateKey: key)
    }

    func sign(_ record: VerificationRecord, at now: Date) -> String {
        let header: JSONValue = ["alg": "ES256", "typ": "JWT", "kid": .string(keyID)]
        var generator = SystemRandomNumberGenerator()
        let claims: JSONValue = [
            "iss": .string(issuer),
            "sub": .string(record.id),
            "destination": .string(record.destination.value),
            "channel": .string(record.channel.rawValue),
            "provider": .string(record.providerID),
            "iat": .number(now.timeIntervalSince1970.rounded(.down)),
            "exp": .number((now.timeIntervalSince1970 + lifetime).rounded(.down)),
            "jti": .string(String(generator.next() as UInt64, radix: 16)),
        ]
        let signingInput = Self.base64URL(JSONResponse.encode(header)) + "." + Self.base64URL(JSONResponse.encode(claims))
        let signature = (try? privateKey.signature(for: Data(signingInput.utf8)).rawRepresentation) ?? Data()
        return signingInput + "." + Self.base64URL(signature)
    }

    /// The JWK set with this signer's public key.
    var jwks: JSONValue {
        let x963 = privateKey.publicKey.x963Representation  // 0x04 || X || Y
        let x = x963.dropFirst().prefix(32)
        let y = x963.dropFirst(33)
        return [
            "keys": [
                [
                    "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": .string(keyID),
                    "x": .string(Self.base64URL(Data(x))), "y": .string(Self.base64URL(Data(y))),
                ]
            ]
        ]
    }

    static func base64URL(_ data: Data) -> String {
        Base64URL.encode(data)
    }
}
