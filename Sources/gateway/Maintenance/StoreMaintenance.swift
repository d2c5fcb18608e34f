import Foundation
import GatewayCore
import Logging
import ServiceLifecycle

/// The store's upkeep, run in the background by every instance: idempotency keys older than the policy's
/// retention are deleted in bounded batches, so the table stays the size of a day's starts, and the console's
/// per-minute counts older than two days go. Several
/// instances pruning at once is harmless (each batch deletes what is still there).
struct StoreMaintenance: Service {
    let store: any VerificationStore
    let clock: any WallClock
    let policy: VerificationPolicy
    let logger: Logger
    var interval: Duration = .seconds(60)
    /// Keys deleted per store call, and calls per round: one round never holds the store for long.
    var batch = 500
    var batchesPerRound = 20

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await pruneIdempotencyKeys()
            await pruneRefusalCounts()
            await pruneDeliveryTallies()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// Refusal counts (the console's, per kind and minute) are kept two days: the console reads one.
    static let refusalRetention: TimeInterval = 2 * 86_400

    func pruneRefusalCounts() async {
        guard let counts = store as? any SQLStore else { return }
        do {
            try await counts.pruneRefusalCounts(
                before: RefusalStats.bucket(clock.now.addingTimeInterval(-Self.refusalRetention)))
        } catch {
            logger.warning("refusal count pruning failed", metadata: ["error.code": "\(error.code.rawValue)"])
        }
    }

    /// Delivery tallies (per vendor, country and minute) are kept two days, like the refusal counts: the console
    /// reads at most one.
    static let deliveryTallyRetention: TimeInterval = 2 * 86_400

    func pruneDeliveryTallies() async {
        guard let tallies = store as? any DeliveryStatsStore else { return }
        do {
            try await tallies.pruneDeliveryTallies(
                before: DeliveryTally.minute(of: clock.now.addingTimeInterval(-Self.deliveryTallyRetention)))
        } catch {
            logger.warning("delivery tally pruning failed", metadata: ["error.code": "\(error.code.rawValue)"])
        }
    }

    /// One round of pruning; returns how many keys it deleted. A store failure is logged and left to the
    /// next round.
    @discardableResult
    func pruneIdempotencyKeys() async -> Int {
        let before = clock.now.addingTimeInterval(-policy.idempotencyRetention)
        var deleted = 0
        do {
            for _ in 0..<batchesPerRound {
                let pruned = try await store.pruneIdempotencyKeys(claimedBefore: before, limit: batch)
                deleted += pruned
                if pruned < batch { break }
            }
        } catch {
            logger.warning("idempotency key pruning failed", metadata: ["error.code": "\(error.code.rawValue)"])
        }
        if deleted > 0 { logger.info("idempotency keys pruned", metadata: ["idempotency.pruned": "\(deleted)"]) }
        return deleted
    }
}
