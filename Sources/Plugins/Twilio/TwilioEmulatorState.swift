import Foundation

/// Everything the Twilio emulator remembers; `Codable` so the sandbox survives a restart.
struct TwilioEmulatorState: Codable, Sendable, Equatable {
    /// One verification as the emulated Twilio keeps it.
    struct Verification: Codable, Sendable, Equatable {
        var sid: String
        var to: String
        /// The Twilio channel of the latest send (`sms`, `call`, `whatsapp`, `email`).
        var channel: String
        /// The code in clear: the emulator plays the vendor, whose job is to know it.
        var code: String
        /// `pending`, `approved`, `canceled`, `max_attempts_reached` or `expired`.
        var status: String
        var checks: Int
        var sendAttempts: [SendAttempt]
        var createdAt: Date
        var updatedAt: Date
        /// Twilio soft-deletes approved and expired verifications: they answer 404 from then on.
        var deleted: Bool

        var expiresAt: Date { createdAt.addingTimeInterval(TwilioWire.validity) }
    }

    struct SendAttempt: Codable, Sendable, Equatable {
        var time: Date
        var channel: String
        var attemptSID: String
    }

    /// Verifications by SID.
    var verifications: [String: Verification] = [:]

    /// How long a finished verification is kept before it is forgotten entirely.
    static let retention: TimeInterval = 24 * 3600

    /// Expires pending verifications whose window has passed and forgets old ones.
    mutating func sweep(now: Date) {
        for (sid, verification) in verifications {
            if verification.updatedAt.addingTimeInterval(Self.retention) < now
                && verification.expiresAt.addingTimeInterval(Self.retention) < now
            {
                verifications[sid] = nil
            } else if verification.status == "pending", now >= verification.expiresAt {
                verifications[sid]?.status = "expired"
                verifications[sid]?.deleted = true
                verifications[sid]?.updatedAt = verification.expiresAt
            }
        }
    }

    /// The newest live verification of `to` whose status is one of `statuses`.
    func current(for to: String, statuses: Set<String>) -> Verification? {
        verifications.values
            .filter { $0.to == to && !$0.deleted && statuses.contains($0.status) }
            .max { $0.createdAt < $1.createdAt }
    }
}
