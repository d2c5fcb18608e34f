import Foundation

/// Persistent state of the gateway, by concern: verification records and their event log
/// (``VerificationRecordStore``), rate counters and prefix blocks (``RateCounterStore``), idempotency keys
/// (``IdempotencyStore``), instance heartbeats (``InstanceHeartbeatStore``) and the evidence of adaptive
/// routes (``AdaptiveEvidenceStore``). The webhook queue
/// (``WebhookQueueStore``) is a concern of its own, which a store may add.
///
/// Every store (the embedded SQLite default, PostgreSQL, the in-memory one for tests) passes the same
/// conformance suite. Methods throw only ``GatewayError`` (code `internal` for storage faults).
public protocol VerificationStore: VerificationRecordStore, RateCounterStore, IdempotencyStore, InstanceHeartbeatStore,
    AdaptiveEvidenceStore
{
    /// Stores a started verification and its first events and, in the same commit, ends the lease of the
    /// idempotency claim `key` held under `token` at the record's creation time, keeping the verification's
    /// id in it (stage ``IdempotencyProgress/Stage/claimed``): a request waiting on the claim then finds the
    /// verification, and no crash between the two can leave the record stored and the claim running. A claim
    /// no longer `token`'s is left as it is; the record is stored all the same.
    ///
    /// The default makes the two writes one after the other (the claim's lease then ends a moment later);
    /// the SQL stores make them one transaction.
    func insert(
        _ record: VerificationRecord, events: [VerificationEvent], endingClaim key: IdempotencyKey, token: String
    ) async throws(GatewayError)
}

extension VerificationStore {
    /// Default: the insert, then the claim's progress recorded with its lease ending at the record's creation; a
    /// failure of the second write is ignored, leaving the claim to lapse with its lease.
    public func insert(
        _ record: VerificationRecord, events: [VerificationEvent], endingClaim key: IdempotencyKey, token: String
    ) async throws(GatewayError) {
        try await insert(record, events: events)
        // Stored and sent: a failure to end the claim only leaves it to lapse with its lease, the id in it.
        _ = try? await recordIdempotencyProgress(
            key, token: token, progress: IdempotencyProgress(stage: .claimed, verificationID: record.id),
            until: record.createdAt)
    }
}
