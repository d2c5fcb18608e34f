import Crypto
import Foundation
import GatewayCore

/// An API key as the gateway knows it: never the secret, only its SHA-256.
struct APIKey: Sendable, Equatable {
    enum Scope: String, Sendable, CaseIterable {
        /// Start, check, resend, cancel and read its own verifications.
        case verify
        /// Every operation, every verification, and the admin API.
        case admin
        /// Read every verification and the reference endpoints (`GET` only): for support tools and dashboards.
        case read
    }

    var id: String
    var name: String
    var scopes: Set<Scope>
    /// The countries this key may send verifications to (`nil`: those the policy allows).
    var countries: Set<String>? = nil
    /// Starts this key may make per hour, on top of the gateway-wide limits (`nil`: no limit of its own).
    var startsPerHour: Int? = nil
}

/// The configured API keys, looked up by the hash of the presented secret.
///
/// Looking up a SHA-256 digest in a dictionary does not leak, through timing, how much of a guessed
/// key was right: the attacker controls the secret, not its digest.
struct APIKeyring: Sendable {
    private var byHash: [String: APIKey] = [:]

    init() {}

    mutating func add(secret: String, name: String, scopes: Set<APIKey.Scope>) {
        add(hash: Self.hash(secret), name: name, scopes: scopes)
    }

    mutating func add(
        hash: String, name: String, scopes: Set<APIKey.Scope>, countries: Set<String>? = nil, startsPerHour: Int? = nil
    ) {
        byHash[hash.lowercased()] = APIKey(
            id: "key_" + hash.prefix(12), name: name, scopes: scopes, countries: countries, startsPerHour: startsPerHour
        )
    }

    func key(forSecret secret: String) -> APIKey? { byHash[Self.hash(secret)] }

    /// The configured key whose secret hashes to `hash` (a console session keeps only the hash).
    func key(forHash hash: String) -> APIKey? { byHash[hash.lowercased()] }

    var isEmpty: Bool { byHash.isEmpty }

    static func hash(_ secret: String) -> String {
        var secret = secret
        return secret.withUTF8 { Hex.lowercase(SHA256.hash(data: UnsafeRawBufferPointer($0))) }
    }

    /// A new random key for the sandbox: `sk_sandbox_` and 32 hex digits.
    static func generateSandboxSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return "sk_sandbox_" + bytes.map { String(format: "%02x", $0) }.joined()
    }
}
