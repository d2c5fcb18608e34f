import Foundation
import GatewayCore

/// What the Twilio emulator remembers of Verify Push (entities, push factors, challenges, access tokens), as
/// rows of its ``EmulatorTable`` read and written inside one transaction per call: a call reads only the rows
/// it needs, and nothing is held in memory or read at startup.
struct TwilioPushState: EmulatorRowsView {
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

    /// The table the state is rows of (``EmulatorTable``): `entity:<identity>`; `factor:<sid>` looked up by
    /// `factors:<identity>`, beside `credential:<sid>` naming the factor a device signs for; `challenge:<sid>`
    /// looked up by `challenges:<identity>`, due when it expires while pending and a day after it ended;
    /// `token:<access token>`, due when it expires; `creations:<identity>`, the factor creations of the last
    /// minute (60326). Enrolments (entities, factors) are never due.
    static let table = "push"

    /// How long an answered or expired challenge is kept.
    static let challengeRetention: TimeInterval = 24 * 3600
    /// The window of the factor-creation limit.
    static let creationWindow: TimeInterval = 60
    let rows: any EmulatorRows
    /// The call's time.
    let now: Date

    // MARK: entities

    func entity(_ identity: String) throws -> Entity? { try get(Entity.self, "entity:" + identity) }

    func putEntity(_ entity: Entity) throws {
        try rows.put(
            try JSONEncoder().encode(entity), forKey: "entity:" + entity.identity, lookup: "entity", due: .distantFuture
        )
    }

    /// Every entity, oldest first (the list endpoint).
    func entities() throws -> [Entity] {
        try rows.keys(lookup: "entity").compactMap { try get(Entity.self, $0) }.sorted { $0.createdAt < $1.createdAt }
    }

    /// Deletes an entity with its factors and their challenges.
    func deleteEntity(_ identity: String) throws {
        try rows.remove("entity:" + identity)
        for factor in try factors(of: identity) { try deleteFactor(factor.sid) }
    }

    // MARK: factors

    func factor(_ sid: String) throws -> Factor? { try get(Factor.self, "factor:" + sid) }

    func factor(credential: String) throws -> Factor? {
        guard let sid = try rows.value(forKey: "credential:" + credential) else { return nil }
        return try factor(String(decoding: sid, as: UTF8.self))
    }

    func factors(of identity: String) throws -> [Factor] {
        try rows.keys(lookup: "factors:" + identity).compactMap { try get(Factor.self, $0) }
            .sorted { ($0.createdAt, $0.sid) < ($1.createdAt, $1.sid) }
    }

    func putFactor(_ factor: Factor) throws {
        try rows.put(
            try JSONEncoder().encode(factor), forKey: "factor:" + factor.sid, lookup: "factors:" + factor.identity,
            due: .distantFuture)
        try rows.put(
            Data(factor.sid.utf8), forKey: "credential:" + factor.credentialSID, lookup: "credential",
            due: .distantFuture)
    }

    /// Deletes a factor and its challenges.
    func deleteFactor(_ sid: String) throws {
        guard let factor = try factor(sid) else { return }
        try rows.remove("factor:" + sid)
        try rows.remove("credential:" + factor.credentialSID)
        for key in try rows.keys(lookup: "challenges:" + factor.identity) {
            if try get(Challenge.self, key)?.factorSID == sid { try rows.remove(key) }
        }
    }

    /// Factor creations for `identity` within the last minute.
    func factorCreations(_ identity: String) throws -> [Date] {
        (try get([Date].self, "creations:" + identity) ?? []).filter { now.timeIntervalSince($0) < Self.creationWindow }
    }

    func setFactorCreations(_ identity: String, _ times: [Date]) throws {
        guard let oldest = times.min() else { return try rows.remove("creations:" + identity) }
        try rows.put(
            try JSONEncoder().encode(times), forKey: "creations:" + identity, lookup: "creations",
            due: oldest.addingTimeInterval(Self.creationWindow))
    }

    // MARK: challenges

    /// A challenge as of now: a pending one past its expiration date has expired; one ended more than a day
    /// ago is gone.
    func challenge(_ sid: String) throws -> Challenge? {
        guard var challenge = try get(Challenge.self, "challenge:" + sid) else { return nil }
        if challenge.status == "pending", now >= challenge.expiresAt {
            challenge.status = "expired"
            challenge.updatedAt = challenge.expiresAt
            try putChallenge(challenge)
        }
        return Self.due(challenge) <= now ? nil : challenge
    }

    /// An identity's challenges as of now, oldest first.
    func challenges(of identity: String) throws -> [Challenge] {
        try rows.keys(lookup: "challenges:" + identity).compactMap {
            try challenge(String($0.dropFirst("challenge:".count)))
        }
        .sorted { ($0.createdAt, $0.sid) < ($1.createdAt, $1.sid) }
    }

    func putChallenge(_ challenge: Challenge) throws {
        try rows.put(
            try JSONEncoder().encode(challenge), forKey: "challenge:" + challenge.sid,
            lookup: "challenges:" + challenge.identity, due: Self.due(challenge))
    }

    // MARK: access tokens

    /// An access token until it expires.
    func accessToken(_ token: String) throws -> AccessToken? {
        guard let found = try get(AccessToken.self, "token:" + token), found.expiresAt >= now else { return nil }
        return found
    }

    func putToken(_ token: AccessToken) throws {
        try rows.put(
            try JSONEncoder().encode(token), forKey: "token:" + token.token, lookup: "token",
            due: token.expiresAt.addingTimeInterval(1))
    }

    // MARK: sweeping and moving

    /// Handles at most ``sweepBatch`` due rows: a pending challenge past its date expires (and is kept a day), an
    /// ended challenge a day old and an expired token are removed, a creation list is trimmed.
    func sweep() throws {
        for key in try rows.keysDue(at: now, limit: Self.sweepBatch) {
            if key.hasPrefix("challenge:") {
                let sid = String(key.dropFirst("challenge:".count))
                if try challenge(sid) == nil { try rows.remove(key) }
            } else if key.hasPrefix("creations:") {
                let identity = String(key.dropFirst("creations:".count))
                try setFactorCreations(identity, try factorCreations(identity))
            } else {
                try rows.remove(key)
            }
        }
    }

    /// Moves what an earlier version saved one entity per SID (all read back at startup) into the table.
    func move(_ saved: [String: Data]) throws {
        let decoder = JSONDecoder()
        for (key, data) in saved {
            switch key.prefix(2) {
            case "YE": if let value = try? decoder.decode(Entity.self, from: data) { try putEntity(value) }
            case "YF": if let value = try? decoder.decode(Factor.self, from: data) { try putFactor(value) }
            case "YC":
                if let value = try? decoder.decode(Challenge.self, from: data), Self.due(value) > now {
                    try putChallenge(value)
                }
            case "YK":
                if let value = try? decoder.decode(AccessToken.self, from: data), value.expiresAt >= now {
                    try putToken(value)
                }
            default: break
            }
        }
    }

    // MARK: rows

    /// When a challenge is next looked at: its expiry while pending, a day after it ended otherwise.
    private static func due(_ challenge: Challenge) -> Date {
        challenge.status == "pending" ? challenge.expiresAt : challenge.updatedAt.addingTimeInterval(challengeRetention)
    }

    private func get<Value: Decodable>(_ type: Value.Type, _ key: String) throws -> Value? {
        try rows.value(forKey: key).flatMap { try? JSONDecoder().decode(type, from: $0) }
    }
}
