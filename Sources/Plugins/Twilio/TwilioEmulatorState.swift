import Foundation
import GatewayCore

/// Everything the Twilio emulator remembers, indexed so that a call costs the same however much it holds;
/// each verification is saved through the emulator's persistence when it changes.
struct TwilioEmulatorState: Sendable {
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
    private(set) var verifications: [String: Verification] = [:]
    /// SIDs per `To`, oldest first: the pending verification of a number is found without a scan.
    private var byTo: [String: [String]] = [:]
    /// SIDs by the end of their window, and by the time they are forgotten: sweeps take what is due.
    private var expiring = DueQueue()
    private var forgetting = DueQueue()
    /// SIDs changed since the last ``takeChanges()``.
    private var dirty: Set<String> = []

    /// How long a finished verification is kept before it is forgotten entirely.
    static let retention: TimeInterval = 24 * 3600

    init() {}

    /// Rebuilds the state from saved verifications (the sandbox's persistence), oldest first.
    /// Soft-deleted verifications saved by an earlier version are dropped, and their rows deleted.
    init(restoring saved: [Verification]) {
        for verification in saved.sorted(by: { ($0.createdAt, $0.sid) < ($1.createdAt, $1.sid) }) {
            if verification.deleted {
                dirty.insert(verification.sid)
            } else {
                put(verification)
            }
        }
        dirty = dirty.filter { verifications[$0] == nil }
    }

    func verification(_ sid: String) -> Verification? { verifications[sid] }

    /// Inserts or replaces a verification and marks it changed. A soft-deleted one (approved, or expired)
    /// answers exactly as an unknown SID does (404), so it is forgotten at once: what the emulator holds,
    /// in memory and in its persistence, is bounded by the verifications still live, not by its history.
    mutating func put(_ verification: Verification) {
        if verification.deleted {
            forget(verification.sid)
            return
        }
        if verifications[verification.sid] == nil {
            byTo[verification.to, default: []].append(verification.sid)
            expiring.append(verification.sid, due: verification.expiresAt)
            forgetting.append(verification.sid, due: verification.expiresAt.addingTimeInterval(Self.retention))
        }
        verifications[verification.sid] = verification
        dirty.insert(verification.sid)
    }

    private mutating func forget(_ sid: String) {
        guard let verification = verifications.removeValue(forKey: sid) else { return }
        byTo[verification.to]?.removeAll { $0 == sid }
        if byTo[verification.to]?.isEmpty == true { byTo[verification.to] = nil }
        dirty.insert(sid)
    }

    /// Expires pending verifications whose window has passed and forgets old ones; costs only what is due.
    mutating func sweep(now: Date) {
        for sid in expiring.popDue(now) {
            guard var verification = verifications[sid], verification.status == "pending" else { continue }
            verification.status = "expired"
            verification.deleted = true
            verification.updatedAt = verification.expiresAt
            put(verification)
        }
        for sid in forgetting.popDue(now) {
            guard let verification = verifications[sid] else { continue }
            let forgetAt = verification.updatedAt.addingTimeInterval(Self.retention)
            if forgetAt < now {
                forget(sid)
            } else {
                forgetting.append(sid, due: forgetAt)
            }
        }
    }

    /// The newest live verification of `to` whose status is one of `statuses`.
    func current(for to: String, statuses: Set<String>) -> Verification? {
        for sid in (byTo[to] ?? []).reversed() {
            if let verification = verifications[sid], !verification.deleted, statuses.contains(verification.status) {
                return verification
            }
        }
        return nil
    }

    /// The verifications changed since the last call, as the persistence takes them (`nil`: forgotten).
    mutating func takeChanges() -> [String: Data?] {
        guard !dirty.isEmpty else { return [:] }
        var changes: [String: Data?] = [:]
        for sid in dirty {
            // `updateValue`, not the subscript: assigning nil through it would drop the deletion.
            changes.updateValue(verifications[sid].flatMap(\.saved), forKey: sid)
        }
        dirty = []
        return changes
    }
}

extension TwilioEmulatorState.Verification {
    /// A row written by ``saved``, read back without `JSONDecoder` (60% of a restart's time with 118,000 live
    /// verifications, issue 13): the same value `JSONDecoder` gives for such a row, or `nil` for anything
    /// else (a row written by `JSONEncoder`, a missing or mistyped field), which the caller decodes with
    /// `JSONDecoder` as before.
    init?(saved data: Data) {
        guard case .object(let fields)? = JSONValue.parse(data),
            let sid = fields["sid"]?.stringValue, let to = fields["to"]?.stringValue,
            let channel = fields["channel"]?.stringValue, let code = fields["code"]?.stringValue,
            let status = fields["status"]?.stringValue, let checks = Self.int(fields["checks"]),
            case .array(let attempts)? = fields["sendAttempts"],
            let createdAt = fields["createdAt"]?.numberValue, let updatedAt = fields["updatedAt"]?.numberValue,
            let deleted = fields["deleted"]?.boolValue
        else { return nil }
        var sendAttempts: [TwilioEmulatorState.SendAttempt] = []
        sendAttempts.reserveCapacity(attempts.count)
        for attempt in attempts {
            guard let time = attempt["time"]?.numberValue, let channel = attempt["channel"]?.stringValue,
                let attemptSID = attempt["attemptSID"]?.stringValue
            else { return nil }
            sendAttempts.append(
                TwilioEmulatorState.SendAttempt(
                    time: Date(timeIntervalSinceReferenceDate: time), channel: channel, attemptSID: attemptSID))
        }
        self.init(
            sid: sid, to: to, channel: channel, code: code, status: status, checks: checks,
            sendAttempts: sendAttempts, createdAt: Date(timeIntervalSinceReferenceDate: createdAt),
            updatedAt: Date(timeIntervalSinceReferenceDate: updatedAt), deleted: deleted)
    }

    /// A whole number that fits `Int`, as `JSONDecoder` reads one.
    private static func int(_ value: JSONValue?) -> Int? {
        guard let number = value?.numberValue, number.rounded() == number, abs(number) < 9.0e15 else { return nil }
        return Int(number)
    }

    /// The saved row: JSON that `JSONDecoder` reads back as this verification (its `Codable` keys, dates as
    /// seconds since the reference date, as `JSONEncoder()` writes them), written directly rather than
    /// through a `JSONEncoder` per change; `JSONEncoder` when a date is not finite.
    var saved: Data? {
        var out = "{\"sid\":"
        JSONTextWriter.writeString(sid, into: &out)
        out += ",\"to\":"
        JSONTextWriter.writeString(to, into: &out)
        out += ",\"channel\":"
        JSONTextWriter.writeString(channel, into: &out)
        out += ",\"code\":"
        JSONTextWriter.writeString(code, into: &out)
        out += ",\"status\":"
        JSONTextWriter.writeString(status, into: &out)
        out += ",\"checks\":" + String(checks) + ",\"sendAttempts\":["
        var finite = true
        for (index, attempt) in sendAttempts.enumerated() {
            out += index == 0 ? "{\"time\":" : ",{\"time\":"
            finite = finite && JSONTextWriter.write(number: attempt.time.timeIntervalSinceReferenceDate, into: &out)
            out += ",\"channel\":"
            JSONTextWriter.writeString(attempt.channel, into: &out)
            out += ",\"attemptSID\":"
            JSONTextWriter.writeString(attempt.attemptSID, into: &out)
            out += "}"
        }
        out += "],\"createdAt\":"
        finite = finite && JSONTextWriter.write(number: createdAt.timeIntervalSinceReferenceDate, into: &out)
        out += ",\"updatedAt\":"
        finite = finite && JSONTextWriter.write(number: updatedAt.timeIntervalSinceReferenceDate, into: &out)
        out += deleted ? ",\"deleted\":true}" : ",\"deleted\":false}"
        return finite ? Data(out.utf8) : try? JSONEncoder().encode(self)
    }
}
