@preconcurrency import Crypto
import Foundation
import GatewayCore
import Logging
import ServiceLifecycle

/// `retention` in the configuration (docs/operations.md, "Retention"): how long the store keeps what.
struct RetentionSettings: Sendable, Equatable {
    /// Verifications created longer ago than this are deleted, with their events and delivery deadlines; nil
    /// keeps them forever (`verifications: off`).
    var verifications: TimeInterval? = Self.defaultHorizon
    /// Events of verifications created longer ago than this are deleted (the verification stays until
    /// ``verifications``); so are delivered and parked webhook deliveries queued before it. Nil: as
    /// ``verifications``.
    var events: TimeInterval? = Self.defaultHorizon
    /// Verifications created longer ago than this have their number (or address, or identity) replaced by a
    /// masked form and a keyed hash; nil: never.
    var anonymizeAfter: TimeInterval?
    /// The key of the hash (`anonymize_key_env`): required with ``anonymizeAfter``.
    var anonymizer: DestinationAnonymizer?

    static let defaultHorizon: TimeInterval = 30 * 86_400
    /// The shortest horizon: a verification lives at most a day (`code_validity_seconds` ≤ 86,400), so anything
    /// created two days ago has ended, and the console's windows (at most a day) are never cut short.
    static let minimumHorizon: TimeInterval = 2 * 86_400

    /// Whether any task runs.
    var isActive: Bool { verifications != nil || events != nil || anonymizeAfter != nil }
}

/// Replaces a stored destination with what the API and console show instead of it (the masked form) and an
/// HMAC-SHA256 of it under the operator's key, which a lookup by the number still finds (the number's hash is
/// computed and compared) while the store no longer holds the number.
struct DestinationAnonymizer: Sendable, Equatable {
    static let minimumSecretBytes = 32
    static let prefix = "anon:"
    private let key: SymmetricKey

    init?(secret: [UInt8]) {
        guard secret.count >= Self.minimumSecretBytes else { return nil }
        key = SymmetricKey(data: secret)
    }

    /// `anon:` and the 64 hex digits of the value's HMAC-SHA256.
    func digest(of value: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(value.utf8), using: key)
        return Self.prefix + code.map { String(format: "%02x", $0) }.joined()
    }

    /// The masked form and the digest of a stored destination of `kind` (`phone`, `email`, `identity`).
    func anonymize(kind: String, value: String) -> (masked: String, digest: String) {
        let masked: String
        switch kind {
        case "phone": masked = PhoneNumber.mask(value)
        case "email": masked = Destination.email(value).masked
        default: masked = Destination.identity(value).masked
        }
        return (masked, digest(of: value))
    }

    static func == (lhs: DestinationAnonymizer, rhs: DestinationAnonymizer) -> Bool {
        lhs.key.withUnsafeBytes { left in rhs.key.withUnsafeBytes { right in Array(left) == Array(right) } }
    }
}

/// Deletes and anonymizes what `retention` says, in the background, on every instance: bounded batches (each
/// one short transaction, ``RetentionRows/batchLimit`` rows at most), a bounded number per round, a pause between
/// batches so requests get the store in between, and the next round at once while a task still has work.
struct RetentionService: Service {
    let store: any SQLStore
    let settings: RetentionSettings
    let clock: any WallClock
    let logger: Logger
    /// Before the first round: a restart does not start with a burst of deletes.
    var firstRoundAfter: Duration = .seconds(60)
    var interval: Duration = .seconds(60)
    var batch = RetentionRows.batchLimit
    var batchesPerRound = 40
    /// Between two batches of a round.
    var pause: Duration = .milliseconds(20)

    /// What one round did: per task, and its longest batch (the longest the store was held by retention).
    struct Round: Sendable, Equatable {
        var deletedVerifications = 0
        var deletedEvents = 0
        var anonymized = 0
        var deletedOther = 0
        var batches = 0
        var longestBatch: Duration = .zero
        /// A task stopped at ``batchesPerRound`` with work left.
        var more = false
        /// The store failure that ended the round early (logged too).
        var failure: GatewayError?

        /// Adds `other`'s counts to these, keeping the longer batch.
        mutating func add(_ other: Round) {
            deletedVerifications += other.deletedVerifications
            deletedEvents += other.deletedEvents
            anonymized += other.anonymized
            deletedOther += other.deletedOther
            batches += other.batches
            longestBatch = max(longestBatch, other.longestBatch)
        }
    }

    func run() async throws {
        guard settings.isActive else { return }
        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: firstRoundAfter) }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let round = await self.round()
            if round.batches > 0, round.deletedVerifications + round.deletedEvents + round.anonymized > 0 {
                logger.info(
                    "retention round",
                    metadata: [
                        "retention.verifications_deleted": "\(round.deletedVerifications)",
                        "retention.events_deleted": "\(round.deletedEvents)",
                        "retention.anonymized": "\(round.anonymized)",
                        "retention.batches": "\(round.batches)",
                        "retention.longest_batch_ms": "\(round.longestBatch.wholeMilliseconds)",
                    ])
            }
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(for: round.more ? pause : interval)
            }
        }
    }

    /// One round of every task; a store failure is logged and left to the next round.
    func round() async -> Round {
        var round = Round()
        let now = clock.now
        let limit = batch
        do {
            if let horizon = settings.verifications {
                try await repeatBatches(&round) { () throws(GatewayError) in
                    let batch = try await store.deleteVerifications(
                        createdBefore: now.addingTimeInterval(-horizon), now: now, limit: limit)
                    return (batch.verifications, batch)
                } add: { round, batch in
                    round.deletedVerifications += batch.verifications
                    round.deletedEvents += batch.events
                    round.deletedOther += batch.other
                }
            }
            if let horizon = settings.events ?? settings.verifications {
                if horizon < settings.verifications ?? .infinity {
                    try await repeatBatches(&round) { () throws(GatewayError) in
                        let batch = try await store.deleteEvents(
                            createdBefore: now.addingTimeInterval(-horizon), limit: limit)
                        return (batch.verifications, batch)
                    } add: { round, batch in
                        round.deletedEvents += batch.events
                    }
                }
                try await repeatBatches(&round) { () throws(GatewayError) in
                    let deleted = try await store.deleteWebhookDeliveries(
                        createdBefore: now.addingTimeInterval(-horizon), limit: limit)
                    return (deleted, RetentionBatch(other: deleted))
                } add: { round, batch in
                    round.deletedOther += batch.other
                }
            }
            if let after = settings.anonymizeAfter, let anonymizer = settings.anonymizer {
                try await repeatBatches(&round) { () throws(GatewayError) in
                    let batch = try await store.anonymize(createdBefore: now.addingTimeInterval(-after), limit: limit) {
                        anonymizer.anonymize(kind: $0, value: $1)
                    }
                    // The rows visited, anonymized already or not, so the task moves on over the first kind.
                    return (batch.visited, batch)
                } add: { round, batch in
                    round.anonymized += batch.verifications
                }
            }
        } catch {
            logger.warning("retention failed", metadata: ["error.code": "\(error.code.rawValue)"])
            round.failure = error
        }
        return round
    }

    /// Runs `batch` until it takes fewer rows than a full batch or the round's batches are used up; `add`
    /// counts each batch's figures into the round.
    private func repeatBatches(
        _ round: inout Round, _ batch: () async throws(GatewayError) -> (taken: Int, figures: RetentionBatch),
        add: (inout Round, RetentionBatch) -> Void
    ) async throws(GatewayError) {
        while round.batches < batchesPerRound {
            let began = ContinuousClock.now
            let (taken, figures) = try await batch()
            round.longestBatch = max(round.longestBatch, ContinuousClock.now - began)
            round.batches += 1
            add(&round, figures)
            if taken < self.batch { return }
            if Task.isCancelled || Task.isShuttingDownGracefully { return }
            try? await Task.sleep(for: pause)
        }
        round.more = true
    }
}

extension Duration {
    /// Whole milliseconds.
    var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
