import Foundation
import GatewayCore

/// What the Firebase emulator remembers (sessions, users, per-number send times, email and password users and
/// their pending credentials), as rows of its
/// ``EmulatorTable`` read and written inside one transaction per call: a call reads the rows it needs, so it
/// costs the same, and the emulator holds nothing in memory, however many there are.
///
/// It holds codes in clear, like the Auth Emulator's own export: it is sandbox state, never production.
struct FirebaseEmulatorState: EmulatorRowsView {
    /// One `sessionInfo` and the code it waits for.
    struct Session: Codable, Sendable, Equatable {
        var phoneNumber: String
        var code: String
        var createdAt: Date
        var expiresAt: Date
        var wrongCodes: Int = 0
        var isTestNumber: Bool
        /// The second-factor step the code belongs to; `nil` for a phone sign-in's code. A code answers only
        /// the method of its own step, for its own user.
        var multiFactor: SessionStep?
    }

    /// Whose second factor a session's code is: a sign-in's (the user and the factor) or an enrollment's.
    struct SessionStep: Codable, Sendable, Equatable {
        var localID: String
        /// The factor a sign-in verifies; `nil` for an enrollment.
        var enrollmentID: String?
    }

    /// An email and password user, the first factor of the multi-factor flows, with the phone second factors
    /// it enrolled.
    struct Account: Codable, Sendable, Equatable {
        var localID: String
        var email: String
        /// SHA-256 of the salt and the password, in hex.
        var passwordHash: String
        var salt: String
        var emailVerified: Bool
        var displayName: String?
        var disabled: Bool = false
        var createdAt: Date
        var factors: [Factor]

        struct Factor: Codable, Sendable, Equatable {
            var enrollmentID: String
            var phoneNumber: String
            var displayName: String?
            var enrolledAt: Date
        }
    }

    /// The proof that a user passed the first factor, which a multi-factor sign-in's start and finalize take.
    struct PendingCredential: Codable, Sendable, Equatable {
        var localID: String
        var signInProvider: String
        var expiresAt: Date
    }

    /// A Firebase user: the same phone always signs in as the same uid.
    struct User: Codable, Sendable, Equatable {
        var localID: String
        var createdAt: Date
    }

    /// The table the state is rows of (``EmulatorTable``), one row per entity under the keys the emulator
    /// saved entities under before (`session:<sessionInfo>`, `user:<E.164>`, `sends:<E.164>`), looked up by
    /// kind, each due when it is next looked at (never, for a user).
    static let table = "state"

    /// How long an expired session is still remembered.
    static let expiredRetention: TimeInterval = 3600
    /// The quota window.
    static let quotaWindow: TimeInterval = 3600
    let rows: any EmulatorRows
    /// The call's time.
    let now: Date

    /// The session `sessionInfo`, while it is remembered (an expired one for an hour, so a late check hears
    /// `SESSION_EXPIRED` rather than `INVALID_SESSION_INFO`).
    func session(_ sessionInfo: String) throws -> Session? {
        guard let session = try decode(Session.self, "session:" + sessionInfo) else { return nil }
        return Self.due(session) <= now ? nil : session
    }

    /// Stores a session, or forgets it (`nil`: a used session).
    func setSession(_ sessionInfo: String, _ session: Session?) throws {
        guard let session else { return try rows.remove("session:" + sessionInfo) }
        try rows.put(
            try JSONEncoder().encode(session), forKey: "session:" + sessionInfo, lookup: "session",
            due: Self.due(session))
    }

    /// The user of a number: the same phone always signs in as the same uid, so users are never due.
    func user(_ phoneNumber: String) throws -> User? {
        try decode(User.self, "user:" + phoneNumber)
    }

    func setUser(_ phoneNumber: String, _ user: User) throws {
        try rows.put(try JSONEncoder().encode(user), forKey: "user:" + phoneNumber, lookup: "user", due: .distantFuture)
    }

    /// The email and password user `localID`.
    func account(_ localID: String) throws -> Account? {
        try decode(Account.self, "account:" + localID)
    }

    /// Stores a user, and the lookup from its email (lower-cased) to it.
    func setAccount(_ account: Account) throws {
        try rows.put(
            try JSONEncoder().encode(account), forKey: "account:" + account.localID, lookup: "account",
            due: .distantFuture)
        try rows.put(
            Data(account.localID.utf8), forKey: "email:" + account.email.lowercased(), lookup: "email",
            due: .distantFuture)
    }

    /// The user whose email this is (any case).
    func account(email: String) throws -> Account? {
        guard let id = try rows.value(forKey: "email:" + email.lowercased()) else { return nil }
        return try account(String(decoding: id, as: UTF8.self))
    }

    /// A pending credential while it is valid (an expired one is due, and reads as unknown).
    func pendingCredential(_ credential: String) throws -> PendingCredential? {
        guard let pending = try decode(PendingCredential.self, "pending:" + credential) else { return nil }
        return pending.expiresAt <= now ? nil : pending
    }

    func setPendingCredential(_ credential: String, _ pending: PendingCredential) throws {
        try rows.put(
            try JSONEncoder().encode(pending), forKey: "pending:" + credential, lookup: "pending",
            due: pending.expiresAt)
    }

    /// Sends to `phoneNumber` within the quota window ending at `now`.
    func recentSends(to phoneNumber: String) throws -> Int {
        let horizon = now.addingTimeInterval(-Self.quotaWindow)
        return try sends(phoneNumber).count { $0 > horizon }
    }

    func recordSend(to phoneNumber: String, at time: Date) throws {
        let horizon = time.addingTimeInterval(-Self.quotaWindow)
        try setSends(phoneNumber, try sends(phoneNumber).filter { $0 > horizon } + [time])
    }

    /// Forgets long-expired sessions and trims send lists to the quota window: at most ``sweepBatch`` due
    /// rows, earliest first.
    func sweep() throws {
        let horizon = now.addingTimeInterval(-Self.quotaWindow)
        for key in try rows.keysDue(at: now, limit: Self.sweepBatch) {
            let (kind, id) = Self.split(key)
            if kind == "sends" {
                try setSends(id, try sends(id).filter { $0 > horizon })
            } else if kind != "user", kind != "account", kind != "email" {
                try rows.remove(key)
            }
        }
    }

    /// The sessions whose code is still waiting at `now`, oldest first (the inspection endpoint).
    func waitingSessions() throws -> [(sessionInfo: String, session: Session)] {
        try rows.keys(lookup: "session").compactMap { key in
            guard let session = try decode(Session.self, key), session.expiresAt > now else { return nil }
            return (String(key.dropFirst("session:".count)), session)
        }.sorted { ($0.session.createdAt, $0.sessionInfo) < ($1.session.createdAt, $1.sessionInfo) }
    }

    /// Moves entities an earlier version saved through ``EmulatorPersistence/save(_:)`` (all read back at
    /// startup) into the table, under the same keys; unreadable ones are dropped.
    func move(_ saved: [String: Data]) throws {
        let decoder = JSONDecoder()
        for (key, data) in saved {
            let (kind, id) = Self.split(key)
            switch kind {
            case "session":
                if let session = try? decoder.decode(Session.self, from: data) { try setSession(id, session) }
            case "user": if let user = try? decoder.decode(User.self, from: data) { try setUser(id, user) }
            case "sends":
                if let times = try? decoder.decode([Date].self, from: data) { try setSends(id, times.sorted()) }
            default: continue
            }
        }
    }

    // MARK: rows

    private static func due(_ session: Session) -> Date { session.expiresAt.addingTimeInterval(expiredRetention) }

    private func sends(_ phoneNumber: String) throws -> [Date] {
        try decode([Date].self, "sends:" + phoneNumber) ?? []
    }

    /// Stores a number's send times (oldest first), due when the oldest leaves the window; none: removed.
    private func setSends(_ phoneNumber: String, _ times: [Date]) throws {
        guard let oldest = times.first else { return try rows.remove("sends:" + phoneNumber) }
        try rows.put(
            try JSONEncoder().encode(times), forKey: "sends:" + phoneNumber, lookup: "sends",
            due: oldest.addingTimeInterval(Self.quotaWindow))
    }

    private func decode<T: Decodable>(_ type: T.Type, _ key: String) throws -> T? {
        try rows.value(forKey: key).flatMap { try? JSONDecoder().decode(type, from: $0) }
    }

    static func split(_ key: String) -> (String, String) {
        guard let colon = key.firstIndex(of: ":") else { return ("", key) }
        return (String(key[..<colon]), String(key[key.index(after: colon)...]))
    }
}
