import Foundation
import GatewayCore

/// The Twilio emulator's verifications, as rows of its ``EmulatorTable`` read and written inside one
/// transaction: a call reads the rows it needs (by SID, by `To`, or due) and writes the ones it changes, so
/// it costs the same, and the emulator holds nothing in memory, however many verifications there are.
struct TwilioEmulatorState: EmulatorRowsView {
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

    /// The table the verifications are rows of: keyed by SID, looked up by `To`, due when a pending one
    /// expires or a finished one is forgotten.
    static let table = "verifications"

    /// How long a finished verification is kept before it is forgotten entirely.
    static let retention: TimeInterval = 24 * 3600

    let rows: any EmulatorRows
    /// The call's time.
    let now: Date

    /// The verification stored under `sid` as of now: one whose window has passed (pending) or whose day
    /// of keeping has (finished) counts as gone even before a sweep reached it, as does a row this build
    /// cannot read.
    func verification(_ sid: String) throws -> Verification? {
        guard let verification = try rows.value(forKey: sid).flatMap(Self.decode) else { return nil }
        return Self.due(verification) <= now ? nil : verification
    }

    /// When a stored verification is next looked at: the end of its window while pending, then a day after
    /// its last change.
    static func due(_ verification: Verification) -> Date {
        verification.status == "pending"
            ? verification.expiresAt : verification.updatedAt.addingTimeInterval(retention)
    }

    static func decode(_ data: Data) -> Verification? {
        Verification(saved: data) ?? (try? JSONDecoder().decode(Verification.self, from: data))
    }

    /// Stores a verification. A soft-deleted one (approved, or expired) answers exactly as an unknown SID
    /// does (404), so it is forgotten at once: what the emulator holds is bounded by the verifications still
    /// live, not by its history.
    func put(_ verification: Verification) throws {
        if verification.deleted {
            try rows.remove(verification.sid)
            return
        }
        guard let saved = verification.saved else { throw TwilioEmulatorStateError.unencodable }
        try rows.put(saved, forKey: verification.sid, lookup: verification.to, due: Self.due(verification))
    }

    /// Removes up to ``sweepBatch`` verifications that are due (expired while pending, or kept a day since they
    /// finished), earliest first. Reads treat anything due as gone already (``verification(_:)``), so a
    /// call never pays for more than one batch, however many came due at once (a million verifications
    /// started in the same second expire together).
    func sweep() throws {
        for sid in try rows.keysDue(at: now, limit: Self.sweepBatch) {
            try rows.remove(sid)
        }
    }

    /// The newest live verification of `to` whose status is one of `statuses`.
    func current(for to: String, statuses: Set<String>) throws -> Verification? {
        for sid in try rows.keys(lookup: to).reversed() {
            if let verification = try verification(sid), !verification.deleted,
                statuses.contains(verification.status)
            {
                return verification
            }
        }
        return nil
    }
}

/// A verification the emulator could not write as a row (a date that is not finite).
enum TwilioEmulatorStateError: Error {
    case unencodable
}

extension TwilioEmulatorState.Verification {
    /// A row written by ``saved``, read back without `JSONDecoder` (the larger part of a restart's time with
    /// many live verifications; BENCHMARKS.md): the same value `JSONDecoder` gives for such a row, or `nil`
    /// for anything else (a row written by `JSONEncoder`, a missing or mistyped field), which the caller
    /// decodes with `JSONDecoder` as before.
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
