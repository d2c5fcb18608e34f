import Foundation
import GatewayCore

/// API keys kept in the store and managed with `gateway keys create|list|revoke`, next to the ones in the
/// configuration file. Only the SHA-256 of a secret is kept; the secret is shown once, when it is made. The
/// server looks keys up on every request, so a revocation takes effect at once, without a restart.
protocol APIKeyStore: Sendable {
    /// The key whose secret hashes to `hash`, unless revoked.
    func apiKey(hash: String) async throws(GatewayError) -> APIKey?

    func insertAPIKey(_ key: StoredAPIKey) async throws(GatewayError)

    /// Every key, revoked ones included, oldest first.
    func apiKeys() async throws(GatewayError) -> [StoredAPIKey]

    /// Revokes a key by id; `false` when there is no such key or it was already revoked.
    func revokeAPIKey(id: String, at: Date) async throws(GatewayError) -> Bool
}

/// A stored key: its public facts and the hash of its secret.
struct StoredAPIKey: Sendable, Equatable {
    var key: APIKey
    var hash: String
    var createdAt: Date
    var revokedAt: Date?

    /// A new key with a fresh secret (`sk_live_` and 40 hex digits): the secret is returned to be shown
    /// once and is not kept.
    static func make(
        name: String, scopes: Set<APIKey.Scope>, countries: Set<String>?, startsPerHour: Int? = nil, at: Date
    ) -> (stored: StoredAPIKey, secret: String) {
        var generator = SystemRandomNumberGenerator()
        let secret =
            "sk_live_"
            + (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
            .joined()
        let hash = APIKeyring.hash(secret)
        let key = APIKey(
            id: "key_" + hash.prefix(12), name: name, scopes: scopes, countries: countries, startsPerHour: startsPerHour
        )
        return (StoredAPIKey(key: key, hash: hash, createdAt: at, revokedAt: nil), secret)
    }
}
