import Foundation
import GatewayCore

/// What the Sinch emulator remembers, as rows of its ``EmulatorTable`` read and written inside one
/// transaction per call: a call reads the rows it needs, so it costs the same, and the emulator holds nothing
/// in memory, however many verifications there are.
struct SinchEmulatorState: EmulatorRowsView {
    struct Verification: Codable, Sendable, Equatable {
        var id: String
        /// Sinch's lower-case method (`sms`, `flashcall`, `callout`, `seamless`, `whatsapp`).
        var method: String
        var endpoint: String
        var reference: String?
        var custom: String?
        /// The code; a flash call's caller number; a seamless verification's URL token.
        var secret: String
        /// `PENDING`, `SUCCESSFUL`, `FAIL`, `DENIED`, `ABORTED` or `ERROR`.
        var status: String
        var reason: String?
        var source: String?
        var language: String?
        var countryID: String?
        var createdAt: Date
        var updatedAt: Date
        var expiresAt: Date
    }

    /// The table the state is rows of (``EmulatorTable``): `verification:<id>` looked up by
    /// `endpoint:<E.164>`, `reference:<reference>` holding the id it names, and `starts:<E.164>` holding the
    /// number's start times of the last minute. A verification and its reference are due when the
    /// verification is forgotten, a start list when its oldest time leaves the window.
    static let table = "verifications"

    /// How long a verification is kept after it was created.
    static let retention: TimeInterval = 24 * 3600
    /// Starts to one number within ``velocityWindow`` before 42901 (VelocityConstraint).
    static let velocityLimit = 5
    static let velocityWindow: TimeInterval = 60
    let rows: any EmulatorRows
    /// The call's time.
    let now: Date

    /// A verification, with a pending one past its time settled as `FAIL`/`Expired` first.
    func verification(_ id: String) throws -> Verification? {
        guard var verification = try stored(id) else { return nil }
        if verification.status == "PENDING", now >= verification.expiresAt {
            verification.status = "FAIL"
            verification.reason = "Expired"
            verification.updatedAt = verification.expiresAt
            try put(verification)
        }
        return verification
    }

    func verification(reference: String) throws -> Verification? {
        guard let id = try rows.value(forKey: "reference:" + reference) else { return nil }
        return try verification(String(decoding: id, as: UTF8.self))
    }

    /// The newest verification of `endpoint` (with `method`, when given).
    func newest(endpoint: String, method: String?) throws -> Verification? {
        for key in try rows.keys(lookup: "endpoint:" + endpoint).reversed() {
            let id = String(key.dropFirst("verification:".count))
            if let found = try stored(id), method == nil || found.method == method {
                return try verification(id)
            }
        }
        return nil
    }

    func isReferenceTaken(_ reference: String) throws -> Bool {
        guard let id = try rows.value(forKey: "reference:" + reference) else { return false }
        return try stored(String(decoding: id, as: UTF8.self)) != nil
    }

    func put(_ verification: Verification) throws {
        let due = verification.createdAt.addingTimeInterval(Self.retention)
        try rows.put(
            try JSONEncoder().encode(verification), forKey: "verification:" + verification.id,
            lookup: "endpoint:" + verification.endpoint, due: due)
        if let reference = verification.reference {
            try rows.put(Data(verification.id.utf8), forKey: "reference:" + reference, lookup: "reference", due: due)
        }
    }

    /// A new start makes every pending verification of the number `ABORTED` (docs/vendors/sinch.md §3.1).
    func abortPending(endpoint: String) throws {
        for key in try rows.keys(lookup: "endpoint:" + endpoint) {
            guard var verification = try verification(String(key.dropFirst("verification:".count))),
                verification.status == "PENDING"
            else { continue }
            verification.status = "ABORTED"
            verification.reason = nil
            verification.updatedAt = now
            try put(verification)
        }
    }

    /// Counts a start to `endpoint`; `false` when it is one too many for the window.
    func admitStart(endpoint: String) throws -> Bool {
        let recent = try starts(endpoint)
        guard recent.count < Self.velocityLimit else { return false }
        try setStarts(endpoint, recent + [now])
        return true
    }

    /// Forgets verifications past their retention and trims start lists: at most ``sweepBatch`` due rows.
    func sweep() throws {
        for key in try rows.keysDue(at: now, limit: Self.sweepBatch) {
            if key.hasPrefix("starts:") {
                let endpoint = String(key.dropFirst("starts:".count))
                try setStarts(endpoint, try starts(endpoint))
            } else {
                try rows.remove(key)
            }
        }
    }

    /// Moves verifications an earlier version saved one by one (all read back at startup) into the table.
    func move(_ saved: [Verification]) throws {
        for verification in saved.sorted(by: { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) })
        where verification.createdAt.addingTimeInterval(Self.retention) > now {
            try put(verification)
        }
    }

    // MARK: rows

    /// The stored verification, as it was written; one kept past its retention counts as gone.
    private func stored(_ id: String) throws -> Verification? {
        guard let data = try rows.value(forKey: "verification:" + id),
            let verification = try? JSONDecoder().decode(Verification.self, from: data),
            verification.createdAt.addingTimeInterval(Self.retention) > now
        else { return nil }
        return verification
    }

    /// The number's start times within the window ending now.
    private func starts(_ endpoint: String) throws -> [Date] {
        guard let data = try rows.value(forKey: "starts:" + endpoint),
            let times = try? JSONDecoder().decode([Date].self, from: data)
        else { return [] }
        return times.filter { $0.addingTimeInterval(Self.velocityWindow) > now }
    }

    private func setStarts(_ endpoint: String, _ times: [Date]) throws {
        guard let oldest = times.min() else { return try rows.remove("starts:" + endpoint) }
        try rows.put(
            try JSONEncoder().encode(times), forKey: "starts:" + endpoint, lookup: "starts",
            due: oldest.addingTimeInterval(Self.velocityWindow))
    }
}
