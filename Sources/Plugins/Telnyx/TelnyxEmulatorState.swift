import Foundation
import GatewayCore

/// What the Telnyx emulator remembers: one row per verification in its ``EmulatorTable``, looked up by number,
/// read and written inside one transaction per call, so a call costs the same however many there are.
struct TelnyxEmulatorState: EmulatorRowsView {
    struct Record: Codable, Sendable, Equatable {
        var id: String
        var type: String
        var phoneNumber: String
        var profile: String
        var code: String
        var timeoutSecs: Int
        var createdAt: Date
        var updatedAt: Date
        /// `pending`, `accepted`, `expired`.
        var status: String
        var failedAttempts: Int

        var expiresAt: Date { createdAt.addingTimeInterval(TimeInterval(timeoutSecs)) }

        /// The record as of `now`: a pending one past its timeout is expired.
        func at(_ now: Date) -> Record {
            guard status == "pending", now >= expiresAt else { return self }
            var expired = self
            expired.status = "expired"
            expired.updatedAt = expiresAt
            return expired
        }

        /// A time as Telnyx writes a resource's (ISO 8601 without a zone, with fractional seconds).
        static func timestamp(_ date: Date) -> String {
            date.formatted(
                Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day().dateTimeSeparator(.standard)
                    .time(includingFractionalSeconds: true))
        }

        var wire: Verification {
            Verification(
                id: id, type: type, phoneNumber: phoneNumber, verifyProfileId: profile, customCode: nil,
                timeoutSecs: timeoutSecs, status: status, createdAt: Self.timestamp(createdAt),
                updatedAt: Self.timestamp(updatedAt))
        }
    }

    /// Telnyx's `Verification` as the emulator answers it: every field of [SPEC]'s schema.
    struct Verification: Codable, Sendable, Equatable {
        var id: String
        var type: String
        var recordType = "verification"
        var phoneNumber: String
        var verifyProfileId: String
        var customCode: String?
        var timeoutSecs: Int
        var status: String
        var createdAt: String
        var updatedAt: String
    }

    /// The table the state is rows of: `verification:<id>`, looked up by `number:<+E.164>`, due (forgotten)
    /// ``retention`` after its code expired.
    static let table = "verifications"
    static let retention: TimeInterval = 86_400

    let rows: any EmulatorRows
    let now: Date

    /// Forgets verifications whose retention ended, at most ``sweepBatch`` per call.
    func sweep() throws {
        for key in try rows.keysDue(at: now, limit: Self.sweepBatch) { try rows.remove(key) }
    }

    func record(_ id: String) throws -> Record? {
        try rows.value(forKey: "verification:" + id).flatMap { try? JSONDecoder().decode(Record.self, from: $0) }?.at(
            now)
    }

    /// The verifications of `number`, newest first (by creation; the later stored first when created together).
    func records(number: String) throws -> [Record] {
        try rows.keys(lookup: "number:" + number).reversed().compactMap { key in
            try record(String(key.dropFirst("verification:".count)))
        }.sorted { $0.createdAt > $1.createdAt }
    }

    func put(_ record: Record) throws {
        try rows.put(
            try JSONEncoder().encode(record), forKey: "verification:" + record.id,
            lookup: "number:" + record.phoneNumber,
            due: record.expiresAt.addingTimeInterval(Self.retention))
    }
}
