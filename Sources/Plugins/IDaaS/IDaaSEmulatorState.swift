import Foundation
import GatewayCore

/// What the IDaaS emulator remembers, as rows of its ``EmulatorTable`` read and written inside one
/// transaction per call: a call reads the rows it needs, so it costs the same, and the emulator holds nothing
/// in memory, however much there is.
/// Sandbox state: codes and answers in clear, never production.
struct IDaaSEmulatorState: EmulatorRowsView {
    /// A slider drawn and not yet answered, by its `token`.
    struct Captcha: Codable, Sendable, Equatable {
        var answerX: Int
        var answerY: Int
        var expiresAt: Date
    }

    /// A `captcha_token`: good for one SMS to the number it was verified for.
    struct Grant: Codable, Sendable, Equatable {
        var sender: String
        var expiresAt: Date
        var used: Bool = false
    }

    /// The SMS code waiting for a login, by E.164 number.
    struct Code: Codable, Sendable, Equatable {
        var code: String
        var expiresAt: Date
    }

    /// A tenant user, by E.164 number: created on the first sign-in (docs/vendors/idaas.md §2.4, auto-registration).
    struct User: Codable, Sendable, Equatable {
        var id: String
        var failures: Int = 0
        var lockedUntil: Date?
    }

    /// A `session_token`'s session.
    struct Session: Codable, Sendable, Equatable {
        var userID: String
        var phoneNumber: String
        var expiresAt: Date
    }

    /// The table the state is rows of (``EmulatorTable``): one row per entity under the key it was saved
    /// under before (`captcha:`, `grant:`, `code:`, `user:`, `session:` and its id), looked up by kind, due
    /// ``retention`` after it expires (a user never: it is created on the first sign-in and kept).
    static let table = "state"

    /// How long an expired entity is still remembered, so a late call hears "expired", not "unknown".
    static let retention: TimeInterval = 3600
    let rows: any EmulatorRows
    /// The call's time: what is due by then reads as gone.
    let now: Date

    func captcha(_ id: String) throws -> Captcha? { try get(Captcha.self, "captcha", id) }
    func grant(_ id: String) throws -> Grant? { try get(Grant.self, "grant", id) }
    func code(_ id: String) throws -> Code? { try get(Code.self, "code", id) }
    func session(_ id: String) throws -> Session? { try get(Session.self, "session", id) }

    func user(_ id: String) throws -> User? {
        try rows.value(forKey: "user:" + id).flatMap { try? JSONDecoder().decode(User.self, from: $0) }
    }

    func setCaptcha(_ id: String, _ value: Captcha?) throws { try set("captcha", id, value) }
    func setGrant(_ id: String, _ value: Grant?) throws { try set("grant", id, value) }
    func setCode(_ id: String, _ value: Code?) throws { try set("code", id, value) }
    func setSession(_ id: String, _ value: Session?) throws { try set("session", id, value) }

    func setUser(_ id: String, _ value: User) throws {
        try rows.put(try JSONEncoder().encode(value), forKey: "user:" + id, lookup: "user", due: .distantFuture)
    }

    /// Forgets what expired more than ``retention`` ago: at most ``sweepBatch`` rows, earliest first.
    func sweep() throws {
        for key in try rows.keysDue(at: now, limit: Self.sweepBatch) where !key.hasPrefix("user:") {
            try rows.remove(key)
        }
    }

    /// Moves entities an earlier version saved one by one (all read back at startup) into the table, under
    /// the same keys; unreadable ones are dropped.
    func move(_ saved: [String: Data]) throws {
        let decoder = JSONDecoder()
        for (key, data) in saved {
            let (kind, id) = Self.split(key)
            switch kind {
            case "captcha": try setCaptcha(id, try? decoder.decode(Captcha.self, from: data))
            case "grant": try setGrant(id, try? decoder.decode(Grant.self, from: data))
            case "code": try setCode(id, try? decoder.decode(Code.self, from: data))
            case "user": if let user = try? decoder.decode(User.self, from: data) { try setUser(id, user) }
            case "session": try setSession(id, try? decoder.decode(Session.self, from: data))
            default: continue
            }
        }
    }

    // MARK: rows

    private func get<Value: Decodable & IDaaSExpiring>(_ type: Value.Type, _ kind: String, _ id: String) throws
        -> Value?
    {
        guard let data = try rows.value(forKey: kind + ":" + id),
            let value = try? JSONDecoder().decode(type, from: data),
            value.expiresAt.addingTimeInterval(Self.retention) > now
        else { return nil }
        return value
    }

    private func set<Value: Encodable & IDaaSExpiring>(_ kind: String, _ id: String, _ value: Value?) throws {
        guard let value else { return try rows.remove(kind + ":" + id) }
        try rows.put(
            try JSONEncoder().encode(value), forKey: kind + ":" + id, lookup: kind,
            due: value.expiresAt.addingTimeInterval(Self.retention))
    }

    private static func split(_ key: String) -> (String, String) {
        guard let colon = key.firstIndex(of: ":") else { return ("", key) }
        return (String(key[..<colon]), String(key[key.index(after: colon)...]))
    }
}

/// An IDaaS entity with an expiry: remembered ``IDaaSEmulatorState/retention`` beyond it.
protocol IDaaSExpiring {
    var expiresAt: Date { get }
}

extension IDaaSEmulatorState.Captcha: IDaaSExpiring {}
extension IDaaSEmulatorState.Grant: IDaaSExpiring {}
extension IDaaSEmulatorState.Code: IDaaSExpiring {}
extension IDaaSEmulatorState.Session: IDaaSExpiring {}
