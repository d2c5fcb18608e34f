import Foundation
import GatewayCore

/// What the Twilio emulator remembers of Verify Push: entities, push factors, challenges and access
/// tokens. Each is saved through the emulator's persistence under its SID when it changes.
struct TwilioPushState: Sendable {
    struct Entity: Codable, Sendable, Equatable {
        var sid: String
        var identity: String
        var createdAt: Date
    }

    struct Factor: Codable, Sendable, Equatable {
        var sid: String
        var identity: String
        var entitySID: String
        var friendlyName: String
        /// `unverified` or `verified`.
        var status: String
        /// `Binding.PublicKey`: base64 SubjectPublicKeyInfo DER of the device's P-256 key.
        var publicKey: String
        /// The JWT `kid` the device signs with (`config.credential_sid`).
        var credentialSID: String
        var appID: String
        var notificationPlatform: String
        var notificationToken: String?
        var sdkVersion: String?
        var metadata: [String: String]?
        var verificationAttempts: Int
        var createdAt: Date
        var updatedAt: Date
    }

    struct Field: Codable, Sendable, Equatable {
        var label: String
        var value: String
    }

    struct Challenge: Codable, Sendable, Equatable {
        var sid: String
        var identity: String
        var entitySID: String
        var factorSID: String
        /// `pending`, `approved`, `denied` or `expired`.
        var status: String
        var message: String
        var fields: [Field]
        var hiddenDetails: [String: String]?
        var metadata: [String: String]?
        var notifications: Int
        var createdAt: Date
        var updatedAt: Date
        var respondedAt: Date?
        var expiresAt: Date
    }

    struct AccessToken: Codable, Sendable, Equatable {
        var sid: String
        var identity: String
        var token: String
        var friendlyName: String?
        var ttl: Int
        var createdAt: Date

        var expiresAt: Date { createdAt.addingTimeInterval(TimeInterval(ttl)) }
    }

    private(set) var entities: [String: Entity] = [:]
    private(set) var factors: [String: Factor] = [:]
    private(set) var challenges: [String: Challenge] = [:]
    private var tokens: [String: AccessToken] = [:]
    private var tokenSIDs: [String: String] = [:]
    private var credentials: [String: String] = [:]
    /// When each identity's recent factors were created, for the creation-rate limit (60326).
    var factorCreations: [String: [Date]] = [:]
    private var dirty: Set<String> = []

    init() {}

    /// Rebuilds the state from saved records, by the prefix of their SID.
    init(restoring saved: [String: Data]) {
        let decoder = JSONDecoder()
        for (key, data) in saved {
            switch key.prefix(2) {
            case "YE": if let value = try? decoder.decode(Entity.self, from: data) { entities[value.identity] = value }
            case "YF": if let value = try? decoder.decode(Factor.self, from: data) { putFactor(value) }
            case "YC": if let value = try? decoder.decode(Challenge.self, from: data) { challenges[value.sid] = value }
            case "YK": if let value = try? decoder.decode(AccessToken.self, from: data) { putToken(value) }
            default: break
            }
        }
        dirty = []
    }

    // MARK: entities

    func entity(_ identity: String) -> Entity? { entities[identity] }

    mutating func putEntity(_ entity: Entity) {
        entities[entity.identity] = entity
        dirty.insert(entity.sid)
    }

    /// Deletes an entity with its factors and challenges.
    mutating func deleteEntity(_ identity: String) {
        guard let entity = entities.removeValue(forKey: identity) else { return }
        dirty.insert(entity.sid)
        for factor in factors.values where factor.identity == identity { deleteFactor(factor.sid) }
    }

    // MARK: factors

    func factor(_ sid: String) -> Factor? { factors[sid] }

    func factor(credential: String) -> Factor? { credentials[credential].flatMap { factors[$0] } }

    func factors(of identity: String) -> [Factor] {
        factors.values.filter { $0.identity == identity }.sorted { ($0.createdAt, $0.sid) < ($1.createdAt, $1.sid) }
    }

    mutating func putFactor(_ factor: Factor) {
        factors[factor.sid] = factor
        credentials[factor.credentialSID] = factor.sid
        dirty.insert(factor.sid)
    }

    /// Deletes a factor and its challenges.
    mutating func deleteFactor(_ sid: String) {
        guard let factor = factors.removeValue(forKey: sid) else { return }
        credentials[factor.credentialSID] = nil
        dirty.insert(sid)
        for challenge in challenges.values where challenge.factorSID == sid {
            challenges[challenge.sid] = nil
            dirty.insert(challenge.sid)
        }
    }

    // MARK: challenges

    /// A challenge as of `now`: a pending one past its expiration date has expired.
    mutating func challenge(_ sid: String, now: Date) -> Challenge? {
        guard var challenge = challenges[sid] else { return nil }
        if challenge.status == "pending", now >= challenge.expiresAt {
            challenge.status = "expired"
            challenge.updatedAt = challenge.expiresAt
            putChallenge(challenge)
        }
        return challenge
    }

    mutating func challenges(of identity: String, now: Date) -> [Challenge] {
        challenges.values.filter { $0.identity == identity }.map(\.sid).compactMap { challenge($0, now: now) }
            .sorted { ($0.createdAt, $0.sid) < ($1.createdAt, $1.sid) }
    }

    mutating func putChallenge(_ challenge: Challenge) {
        challenges[challenge.sid] = challenge
        dirty.insert(challenge.sid)
    }

    /// Forgets a factor's challenges that ended more than a day before `now`, so the state stays bounded.
    mutating func forgetOldChallenges(of factorSID: String, now: Date) {
        for challenge in challenges.values
        where challenge.factorSID == factorSID && challenge.status != "pending"
            && challenge.updatedAt.addingTimeInterval(24 * 3600) < now
        {
            challenges[challenge.sid] = nil
            dirty.insert(challenge.sid)
        }
    }

    // MARK: access tokens

    func accessToken(_ token: String) -> AccessToken? { tokens[token] }

    mutating func putToken(_ token: AccessToken) {
        tokens[token.token] = token
        tokenSIDs[token.sid] = token.token
        dirty.insert(token.sid)
    }

    /// Drops access tokens past their time to live.
    mutating func sweepTokens(now: Date) {
        for token in tokens.values where token.expiresAt < now {
            tokens[token.token] = nil
            tokenSIDs[token.sid] = nil
            dirty.insert(token.sid)
        }
    }

    // MARK: persistence

    mutating func takeChanges() -> [String: Data?] {
        guard !dirty.isEmpty else { return [:] }
        let encoder = JSONEncoder()
        var changes: [String: Data?] = [:]
        for key in dirty {
            let data: Data?
            switch key.prefix(2) {
            case "YE": data = entities.values.first { $0.sid == key }.flatMap { try? encoder.encode($0) }
            case "YF": data = factors[key].flatMap { try? encoder.encode($0) }
            case "YC": data = challenges[key].flatMap { try? encoder.encode($0) }
            case "YK": data = tokenSIDs[key].flatMap { tokens[$0] }.flatMap { try? encoder.encode($0) }
            default: data = nil
            }
            changes.updateValue(data, forKey: key)
        }
        dirty = []
        return changes
    }
}
