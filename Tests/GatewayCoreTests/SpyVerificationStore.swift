import Foundation
import GatewayCore
import Synchronization

/// An ``InMemoryVerificationStore`` that counts reads and remembers the highest attempt count ever written.
final class SpyVerificationStore: VerificationStore {
    private struct Counters {
        var reads = 0
        var writes = 0
        var highestAttempts = 0
        var provisional: [String] = []
        var claims = 0
        var progressWrites = 0
    }

    private let inner = InMemoryVerificationStore()
    private let counters = Mutex(Counters())

    /// Calls of ``record(id:)``.
    var reads: Int { counters.withLock { $0.reads } }
    /// Inserts and successful updates.
    var writes: Int { counters.withLock { $0.writes } }
    /// The writes made with ``StoreWriteDurability/provisional``, in order: `lease` for an update that holds
    /// the check lease, `update` for another update, `events` for an append.
    var provisional: [String] { counters.withLock { $0.provisional } }
    /// Calls of ``claimIdempotencyKey(_:fingerprint:token:owner:at:lease:deadOwner:progress:)``.
    var claims: Int { counters.withLock { $0.claims } }
    /// Calls of ``recordIdempotencyProgress(_:token:progress:until:)``.
    var progressWrites: Int { counters.withLock { $0.progressWrites } }
    /// The largest `attempts` of any record ever stored.
    var highestAttempts: Int { counters.withLock { $0.highestAttempts } }

    func insert(_ record: VerificationRecord) async throws(GatewayError) {
        try await inner.insert(record)
        counters.withLock {
            $0.writes += 1
            $0.highestAttempts = max($0.highestAttempts, record.attempts)
        }
    }

    func add(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int {
        try await inner.add(key, window: window, at: at)
    }

    func count(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int {
        try await inner.count(key, window: window, at: at)
    }

    func block(_ block: PrefixBlock) async throws(GatewayError) { try await inner.block(block) }

    func addAdaptiveEvidence(_ cell: AdaptiveCell) async throws(GatewayError) {
        try await inner.addAdaptiveEvidence(cell)
    }

    func adaptiveEvidence(route: String, context: String?, since: Int) async throws(GatewayError) -> [AdaptiveCell] {
        try await inner.adaptiveEvidence(route: route, context: context, since: since)
    }

    func pruneAdaptiveEvidence(before: Int) async throws(GatewayError) -> Int {
        try await inner.pruneAdaptiveEvidence(before: before)
    }

    func openProvider(destination: String, route: String, at: Date) async throws(GatewayError) -> String? {
        try await inner.openProvider(destination: destination, route: route, at: at)
    }

    func activeBlock(prefix: String, at: Date) async throws(GatewayError) -> PrefixBlock? {
        try await inner.activeBlock(prefix: prefix, at: at)
    }

    func blocks(at: Date) async throws(GatewayError) -> [PrefixBlock] { try await inner.blocks(at: at) }

    func liftBlock(prefix: String, at: Date) async throws(GatewayError) -> Bool {
        try await inner.liftBlock(prefix: prefix, at: at)
    }

    func hit(_ key: String, limit: Int, window: TimeInterval, at: Date) async throws(GatewayError) -> RateDecision {
        try await inner.hit(key, limit: limit, window: window, at: at)
    }

    func openVerifications(destination: String, at: Date, limit: Int) async throws(GatewayError)
        -> [VerificationRecord]
    {
        counters.withLock { $0.reads += 1 }
        return try await inner.openVerifications(destination: destination, at: at, limit: limit)
    }

    func record(providerID: String, reference: String) async throws(GatewayError) -> VerificationRecord? {
        counters.withLock { $0.reads += 1 }
        return try await inner.record(providerID: providerID, reference: reference)
    }

    func record(id: String) async throws(GatewayError) -> VerificationRecord? {
        counters.withLock { $0.reads += 1 }
        return try await inner.record(id: id)
    }

    func update(_ record: VerificationRecord) async throws(GatewayError) -> Bool {
        let updated = try await inner.update(record)
        if updated {
            counters.withLock {
                $0.writes += 1
                $0.highestAttempts = max($0.highestAttempts, record.attempts)
            }
        }
        return updated
    }

    func update(_ record: VerificationRecord, durability: StoreWriteDurability) async throws(GatewayError) -> Bool {
        if durability == .provisional {
            counters.withLock { $0.provisional.append(record.checkLeaseUntil == nil ? "update" : "lease") }
        }
        return try await update(record)
    }

    func append(contentsOf events: [VerificationEvent], durability: StoreWriteDurability) async throws(GatewayError) {
        if durability == .provisional { counters.withLock { $0.provisional.append("events") } }
        for event in events { try await append(event) }
    }

    func append(_ event: VerificationEvent) async throws(GatewayError) { try await inner.append(event) }

    func events(verificationID: String) async throws(GatewayError) -> [VerificationEvent] {
        try await inner.events(verificationID: verificationID)
    }

    func records(experiment: String, from: Date?, to: Date?) async throws(GatewayError) -> [VerificationRecord] {
        try await inner.records(experiment: experiment, from: from, to: to)
    }

    func claimIdempotencyKey(
        _ key: IdempotencyKey, fingerprint: String, token: String, owner: String?, at: Date, lease: TimeInterval,
        deadOwner: String?, progress: IdempotencyProgress
    ) async throws(GatewayError) -> IdempotencyClaim {
        counters.withLock { $0.claims += 1 }
        return try await inner.claimIdempotencyKey(
            key, fingerprint: fingerprint, token: token, owner: owner, at: at, lease: lease, deadOwner: deadOwner,
            progress: progress)
    }

    func recordIdempotencyProgress(
        _ key: IdempotencyKey, token: String, progress: IdempotencyProgress, until: Date
    ) async throws(GatewayError) -> Bool {
        counters.withLock { $0.progressWrites += 1 }
        return try await inner.recordIdempotencyProgress(key, token: token, progress: progress, until: until)
    }

    @discardableResult
    func completeIdempotencyKey(
        _ key: IdempotencyKey, token: String, response: StoredResponse
    ) async throws(GatewayError) -> Bool {
        try await inner.completeIdempotencyKey(key, token: token, response: response)
    }

    func releaseIdempotencyKey(_ key: IdempotencyKey, token: String) async throws(GatewayError) {
        try await inner.releaseIdempotencyKey(key, token: token)
    }

    func abandonIdempotencyKey(_ key: IdempotencyKey, token: String, at: Date) async throws(GatewayError) {
        try await inner.abandonIdempotencyKey(key, token: token, at: at)
    }

    func heartbeat(_ instance: GatewayInstance) async throws(GatewayError) {
        try await inner.heartbeat(instance)
    }

    func instances() async throws(GatewayError) -> [GatewayInstance] {
        try await inner.instances()
    }

    func removeInstance(id: String) async throws(GatewayError) {
        try await inner.removeInstance(id: id)
    }

    func pruneIdempotencyKeys(claimedBefore before: Date, limit: Int) async throws(GatewayError) -> Int {
        try await inner.pruneIdempotencyKeys(claimedBefore: before, limit: limit)
    }
}
