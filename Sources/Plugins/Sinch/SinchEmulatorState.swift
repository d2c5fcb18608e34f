import Foundation
import GatewayCore

/// Everything the Sinch emulator remembers, indexed so a call costs the same however much it holds; each
/// verification is saved through the emulator's persistence when it changes.
struct SinchEmulatorState: Sendable {
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

    private(set) var verifications: [String: Verification] = [:]
    private var byReference: [String: String] = [:]
    /// Ids per number, oldest first.
    private var byEndpoint: [String: [String]] = [:]
    /// Start times per number in the last minute, for 42901.
    private var recentStarts: [String: [Date]] = [:]
    private var startWindows = DueQueue()
    private var forgetting = DueQueue()
    private var dirty: Set<String> = []

    /// How long a verification is kept after it was created.
    static let retention: TimeInterval = 24 * 3600
    /// Starts to one number within ``velocityWindow`` before 42901 (VelocityConstraint).
    static let velocityLimit = 5
    static let velocityWindow: TimeInterval = 60

    init() {}

    init(restoring saved: [Verification]) {
        for verification in saved.sorted(by: { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }) {
            put(verification)
        }
        dirty = []
    }

    /// A verification, with a pending one past its time settled as `FAIL`/`Expired` first.
    mutating func verification(_ id: String, now: Date) -> Verification? {
        guard var verification = verifications[id] else { return nil }
        if verification.status == "PENDING", now >= verification.expiresAt {
            verification.status = "FAIL"
            verification.reason = "Expired"
            verification.updatedAt = verification.expiresAt
            put(verification)
        }
        return verification
    }

    mutating func verification(reference: String, now: Date) -> Verification? {
        byReference[reference].flatMap { verification($0, now: now) }
    }

    /// The newest verification of `endpoint` (with `method`, when given).
    mutating func newest(endpoint: String, method: String?, now: Date) -> Verification? {
        for id in (byEndpoint[endpoint] ?? []).reversed() {
            if let found = verifications[id], method == nil || found.method == method {
                return verification(id, now: now)
            }
        }
        return nil
    }

    func isReferenceTaken(_ reference: String) -> Bool { byReference[reference] != nil }

    mutating func put(_ verification: Verification) {
        if verifications[verification.id] == nil {
            byEndpoint[verification.endpoint, default: []].append(verification.id)
            if let reference = verification.reference { byReference[reference] = verification.id }
            forgetting.append(verification.id, due: verification.createdAt.addingTimeInterval(Self.retention))
        }
        verifications[verification.id] = verification
        dirty.insert(verification.id)
    }

    /// A new start makes every pending verification of the number `ABORTED` (sinch.md §3.1).
    mutating func abortPending(endpoint: String, now: Date) {
        for id in byEndpoint[endpoint] ?? [] {
            guard var verification = self.verification(id, now: now), verification.status == "PENDING" else { continue }
            verification.status = "ABORTED"
            verification.reason = nil
            verification.updatedAt = now
            put(verification)
        }
    }

    /// Counts a start to `endpoint`; `false` when it is one too many for the window.
    mutating func admitStart(endpoint: String, now: Date) -> Bool {
        for number in startWindows.popDue(now) {
            recentStarts[number]?.removeAll { $0.addingTimeInterval(Self.velocityWindow) <= now }
            if recentStarts[number]?.isEmpty == true { recentStarts[number] = nil }
        }
        let recent = (recentStarts[endpoint] ?? []).filter { $0.addingTimeInterval(Self.velocityWindow) > now }
        guard recent.count < Self.velocityLimit else { return false }
        recentStarts[endpoint] = recent + [now]
        startWindows.append(endpoint, due: now.addingTimeInterval(Self.velocityWindow))
        return true
    }

    /// Forgets verifications past their retention; costs only what is due.
    mutating func sweep(now: Date) {
        for id in forgetting.popDue(now) {
            guard let verification = verifications.removeValue(forKey: id) else { continue }
            byEndpoint[verification.endpoint]?.removeAll { $0 == id }
            if byEndpoint[verification.endpoint]?.isEmpty == true { byEndpoint[verification.endpoint] = nil }
            if let reference = verification.reference, byReference[reference] == id { byReference[reference] = nil }
            dirty.insert(id)
        }
    }

    mutating func takeChanges() -> [String: Data?] {
        guard !dirty.isEmpty else { return [:] }
        let encoder = JSONEncoder()
        var changes: [String: Data?] = [:]
        for id in dirty {
            changes.updateValue(verifications[id].flatMap { try? encoder.encode($0) }, forKey: id)
        }
        dirty = []
        return changes
    }
}
