import GatewayCore
import GatewayTestSupport
import Testing

@Suite("In-memory store conformance")
struct InMemoryStoreTests {
    let conformance = StoreConformance { InMemoryVerificationStore() }

    @Test("Records are found by provider and vendor reference")
    func byReference() async throws { try await conformance.recordsAreFoundByProviderReference() }

    @Test("Every next action survives a round trip")
    func nextActions() async throws { try await conformance.everyNextActionSurvivesARoundTrip() }

    @Test("A record and its first events are written together")
    func together() async throws { try await conformance.recordAndEventsAreWrittenTogether() }

    @Test("Rate counters count per fixed window")
    func rateWindows() async throws { try await conformance.rateCountersCountPerWindow() }

    @Test("Concurrent hits never pass the limit")
    func rateRace() async throws { try await conformance.concurrentHitsNeverPassTheLimit() }

    @Test("Counters add and read per window")
    func counters() async throws { try await conformance.countersAddAndReadPerWindow() }

    @Test("Prefix blocks last until they end or are lifted")
    func prefixBlocks() async throws { try await conformance.prefixBlocksLastUntilLifted() }

    @Test("Inserted records read back with every field")
    func roundTrip() async throws { try await conformance.insertedRecordsReadBackWithEveryField() }

    @Test("Records are listed by experiment and time range")
    func byExperiment() async throws { try await conformance.recordsByExperimentAndTime() }

    @Test("Every channel and status survives a round trip")
    func enums() async throws { try await conformance.everyChannelAndStatusSurvivesARoundTrip() }

    @Test("Timestamps keep microsecond precision")
    func timestamps() async throws { try await conformance.timestampsKeepMicrosecondPrecision() }

    @Test("A duplicate insert fails and keeps the original")
    func duplicate() async throws { try await conformance.duplicateInsertFailsAndKeepsTheOriginal() }

    @Test("An unknown id reads as nil")
    func unknown() async throws { try await conformance.unknownIDReadsAsNil() }

    @Test("An update advances the version")
    func update() async throws { try await conformance.updateAdvancesTheVersion() }

    @Test("A stale update fails and changes nothing")
    func stale() async throws { try await conformance.staleUpdateFailsAndChangesNothing() }

    @Test("Concurrent updates from one version have one winner")
    func race() async throws { try await conformance.concurrentUpdatesFromOneVersionHaveOneWinner() }

    @Test("Events are ordered by append and scoped per verification")
    func events() async throws { try await conformance.eventsAreOrderedByAppendAndScopedPerVerification() }

    @Test("An idempotency key goes from claimed to in progress to replay")
    func idempotency() async throws { try await conformance.idempotencyKeyGoesFromClaimedToInProgressToReplay() }

    @Test("An idempotency key with another fingerprint is a mismatch")
    func mismatch() async throws { try await conformance.idempotencyKeyWithAnotherFingerprintIsAMismatch() }

    @Test("A released idempotency key can be claimed again")
    func release() async throws { try await conformance.releasedIdempotencyKeyCanBeClaimedAgain() }

    @Test("Idempotency keys are scoped to their API key")
    func scoped() async throws { try await conformance.idempotencyKeysAreScoped() }

    @Test("An empty stored response replays as empty")
    func emptyResponse() async throws { try await conformance.emptyStoredResponseReplaysAsEmpty() }

    @Test("Concurrent claims of one key have one winner")
    func claimRace() async throws { try await conformance.concurrentClaimsOfOneKeyHaveOneWinner() }

    @Test("The whole suite passes in one run")
    func all() async throws { try await conformance.runAll() }
}
