import Foundation
import Synchronization

/// A store that keeps everything in memory: for tests and for embedding the core in a program that
/// needs no persistence. It passes the same conformance suite as the database stores.
package final class InMemoryVerificationStore: VerificationStore {
    private struct State {
        var records: [String: VerificationRecord] = [:]
        var events: [String: [VerificationEvent]] = [:]
        var idempotency: [IdempotencyKey: IdempotencyEntry] = [:]
        var counters: [String: (windowStart: Int64, count: Int)] = [:]
        var blocks: [String: PrefixBlock] = [:]
        /// Every event in append order, numbered from 1: what the webhook feeder reads.
        var log: [SequencedEvent] = []
        var webhookCursor: Int64?
        var deliveries: [String: WebhookDelivery] = [:]
        var instances: [String: GatewayInstance] = [:]
        var adaptive: [AdaptiveCell] = []
        /// Delivery deadlines by verification id and send.
        var deadlines: [String: [Int: DeliveryDeadline]] = [:]
        /// Delivery tallies by key, their `count` zero.
        var tallies: [DeliveryTally: Int] = [:]
        var disabledEndpoints: [String: DisabledWebhookEndpoint] = [:]
    }

    private struct IdempotencyEntry {
        var fingerprint: String
        var claimedAt: Date
        var response: StoredResponse?
        var token: String
        var owner: String?
        var leaseUntil: Date
        var progress = IdempotencyProgress(stage: .claimed)
    }

    private let state = Mutex(State())

    package init() {}

    package func insert(_ record: VerificationRecord) async throws(GatewayError) {
        try state.withLock { (state) throws(GatewayError) in
            guard state.records[record.id] == nil else { throw GatewayError.internal("Duplicate verification id.") }
            state.records[record.id] = record
        }
    }

    package func record(id: String) async throws(GatewayError) -> VerificationRecord? {
        state.withLock { $0.records[id] }
    }

    package func addAdaptiveEvidence(_ cell: AdaptiveCell) async throws(GatewayError) {
        state.withLock { state in
            if let index = state.adaptive.firstIndex(where: { $0.sameBucket(as: cell) }) {
                state.adaptive[index].starts += cell.starts
                state.adaptive[index].approvals += cell.approvals
                state.adaptive[index].failures += cell.failures
            } else {
                state.adaptive.append(cell)
            }
        }
    }

    package func adaptiveEvidence(route: String, context: String?, since: Int) async throws(GatewayError)
        -> [AdaptiveCell]
    {
        state.withLock { state in
            state.adaptive.filter {
                $0.route == route && (context == nil || $0.context == context) && $0.bucketStart >= since
            }
        }
    }

    package func pruneAdaptiveEvidence(before: Int) async throws(GatewayError) -> Int {
        state.withLock { state in
            let count = state.adaptive.count
            state.adaptive.removeAll { $0.bucketStart < before }
            return count - state.adaptive.count
        }
    }

    package func openProvider(destination: String, route: String, at: Date) async throws(GatewayError) -> String? {
        state.withLock { state in
            state.records.values.filter {
                $0.destination.value == destination && $0.route == route && $0.status == .pending && $0.expiresAt > at
            }
            .max { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }?.providerID
        }
    }

    package func openVerifications(destination: String, at: Date, limit: Int) async throws(GatewayError)
        -> [VerificationRecord]
    {
        state.withLock { state in
            Array(
                state.records.values.filter {
                    $0.destination.value == destination && $0.status == .pending && $0.expiresAt > at
                }
                .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
                .prefix(max(0, limit)))
        }
    }

    package func record(providerID: String, reference: String) async throws(GatewayError) -> VerificationRecord? {
        state.withLock { state in
            state.records.values.filter { $0.providerID == providerID && $0.providerReference == reference }
                .max { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    package func hit(_ key: String, limit: Int, window: TimeInterval, at: Date) async throws(GatewayError)
        -> RateDecision
    {
        let (start, retryAfter) = rateWindow(at: at, window: window)
        return state.withLock { state in
            var counter = state.counters[key] ?? (start, 0)
            if counter.windowStart != start { counter = (start, 0) }
            guard counter.count < limit else { return .refused(retryAfter: retryAfter) }
            counter.count += 1
            state.counters[key] = counter
            return .allowed
        }
    }

    package func add(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int {
        let (start, _) = rateWindow(at: at, window: window)
        return state.withLock { state in
            var counter = state.counters[key] ?? (start, 0)
            if counter.windowStart != start { counter = (start, 0) }
            counter.count += 1
            state.counters[key] = counter
            return counter.count
        }
    }

    package func count(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int {
        let (start, _) = rateWindow(at: at, window: window)
        return state.withLock { state in
            guard let counter = state.counters[key], counter.windowStart == start else { return 0 }
            return counter.count
        }
    }

    package func block(_ block: PrefixBlock) async throws(GatewayError) {
        state.withLock { $0.blocks[block.prefix] = block }
    }

    package func activeBlock(prefix: String, at: Date) async throws(GatewayError) -> PrefixBlock? {
        state.withLock { state in state.blocks[prefix].flatMap { $0.until > at ? $0 : nil } }
    }

    package func blocks(at: Date) async throws(GatewayError) -> [PrefixBlock] {
        state.withLock { state in state.blocks.values.filter { $0.until > at }.sorted { $0.prefix < $1.prefix } }
    }

    package func liftBlock(prefix: String, at: Date) async throws(GatewayError) -> Bool {
        state.withLock { state in
            guard let block = state.blocks.removeValue(forKey: prefix) else { return false }
            return block.until > at
        }
    }

    package func update(_ record: VerificationRecord) async throws(GatewayError) -> Bool {
        state.withLock { state in
            guard let stored = state.records[record.id], stored.version == record.version - 1 else { return false }
            state.records[record.id] = record
            return true
        }
    }

    package func append(_ event: VerificationEvent) async throws(GatewayError) {
        state.withLock { state in
            state.events[event.verificationID, default: []].append(event)
            state.log.append(SequencedEvent(sequence: Int64(state.log.count + 1), event: event))
        }
    }

    package func events(verificationID: String) async throws(GatewayError) -> [VerificationEvent] {
        state.withLock { $0.events[verificationID] ?? [] }
    }

    package func records(experiment: String, from: Date?, to: Date?) async throws(GatewayError)
        -> [VerificationRecord]
    {
        state.withLock { state in
            state.records.values.filter { record in
                record.experiment == experiment && from.map { record.createdAt >= $0 } != false
                    && to.map { record.createdAt < $0 } != false
            }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    package func claimIdempotencyKey(
        _ key: IdempotencyKey, fingerprint: String, token: String, owner: String?, at: Date, lease: TimeInterval,
        deadOwner: String?, progress: IdempotencyProgress
    ) async throws(GatewayError) -> IdempotencyClaim {
        state.withLock { state in
            guard var existing = state.idempotency[key] else {
                var entry = IdempotencyEntry(
                    fingerprint: fingerprint, claimedAt: at, token: token, owner: owner,
                    leaseUntil: at.addingTimeInterval(lease))
                entry.progress = progress
                state.idempotency[key] = entry
                return .claimed
            }
            guard existing.fingerprint == fingerprint else { return .mismatch }
            if let response = existing.response { return .replay(response) }
            let ownerDead = deadOwner != nil && existing.owner == deadOwner
            guard existing.leaseUntil <= at || ownerDead else { return .inProgress(owner: existing.owner) }
            existing.token = token
            existing.owner = owner
            existing.claimedAt = at
            existing.leaseUntil = at.addingTimeInterval(lease)
            state.idempotency[key] = existing
            return .takenOver(existing.progress)
        }
    }

    package func recordIdempotencyProgress(
        _ key: IdempotencyKey, token: String, progress: IdempotencyProgress, until: Date
    ) async throws(GatewayError) -> Bool {
        state.withLock { state in
            guard var existing = state.idempotency[key], existing.token == token, existing.response == nil else {
                return false
            }
            existing.progress = progress
            existing.leaseUntil = until
            state.idempotency[key] = existing
            return true
        }
    }

    @discardableResult
    package func completeIdempotencyKey(
        _ key: IdempotencyKey, token: String, response: StoredResponse
    ) async throws(GatewayError) -> Bool {
        state.withLock { state in
            guard var existing = state.idempotency[key], existing.token == token else { return false }
            existing.response = response
            state.idempotency[key] = existing
            return true
        }
    }

    package func releaseIdempotencyKey(_ key: IdempotencyKey, token: String) async throws(GatewayError) {
        state.withLock { state in
            guard let existing = state.idempotency[key], existing.token == token, existing.response == nil else {
                return
            }
            state.idempotency[key] = nil
        }
    }

    package func abandonIdempotencyKey(_ key: IdempotencyKey, token: String, at: Date) async throws(GatewayError) {
        state.withLock { state in
            guard var existing = state.idempotency[key], existing.token == token, existing.response == nil else {
                return
            }
            existing.leaseUntil = min(existing.leaseUntil, at)
            state.idempotency[key] = existing
        }
    }

    package func heartbeat(_ instance: GatewayInstance) async throws(GatewayError) {
        state.withLock { $0.instances[instance.id] = instance }
    }

    package func instances() async throws(GatewayError) -> [GatewayInstance] {
        state.withLock { $0.instances.values.sorted { $0.id < $1.id } }
    }

    package func removeInstance(id: String) async throws(GatewayError) {
        _ = state.withLock { $0.instances.removeValue(forKey: id) }
    }

    package func pruneIdempotencyKeys(claimedBefore before: Date, limit: Int) async throws(GatewayError) -> Int {
        state.withLock { state in
            let expired = state.idempotency.filter { _, entry in
                entry.claimedAt < before && (entry.response != nil || entry.leaseUntil < before)
            }.keys.prefix(max(0, limit))
            for key in expired { state.idempotency[key] = nil }
            return expired.count
        }
    }
}

extension InMemoryVerificationStore: WebhookQueueStore {
    package func webhookCursor() async throws(GatewayError) -> Int64 {
        state.withLock { state in
            if state.webhookCursor == nil { state.webhookCursor = Int64(state.log.count) }
            return state.webhookCursor ?? 0
        }
    }

    package func events(after sequence: Int64, limit: Int) async throws(GatewayError) -> [SequencedEvent] {
        state.withLock { state in
            let start = Int(max(0, min(sequence, Int64(state.log.count))))
            return Array(state.log[start...].prefix(limit))
        }
    }

    package func enqueue(_ deliveries: [WebhookDelivery], cursorFrom from: Int64, to: Int64) async throws(GatewayError)
        -> Bool
    {
        state.withLock { state in
            guard state.webhookCursor == from else { return false }
            state.webhookCursor = to
            for delivery in deliveries
            where !state.deliveries.values.contains(where: {
                $0.endpoint == delivery.endpoint && $0.eventID == delivery.eventID
            }) {
                state.deliveries[delivery.id] = delivery
            }
            return true
        }
    }

    package func claimDueWebhooks(at: Date, limit: Int, lease: TimeInterval) async throws(GatewayError)
        -> [WebhookDelivery]
    {
        state.withLock { state in
            let due = state.deliveries.values.filter { $0.state == .pending && $0.nextAttemptAt <= at }
                .sorted { ($0.nextAttemptAt, $0.createdAt) < ($1.nextAttemptAt, $1.createdAt) }.prefix(limit)
            for delivery in due { state.deliveries[delivery.id]?.nextAttemptAt = at.addingTimeInterval(lease) }
            return Array(due)
        }
    }

    package func saveWebhook(_ delivery: WebhookDelivery) async throws(GatewayError) {
        state.withLock { state in
            guard state.deliveries[delivery.id] != nil else { return }
            state.deliveries[delivery.id] = delivery
        }
    }

    package func webhookDeliveries(state wanted: WebhookDelivery.State?, limit: Int) async throws(GatewayError)
        -> [WebhookDelivery]
    {
        state.withLock { state in
            Array(
                state.deliveries.values.filter { wanted == nil || $0.state == wanted }
                    .sorted { ($1.createdAt, $0.id) < ($0.createdAt, $1.id) }.prefix(limit))
        }
    }

    package func webhookDelivery(id: String) async throws(GatewayError) -> WebhookDelivery? {
        state.withLock { $0.deliveries[id] }
    }

    package func disableWebhookEndpoint(_ endpoint: String, at: Date, reason: String) async throws(GatewayError) {
        state.withLock { state in
            if state.disabledEndpoints[endpoint] == nil {
                state.disabledEndpoints[endpoint] = DisabledWebhookEndpoint(at: at, reason: reason)
            }
        }
    }

    package func enableWebhookEndpoint(_ endpoint: String) async throws(GatewayError) -> Bool {
        state.withLock { $0.disabledEndpoints.removeValue(forKey: endpoint) != nil }
    }

    package func disabledWebhookEndpoints() async throws(GatewayError) -> [String: DisabledWebhookEndpoint] {
        state.withLock { $0.disabledEndpoints }
    }
}

extension InMemoryVerificationStore: DeliveryDeadlineStore {
    package func scheduleDeliveryDeadline(_ deadline: DeliveryDeadline) async throws(GatewayError) {
        state.withLock { state in
            var kept = deadline
            if let old = state.deadlines[deadline.verificationID]?[deadline.send],
                old.providerID == deadline.providerID,
                old.messageID == deadline.messageID
            {
                kept.dueAt = min(old.dueAt, deadline.dueAt)
            }
            state.deadlines[deadline.verificationID, default: [:]][deadline.send] = kept
        }
    }

    package func claimDueDeliveryDeadlines(at: Date, limit: Int, lease: TimeInterval) async throws(GatewayError)
        -> [DeliveryDeadline]
    {
        state.withLock { state in
            let due = state.deadlines.values.flatMap(\.values).filter { $0.dueAt <= at }
                .sorted { ($0.dueAt, $0.verificationID, $0.send) < ($1.dueAt, $1.verificationID, $1.send) }
                .prefix(limit)
            for deadline in due {
                state.deadlines[deadline.verificationID]?[deadline.send]?.dueAt = at.addingTimeInterval(lease)
            }
            return Array(due)
        }
    }

    package func expediteDeliveryDeadline(verificationID: String, providerID: String, messageID: String, to at: Date)
        async throws(GatewayError) -> Bool
    {
        state.withLock { state in
            guard
                let found = state.deadlines[verificationID]?.values.first(where: {
                    $0.providerID == providerID && $0.messageID == messageID
                }),
                found.dueAt > at
            else { return false }
            state.deadlines[verificationID]?[found.send]?.dueAt = at
            return true
        }
    }

    package func removeDeliveryDeadline(verificationID: String, send: Int) async throws(GatewayError) {
        state.withLock { state in
            state.deadlines[verificationID]?[send] = nil
            if state.deadlines[verificationID]?.isEmpty == true { state.deadlines[verificationID] = nil }
        }
    }
}

extension InMemoryVerificationStore: DeliveryStatsStore {
    package func countDeliveries(_ tally: DeliveryTally) async throws(GatewayError) {
        var key = tally
        key.count = 0
        state.withLock { $0.tallies[key, default: 0] += tally.count }
    }

    package func deliveryTallies(since minute: Int) async throws(GatewayError) -> [DeliveryTally] {
        state.withLock { state in
            state.tallies.compactMap { key, count in
                guard key.minute >= minute else { return nil }
                var tally = key
                tally.count = count
                return tally
            }
        }
    }

    @discardableResult
    package func pruneDeliveryTallies(before minute: Int) async throws(GatewayError) -> Int {
        state.withLock { state in
            let old = state.tallies.keys.filter { $0.minute < minute }
            for key in old { state.tallies[key] = nil }
            return old.count
        }
    }
}
