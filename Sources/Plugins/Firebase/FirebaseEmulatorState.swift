import Foundation
import GatewayCore

/// What the Firebase emulator remembers, bounded and indexed so that a call costs the same however much it
/// holds; each session, user and per-number quota list is saved through the emulator's persistence when it
/// changes.
///
/// It holds codes in clear, like the Auth Emulator's own export: it is sandbox state, never production.
struct FirebaseEmulatorState: Sendable {
    /// One `sessionInfo` and the code it waits for.
    struct Session: Codable, Sendable, Equatable {
        var phoneNumber: String
        var code: String
        var createdAt: Date
        var expiresAt: Date
        var wrongCodes: Int = 0
        var isTestNumber: Bool
    }

    /// A Firebase user: the same phone always signs in as the same uid.
    struct User: Codable, Sendable, Equatable {
        var localID: String
        var createdAt: Date
    }

    /// Sessions by `sessionInfo`. A used session is removed; an expired one is kept a while so a late check
    /// hears `SESSION_EXPIRED` rather than `INVALID_SESSION_INFO`.
    private(set) var sessions: [String: Session] = [:]
    /// Users by E.164 number.
    private(set) var users: [String: User] = [:]
    /// Send times by E.164 number, for the per-number quota; only the last hour is kept.
    private(set) var sends: [String: [Date]] = [:]
    private var sessionsDue = DueQueue()
    private var sendsDue = DueQueue()
    private var dirty: Set<String> = []

    /// How long an expired session is still remembered.
    static let expiredRetention: TimeInterval = 3600
    /// The quota window.
    static let quotaWindow: TimeInterval = 3600

    init() {}

    /// Rebuilds the state from saved entities (the sandbox's persistence).
    init(restoring saved: [String: Data]) {
        let decoder = JSONDecoder()
        for (key, data) in saved.sorted(by: { $0.key < $1.key }) {
            let (kind, id) = Self.split(key)
            switch kind {
            case "session": if let session = try? decoder.decode(Session.self, from: data) { setSession(id, session) }
            case "user": if let user = try? decoder.decode(User.self, from: data) { setUser(id, user) }
            case "sends":
                if let times = try? decoder.decode([Date].self, from: data) {
                    for time in times { recordSend(to: id, at: time) }
                }
            default: continue
            }
        }
        dirty = []
    }

    mutating func setSession(_ sessionInfo: String, _ session: Session?) {
        if let session, sessions[sessionInfo] == nil {
            sessionsDue.append(sessionInfo, due: session.expiresAt.addingTimeInterval(Self.expiredRetention))
        }
        sessions[sessionInfo] = session
        dirty.insert("session:" + sessionInfo)
    }

    mutating func setUser(_ phoneNumber: String, _ user: User) {
        users[phoneNumber] = user
        dirty.insert("user:" + phoneNumber)
    }

    mutating func recordSend(to phoneNumber: String, at time: Date) {
        sends[phoneNumber, default: []].append(time)
        sendsDue.append(phoneNumber, due: time.addingTimeInterval(Self.quotaWindow))
        dirty.insert("sends:" + phoneNumber)
    }

    /// Forgets long-expired sessions and sends outside the quota window; costs only what is due.
    mutating func prune(now: Date) {
        for sessionInfo in sessionsDue.popDue(now) {
            guard let session = sessions[sessionInfo],
                session.expiresAt.addingTimeInterval(Self.expiredRetention) <= now
            else { continue }
            setSession(sessionInfo, nil)
        }
        let horizon = now.addingTimeInterval(-Self.quotaWindow)
        for phoneNumber in Set(sendsDue.popDue(now)) {
            let recent = sends[phoneNumber, default: []].filter { $0 > horizon }
            sends[phoneNumber] = recent.isEmpty ? nil : recent
            dirty.insert("sends:" + phoneNumber)
        }
    }

    /// Sends to `phoneNumber` within the quota window ending at `now`.
    func recentSends(to phoneNumber: String, now: Date) -> Int {
        let horizon = now.addingTimeInterval(-Self.quotaWindow)
        return sends[phoneNumber, default: []].count { $0 > horizon }
    }

    /// The entities changed since the last call, as the persistence takes them (`nil`: removed).
    mutating func takeChanges() -> [String: Data?] {
        guard !dirty.isEmpty else { return [:] }
        let encoder = JSONEncoder()
        var changes: [String: Data?] = [:]
        for key in dirty {
            let (kind, id) = Self.split(key)
            let value: Data?
            switch kind {
            case "session": value = sessions[id].flatMap { try? encoder.encode($0) }
            case "user": value = users[id].flatMap { try? encoder.encode($0) }
            default: value = sends[id].flatMap { try? encoder.encode($0) }
            }
            // `updateValue`, not the subscript: assigning nil through it would drop the deletion.
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
