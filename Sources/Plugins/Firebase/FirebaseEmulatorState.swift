import Foundation

/// What the Firebase emulator remembers, Codable so the sandbox survives a restart.
///
/// It holds codes in clear, like the Auth Emulator's own export: it is sandbox state, never production.
struct FirebaseEmulatorState: Codable, Sendable, Equatable {
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
    var sessions: [String: Session] = [:]
    /// Users by E.164 number.
    var users: [String: User] = [:]
    /// Send times by E.164 number, for the per-number quota; only the last hour is kept.
    var sends: [String: [Date]] = [:]

    /// How long an expired session is still remembered.
    static let expiredRetention: TimeInterval = 3600
    /// The quota window.
    static let quotaWindow: TimeInterval = 3600

    /// Forgets long-expired sessions and sends outside the quota window, so state stays bounded.
    mutating func prune(now: Date) {
        sessions = sessions.filter { $0.value.expiresAt.addingTimeInterval(Self.expiredRetention) > now }
        let horizon = now.addingTimeInterval(-Self.quotaWindow)
        sends = sends.compactMapValues { times in
            let recent = times.filter { $0 > horizon }
            return recent.isEmpty ? nil : recent
        }
    }

    /// Sends to `phoneNumber` within the quota window ending at `now`.
    func recentSends(to phoneNumber: String, now: Date) -> Int {
        let horizon = now.addingTimeInterval(-Self.quotaWindow)
        return sends[phoneNumber, default: []].count { $0 > horizon }
    }
}
