import Foundation
import GatewayCore

/// What the IDaaS emulator remembers, each entity saved through the emulator's persistence when it changes
/// and swept with a ``DueQueue`` once long expired, so a call costs the same however much it holds.
/// Sandbox state: codes and answers in clear, never production.
struct IDaaSEmulatorState: Sendable {
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

    /// A tenant user, by E.164 number: created on the first sign-in (idaas.md §2.4, auto-registration).
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

    private(set) var captchas: [String: Captcha] = [:]
    private(set) var grants: [String: Grant] = [:]
    private(set) var codes: [String: Code] = [:]
    private(set) var users: [String: User] = [:]
    private(set) var sessions: [String: Session] = [:]
    private var due = DueQueue()
    private var dirty: Set<String> = []

    /// How long an expired entity is still remembered, so a late call hears "expired", not "unknown".
    static let retention: TimeInterval = 3600

    init() {}

    init(restoring saved: [String: Data]) {
        let decoder = JSONDecoder()
        for (key, data) in saved.sorted(by: { $0.key < $1.key }) {
            let (kind, id) = Self.split(key)
            switch kind {
            case "captcha": setCaptcha(id, try? decoder.decode(Captcha.self, from: data))
            case "grant": setGrant(id, try? decoder.decode(Grant.self, from: data))
            case "code": setCode(id, try? decoder.decode(Code.self, from: data))
            case "user": setUser(id, try? decoder.decode(User.self, from: data))
            case "session": setSession(id, try? decoder.decode(Session.self, from: data))
            default: continue
            }
        }
        dirty = []
    }

    mutating func setCaptcha(_ id: String, _ value: Captcha?) {
        if let value { due.append("captcha:" + id, due: value.expiresAt.addingTimeInterval(Self.retention)) }
        captchas[id] = value
        dirty.insert("captcha:" + id)
    }

    mutating func setGrant(_ id: String, _ value: Grant?) {
        if let value, grants[id] == nil {
            due.append("grant:" + id, due: value.expiresAt.addingTimeInterval(Self.retention))
        }
        grants[id] = value
        dirty.insert("grant:" + id)
    }

    mutating func setCode(_ id: String, _ value: Code?) {
        if let value { due.append("code:" + id, due: value.expiresAt.addingTimeInterval(Self.retention)) }
        codes[id] = value
        dirty.insert("code:" + id)
    }

    mutating func setUser(_ id: String, _ value: User?) {
        users[id] = value
        dirty.insert("user:" + id)
    }

    mutating func setSession(_ id: String, _ value: Session?) {
        if let value, sessions[id] == nil {
            due.append("session:" + id, due: value.expiresAt.addingTimeInterval(Self.retention))
        }
        sessions[id] = value
        dirty.insert("session:" + id)
    }

    /// Forgets what expired more than ``retention`` ago; costs only what is due.
    mutating func prune(now: Date) {
        let horizon = now.addingTimeInterval(-Self.retention)
        for key in due.popDue(now) {
            let (kind, id) = Self.split(key)
            switch kind {
            case "captcha": if let value = captchas[id], value.expiresAt <= horizon { setCaptcha(id, nil) }
            case "grant": if let value = grants[id], value.expiresAt <= horizon { setGrant(id, nil) }
            case "code": if let value = codes[id], value.expiresAt <= horizon { setCode(id, nil) }
            case "session": if let value = sessions[id], value.expiresAt <= horizon { setSession(id, nil) }
            default: continue
            }
        }
    }

    /// The entities changed since the last call (`nil`: removed).
    mutating func takeChanges() -> [String: Data?] {
        guard !dirty.isEmpty else { return [:] }
        let encoder = JSONEncoder()
        var changes: [String: Data?] = [:]
        for key in dirty {
            let (kind, id) = Self.split(key)
            let value: Data?
            switch kind {
            case "captcha": value = captchas[id].flatMap { try? encoder.encode($0) }
            case "grant": value = grants[id].flatMap { try? encoder.encode($0) }
            case "code": value = codes[id].flatMap { try? encoder.encode($0) }
            case "user": value = users[id].flatMap { try? encoder.encode($0) }
            default: value = sessions[id].flatMap { try? encoder.encode($0) }
            }
            changes.updateValue(value, forKey: key)
        }
        dirty = []
        return changes
    }

    private static func split(_ key: String) -> (String, String) {
        guard let colon = key.firstIndex(of: ":") else { return ("", key) }
        return (String(key[..<colon]), String(key[key.index(after: colon)...]))
    }
}
