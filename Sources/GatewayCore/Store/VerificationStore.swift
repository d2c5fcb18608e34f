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
{}
