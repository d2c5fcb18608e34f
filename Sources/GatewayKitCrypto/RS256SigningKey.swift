import Crypto
import Foundation
import GatewayCore
import Logging
import Synchronization
import _CryptoExtras

/// The RSA key an emulator signs its ID tokens with, as a vendor's token issuer does (Firebase's, IDaaS's): 2048
/// bits, made in memory (a restarted sandbox has a new one), named by a `kid` taken from the SHA-256 of its public
/// key, and published as a one-key JWK Set that code verifying the vendor's real tokens can be pointed at.
public struct RS256SigningKey: Sendable {
    public let privateKey: _RSA.Signing.PrivateKey
    /// The first `keyIDBytes` bytes of the SHA-256 of the public key (DER), in hex: stable for the key.
    public let keyID: String
    /// The key as the emulator publishes it.
    public let keySet: JWKSet

    /// Makes a new key.
    /// - Parameter keyIDBytes: how much of the digest names the key (20 bytes, 40 hex digits, like Google's key
    ///   ids).
    public init(keyIDBytes: Int) throws {
        privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let digest = SHA256.hash(data: privateKey.publicKey.derRepresentation)
        keyID = Hex.lowercase(digest.prefix(keyIDBytes))
        let primitives = try privateKey.publicKey.getKeyPrimitives()
        keySet = JWKSet(keys: [.rs256(modulus: primitives.modulus, exponent: primitives.publicExponent, kid: keyID)])
    }

    /// RS256 with this key.
    public var algorithm: JWSAlgorithm { .rs256(signingWith: privateKey) }

    /// A compact JWS over `claims`, its header naming this key's `kid`.
    public func sign(_ claims: some Encodable) throws -> String {
        try JWS.sign(claims, header: ["kid": .string(keyID)], with: algorithm)
    }

    /// The token as read, when it names this key's `kid` and its RS256 signature verifies with it; `nil` otherwise.
    public func verified(_ token: String) -> JWS.Token? {
        guard let jws = JWS.parse(token), jws.header["kid"]?.stringValue == keyID, jws.isSigned(by: algorithm)
        else { return nil }
        return jws
    }
}

/// An emulator's ``RS256SigningKey``, made the first time it is needed: `nil` only if the system could not make an
/// RSA key (logged; the emulator answers its vendor's 500, and the next call tries again).
public final class LazyRS256SigningKey: Sendable {
    private let key = Mutex<RS256SigningKey?>(nil)
    private let keyIDBytes: Int
    private let logger: Logger
    private let failure: Logger.Message

    /// - Parameter failure: the error line logged when no key could be made.
    public init(keyIDBytes: Int, logger: Logger, failure: Logger.Message) {
        self.keyIDBytes = keyIDBytes
        self.logger = logger
        self.failure = failure
    }

    /// The key, made now if it was not yet.
    public var current: RS256SigningKey? {
        key.withLock { key in
            if let key { return key }
            key = try? RS256SigningKey(keyIDBytes: keyIDBytes)
            if key == nil { logger.error(failure) }
            return key
        }
    }
}
