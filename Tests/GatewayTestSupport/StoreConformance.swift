import Foundation
import GatewayCore
import Testing

/// The behaviour every ``VerificationStore`` must show, written once and run by every store's tests
/// (in the manner of fluent-kit's `FluentBenchmark`).
///
/// Each check makes its own store through `makeStore`, so a store factory that hands out a fresh
/// database (a new temporary file, a new schema) keeps the checks independent. A store's suite runs them
/// as one test over ``Check/allCases`` (`run(_:)`), so each failure names its check.
public struct StoreConformance: Sendable {
    private let makeStore: @Sendable () async throws -> any VerificationStore

    /// - Parameter makeStore: returns a new, empty store each time it is called.
    public init(makeStore: @escaping @Sendable () async throws -> any VerificationStore) {
        self.makeStore = makeStore
    }

    /// Every check, so a store's test suite runs them all as one parameterized test.
    public enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case recordsAreFoundByProviderReference
        case everyNextActionSurvivesARoundTrip
        case recordAndEventsAreWrittenTogether
        case rateCountersCountPerWindow
        case concurrentHitsNeverPassTheLimit
        case countersAddAndReadPerWindow
        case prefixBlocksLastUntilLifted
        case insertedRecordsReadBackWithEveryField
        case recordsByExperimentAndTime
        case everyChannelAndStatusSurvivesARoundTrip
        case timestampsKeepMicrosecondPrecision
        case duplicateInsertFailsAndKeepsTheOriginal
        case unknownIDReadsAsNil
        case updateAdvancesTheVersion
        case staleUpdateFailsAndChangesNothing
        case concurrentUpdatesFromOneVersionHaveOneWinner
        case modifyReadsThenWritesWithCompareAndSet
        case concurrentModifiesLoseNoWrite
        case eventsAreOrderedByAppendAndScopedPerVerification
        case idempotencyKeyGoesFromClaimedToInProgressToReplay
        case idempotencyKeyWithAnotherFingerprintIsAMismatch
        case releasedIdempotencyKeyCanBeClaimedAgain
        case idempotencyKeysAreScoped
        case emptyStoredResponseReplaysAsEmpty
        case concurrentClaimsOfOneKeyHaveOneWinner
        case lapsedClaimIsTakenOverWithItsProgress
        case concurrentTakeoversOfALapsedClaimHaveOneWinner
        case deadOwnersClaimIsTakenOverAtOnceWithItsProgress
        case concurrentTakeoversFromADeadOwnerHaveOneWinner
        case abandonedClaimIsTakenOverAtOnceWithItsProgress
        case insertEndingAClaimStoresTheRecordAndEndsTheLeaseTogether
        case newClaimCarriesItsFirstProgressAndATakeoverIsANewClaim
        case onlyTheHoldersTokenReleasesOrCompletesAClaim
        case expiredIdempotencyKeysArePrunedInBoundedBatches
        case instanceHeartbeatsAreWrittenListedAndRemoved
        case adaptiveEvidenceAddsPerBucketUnderConcurrency
        case openVerificationsAreFoundByDestinationAndRoute
        case openVerificationsOfADestinationAreListedNewestFirst

        /// The check's name as the test report shows it.
        public var testDescription: String {
            switch self {
            case .recordsAreFoundByProviderReference: "Records are found by provider and vendor reference"
            case .everyNextActionSurvivesARoundTrip: "Every next action survives a round trip"
            case .recordAndEventsAreWrittenTogether: "A record and its first events are written together"
            case .rateCountersCountPerWindow: "Rate counters count per fixed window"
            case .concurrentHitsNeverPassTheLimit: "Concurrent hits never pass the limit"
            case .countersAddAndReadPerWindow: "Counters add and read per window"
            case .prefixBlocksLastUntilLifted: "Prefix blocks last until they end or are lifted"
            case .insertedRecordsReadBackWithEveryField: "Inserted records read back with every field"
            case .recordsByExperimentAndTime: "Records are listed by experiment and time range"
            case .everyChannelAndStatusSurvivesARoundTrip: "Every channel and status survives a round trip"
            case .timestampsKeepMicrosecondPrecision: "Timestamps keep microsecond precision"
            case .duplicateInsertFailsAndKeepsTheOriginal: "A duplicate insert fails and keeps the original"
            case .unknownIDReadsAsNil: "An unknown id reads as nil"
            case .updateAdvancesTheVersion: "An update advances the version"
            case .staleUpdateFailsAndChangesNothing: "A stale update fails and changes nothing"
            case .concurrentUpdatesFromOneVersionHaveOneWinner: "Concurrent updates from one version have one winner"
            case .modifyReadsThenWritesWithCompareAndSet:
                "Modify reads, then writes what the change makes, with compare-and-set"
            case .concurrentModifiesLoseNoWrite: "Concurrent modifies lose no write"
            case .eventsAreOrderedByAppendAndScopedPerVerification:
                "Events are ordered by append and scoped per verification"
            case .idempotencyKeyGoesFromClaimedToInProgressToReplay:
                "An idempotency key goes from claimed to in progress to replay"
            case .idempotencyKeyWithAnotherFingerprintIsAMismatch:
                "An idempotency key with another fingerprint is a mismatch"
            case .releasedIdempotencyKeyCanBeClaimedAgain: "A released idempotency key can be claimed again"
            case .idempotencyKeysAreScoped: "Idempotency keys are scoped to their API key"
            case .emptyStoredResponseReplaysAsEmpty: "An empty stored response replays as empty"
            case .concurrentClaimsOfOneKeyHaveOneWinner: "Concurrent claims of one key have one winner"
            case .lapsedClaimIsTakenOverWithItsProgress: "A lapsed idempotency claim is taken over, with how far it got"
            case .concurrentTakeoversOfALapsedClaimHaveOneWinner:
                "Concurrent takeovers of a lapsed claim have one winner"
            case .deadOwnersClaimIsTakenOverAtOnceWithItsProgress:
                "A claim names its instance; a dead instance's claim is taken over at once, with how far it got"
            case .concurrentTakeoversFromADeadOwnerHaveOneWinner:
                "Concurrent takeovers from a dead instance have one winner"
            case .abandonedClaimIsTakenOverAtOnceWithItsProgress:
                "An abandoned claim is taken over at once, with its progress"
            case .insertEndingAClaimStoresTheRecordAndEndsTheLeaseTogether:
                "An insert that ends a claim stores the record and ends the holder's lease, keeping the id, together"
            case .newClaimCarriesItsFirstProgressAndATakeoverIsANewClaim:
                "A new claim records its first progress in its own write; a takeover is pruned as a new claim"
            case .onlyTheHoldersTokenReleasesOrCompletesAClaim:
                "Only the holder's token records, releases or completes a claim"
            case .expiredIdempotencyKeysArePrunedInBoundedBatches:
                "Expired idempotency keys are pruned in bounded batches"
            case .instanceHeartbeatsAreWrittenListedAndRemoved: "Instance heartbeats are written, listed and removed"
            case .adaptiveEvidenceAddsPerBucketUnderConcurrency:
                "Adaptive evidence adds up per bucket under concurrency, reads per context and is pruned"
            case .openVerificationsAreFoundByDestinationAndRoute:
                "The open verification of a destination on a route is found, the newest first"
            case .openVerificationsOfADestinationAreListedNewestFirst:
                "The open verifications of a destination are listed newest first, without final or expired ones"
            }
        }
    }

    /// Runs one check.
    public func run(_ check: Check) async throws {
        switch check {
        case .recordsAreFoundByProviderReference: try await recordsAreFoundByProviderReference()
        case .everyNextActionSurvivesARoundTrip: try await everyNextActionSurvivesARoundTrip()
        case .recordAndEventsAreWrittenTogether: try await recordAndEventsAreWrittenTogether()
        case .rateCountersCountPerWindow: try await rateCountersCountPerWindow()
        case .concurrentHitsNeverPassTheLimit: try await concurrentHitsNeverPassTheLimit()
        case .countersAddAndReadPerWindow: try await countersAddAndReadPerWindow()
        case .prefixBlocksLastUntilLifted: try await prefixBlocksLastUntilLifted()
        case .insertedRecordsReadBackWithEveryField: try await insertedRecordsReadBackWithEveryField()
        case .recordsByExperimentAndTime: try await recordsByExperimentAndTime()
        case .everyChannelAndStatusSurvivesARoundTrip: try await everyChannelAndStatusSurvivesARoundTrip()
        case .timestampsKeepMicrosecondPrecision: try await timestampsKeepMicrosecondPrecision()
        case .duplicateInsertFailsAndKeepsTheOriginal: try await duplicateInsertFailsAndKeepsTheOriginal()
        case .unknownIDReadsAsNil: try await unknownIDReadsAsNil()
        case .updateAdvancesTheVersion: try await updateAdvancesTheVersion()
        case .staleUpdateFailsAndChangesNothing: try await staleUpdateFailsAndChangesNothing()
        case .concurrentUpdatesFromOneVersionHaveOneWinner: try await concurrentUpdatesFromOneVersionHaveOneWinner()
        case .modifyReadsThenWritesWithCompareAndSet: try await modifyReadsThenWritesWithCompareAndSet()
        case .concurrentModifiesLoseNoWrite: try await concurrentModifiesLoseNoWrite()
        case .eventsAreOrderedByAppendAndScopedPerVerification:
            try await eventsAreOrderedByAppendAndScopedPerVerification()
        case .idempotencyKeyGoesFromClaimedToInProgressToReplay:
            try await idempotencyKeyGoesFromClaimedToInProgressToReplay()
        case .idempotencyKeyWithAnotherFingerprintIsAMismatch:
            try await idempotencyKeyWithAnotherFingerprintIsAMismatch()
        case .releasedIdempotencyKeyCanBeClaimedAgain: try await releasedIdempotencyKeyCanBeClaimedAgain()
        case .idempotencyKeysAreScoped: try await idempotencyKeysAreScoped()
        case .emptyStoredResponseReplaysAsEmpty: try await emptyStoredResponseReplaysAsEmpty()
        case .concurrentClaimsOfOneKeyHaveOneWinner: try await concurrentClaimsOfOneKeyHaveOneWinner()
        case .lapsedClaimIsTakenOverWithItsProgress: try await lapsedClaimIsTakenOverWithItsProgress()
        case .concurrentTakeoversOfALapsedClaimHaveOneWinner: try await concurrentTakeoversOfALapsedClaimHaveOneWinner()
        case .deadOwnersClaimIsTakenOverAtOnceWithItsProgress:
            try await deadOwnersClaimIsTakenOverAtOnceWithItsProgress()
        case .concurrentTakeoversFromADeadOwnerHaveOneWinner: try await concurrentTakeoversFromADeadOwnerHaveOneWinner()
        case .abandonedClaimIsTakenOverAtOnceWithItsProgress: try await abandonedClaimIsTakenOverAtOnceWithItsProgress()
        case .insertEndingAClaimStoresTheRecordAndEndsTheLeaseTogether:
            try await insertEndingAClaimStoresTheRecordAndEndsTheLeaseTogether()
        case .newClaimCarriesItsFirstProgressAndATakeoverIsANewClaim:
            try await newClaimCarriesItsFirstProgressAndATakeoverIsANewClaim()
        case .onlyTheHoldersTokenReleasesOrCompletesAClaim: try await onlyTheHoldersTokenReleasesOrCompletesAClaim()
        case .expiredIdempotencyKeysArePrunedInBoundedBatches:
            try await expiredIdempotencyKeysArePrunedInBoundedBatches()
        case .instanceHeartbeatsAreWrittenListedAndRemoved: try await instanceHeartbeatsAreWrittenListedAndRemoved()
        case .adaptiveEvidenceAddsPerBucketUnderConcurrency: try await adaptiveEvidenceAddsPerBucketUnderConcurrency()
        case .openVerificationsAreFoundByDestinationAndRoute: try await openVerificationsAreFoundByDestinationAndRoute()
        case .openVerificationsOfADestinationAreListedNewestFirst:
            try await openVerificationsOfADestinationAreListedNewestFirst()
        }
    }

    /// Concurrent additions to one cell all count; cells of other providers, contexts and buckets stay apart;
    /// reading by context or by route, from a bucket on; pruning deletes only older buckets.
    public func adaptiveEvidenceAddsPerBucketUnderConcurrency() async throws {
        let store = try await makeStore()
        func cell(
            _ provider: String, context: String = "GB/sms", bucket: Int = 1_800_000_000, _ starts: Int = 0,
            _ approvals: Int = 0, _ failures: Int = 0
        ) -> AdaptiveCell {
            AdaptiveCell(
                route: "adaptive", context: context, providerID: provider, bucketStart: bucket, bucketSeconds: 60,
                starts: starts, approvals: approvals, failures: failures)
        }
        let additions = (0..<30).map { index in cell("a", 1, index % 3 == 0 ? 1 : 0, index % 3 == 1 ? 1 : 0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for addition in additions { group.addTask { try await store.addAdaptiveEvidence(addition) } }
            try await group.waitForAll()
        }
        try await store.addAdaptiveEvidence(cell("b", 2, 1))
        try await store.addAdaptiveEvidence(cell("a", context: "ID/sms", 5))
        try await store.addAdaptiveEvidence(cell("a", bucket: 1_800_000_060, 4, 2, 1))
        let gb = try await store.adaptiveEvidence(route: "adaptive", context: "GB/sms", since: 0)
        let a = gb.filter { $0.providerID == "a" && $0.bucketStart == 1_800_000_000 }
        #expect(a == [cell("a", 30, 10, 10)])
        #expect(gb.count == 3)
        #expect(gb.contains(cell("b", 2, 1)) && gb.contains(cell("a", bucket: 1_800_000_060, 4, 2, 1)))
        #expect(try await store.adaptiveEvidence(route: "adaptive", context: nil, since: 0).count == 4)
        #expect(try await store.adaptiveEvidence(route: "adaptive", context: "GB/sms", since: 1_800_000_060).count == 1)
        #expect(try await store.adaptiveEvidence(route: "other", context: nil, since: 0).isEmpty)
        #expect(try await store.pruneAdaptiveEvidence(before: 1_800_000_060) == 3)
        #expect(
            try await store.adaptiveEvidence(route: "adaptive", context: nil, since: 0) == [
                cell("a", bucket: 1_800_000_060, 4, 2, 1)
            ])
    }

    /// The newest pending, unexpired verification of a destination on a route names its provider; a final
    /// one, an expired one, or one on another route does not.
    public func openVerificationsAreFoundByDestinationAndRoute() async throws {
        let store = try await makeStore()
        func record(
            _ id: String, provider: String, route: String = "adaptive", created: Double,
            status: VerificationStatus = .pending
        ) throws -> VerificationRecord {
            VerificationRecord(
                id: id, destination: .phone(try PhoneNumber(parsing: "+447400123456")), channel: .sms,
                providerID: provider, providerReference: nil, status: status, maxAttempts: 5,
                createdAt: Self.epoch.addingTimeInterval(created), updatedAt: Self.epoch.addingTimeInterval(created),
                expiresAt: Self.epoch.addingTimeInterval(created + 600), route: route)
        }
        let at = Self.epoch.addingTimeInterval(100)
        #expect(try await store.openProvider(destination: "+447400123456", route: "adaptive", at: at) == nil)
        try await store.insert(try record("VEopen1", provider: "a", created: 0))
        try await store.insert(try record("VEopen2", provider: "b", created: 10))
        try await store.insert(try record("VEopen3", provider: "c", created: 20, status: .canceled))
        try await store.insert(try record("VEopen4", provider: "d", route: "other", created: 30))
        #expect(try await store.openProvider(destination: "+447400123456", route: "adaptive", at: at) == "b")
        #expect(try await store.openProvider(destination: "+447400123457", route: "adaptive", at: at) == nil)
        #expect(
            try await store.openProvider(
                destination: "+447400123456", route: "adaptive", at: Self.epoch.addingTimeInterval(605)) == "b")
        #expect(
            try await store.openProvider(
                destination: "+447400123456", route: "adaptive", at: Self.epoch.addingTimeInterval(611)) == nil)
    }

    /// The pending, unexpired verifications of one destination, on any route, newest first and at most
    /// `limit`; a final one, an expired one or another destination's is not listed, and each comes back whole.
    public func openVerificationsOfADestinationAreListedNewestFirst() async throws {
        let store = try await makeStore()
        func record(
            _ id: String, to: String = "+447400123456", created: Double, status: VerificationStatus = .pending,
            route: String? = nil
        ) throws -> VerificationRecord {
            VerificationRecord(
                id: id, destination: .phone(try PhoneNumber(parsing: to)), channel: .sms, providerID: "p",
                providerReference: nil, status: status, maxAttempts: 5,
                createdAt: Self.epoch.addingTimeInterval(created), updatedAt: Self.epoch.addingTimeInterval(created),
                expiresAt: Self.epoch.addingTimeInterval(created + 600), route: route,
                metadata: ["twilio_service_sid": id])
        }
        let at = Self.epoch.addingTimeInterval(100)
        #expect(try await store.openVerifications(destination: "+447400123456", at: at, limit: 10).isEmpty)
        try await store.insert(try record("VEdest1", created: 0))
        try await store.insert(try record("VEdest2", created: 20, route: "twilio:VA1"))
        try await store.insert(try record("VEdest3", created: 10))
        try await store.insert(try record("VEdest4", created: 30, status: .approved))
        try await store.insert(try record("VEdest5", to: "+447400123457", created: 40))
        let open = try await store.openVerifications(destination: "+447400123456", at: at, limit: 10)
        #expect(open.map(\.id) == ["VEdest2", "VEdest3", "VEdest1"])
        #expect(open.first?.metadata == ["twilio_service_sid": "VEdest2"] && open.first?.route == "twilio:VA1")
        #expect(
            try await store.openVerifications(destination: "+447400123456", at: at, limit: 2).map(\.id) == [
                "VEdest2", "VEdest3",
            ])
        #expect(
            try await store.openVerifications(
                destination: "+447400123456", at: Self.epoch.addingTimeInterval(615), limit: 10
            ).map(\.id) == ["VEdest2"])
        #expect(try await store.openVerifications(destination: "+447400123458", at: at, limit: 10).isEmpty)
    }

    /// `add` returns each count once under concurrency; `count` reads without adding; a new window starts
    /// again.
    public func countersAddAndReadPerWindow() async throws {
        let store = try await makeStore()
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try await store.count("c", window: 60, at: at) == 0)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<25 { group.addTask { try await store.add("c", window: 60, at: at) } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts.sorted() == Array(1...25))
        #expect(try await store.count("c", window: 60, at: at.addingTimeInterval(30)) == 25)
        #expect(try await store.count("c", window: 60, at: at.addingTimeInterval(60)) == 0)
        #expect(try await store.add("c", window: 60, at: at.addingTimeInterval(60)) == 1)
    }

    /// A block is in force until its end or until lifted; listing shows only blocks in force.
    public func prefixBlocksLastUntilLifted() async throws {
        let store = try await makeStore()
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let block = PrefixBlock(
            prefix: "+447400", blockedAt: at, until: at.addingTimeInterval(600), starts: 20, approvals: 1,
            verificationID: "vf_0123456789abcdef0123456789abcdef")
        try await store.block(block)
        try await store.block(
            PrefixBlock(prefix: "+1900", blockedAt: at, until: at.addingTimeInterval(60), starts: 30, approvals: 0))
        #expect(try await store.activeBlock(prefix: "+447400", at: at.addingTimeInterval(1)) == block)
        #expect(try await store.blocks(at: at.addingTimeInterval(1)).map(\.prefix) == ["+1900", "+447400"])
        #expect(try await store.blocks(at: at.addingTimeInterval(61)).map(\.prefix) == ["+447400"])
        #expect(try await store.activeBlock(prefix: "+447400", at: at.addingTimeInterval(600)) == nil)
        #expect(try await store.liftBlock(prefix: "+447400", at: at.addingTimeInterval(1)))
        #expect(try await store.activeBlock(prefix: "+447400", at: at.addingTimeInterval(1)) == nil)
        #expect(try await store.liftBlock(prefix: "+447400", at: at.addingTimeInterval(1)) == false)
    }

    /// The last allowed hit passes, the next is refused with the seconds left; the next window starts
    /// again; keys count apart.
    public func rateCountersCountPerWindow() async throws {
        let store = try await makeStore()
        let start = Date(timeIntervalSince1970: 1_800_000_000)  // a multiple of 60
        for second in 0..<3 {
            #expect(
                try await store.hit("a", limit: 3, window: 60, at: start.addingTimeInterval(Double(second))) == .allowed
            )
        }
        #expect(
            try await store.hit("a", limit: 3, window: 60, at: start.addingTimeInterval(15)) == .refused(retryAfter: 45)
        )
        #expect(
            try await store.hit("a", limit: 3, window: 60, at: start.addingTimeInterval(59.5))
                == .refused(retryAfter: 1))
        #expect(try await store.hit("b", limit: 3, window: 60, at: start.addingTimeInterval(15)) == .allowed)
        #expect(try await store.hit("a", limit: 3, window: 60, at: start.addingTimeInterval(60)) == .allowed)
    }

    /// Many hits at once: exactly `limit` are allowed.
    public func concurrentHitsNeverPassTheLimit() async throws {
        let store = try await makeStore()
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let allowed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<40 { group.addTask { try await store.hit("k", limit: 7, window: 3600, at: at) == .allowed } }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(allowed == 7)
    }

    /// A start writes its record with its first events; a duplicate id writes neither.
    public func recordAndEventsAreWrittenTogether() async throws {
        let store = try await makeStore()
        let record = Self.emailRecord(id: "VEtogether1")
        let events = (0..<3).map {
            VerificationEvent(verificationID: record.id, kind: .providerCall, at: Self.epoch, detail: ["n": String($0)])
        }
        try await store.insert(record, events: events)
        #expect(try await store.record(id: record.id) == record)
        #expect(try await store.events(verificationID: record.id).map { $0.detail["n"] } == ["0", "1", "2"])
        await #expect(throws: GatewayError.self) {
            try await store.insert(
                record, events: [VerificationEvent(verificationID: record.id, kind: .started, at: Self.epoch)])
        }
        #expect(try await store.events(verificationID: record.id).count == 3)
        try await store.append(contentsOf: events)
        #expect(try await store.events(verificationID: record.id).count == 6)
    }

    /// Callbacks name a verification by the vendor's id: the record of that provider with that reference,
    /// the newest if a reference was reused, and never another provider's.
    public func recordsAreFoundByProviderReference() async throws {
        let store = try await makeStore()
        var older = try Self.phoneRecord(id: "VEref0001")
        older.providerReference = "shared-ref"
        var newer = try Self.phoneRecord(id: "VEref0002")
        newer.providerReference = "shared-ref"
        newer.createdAt = older.createdAt.addingTimeInterval(5)
        var other = Self.emailRecord(id: "VEref0003")
        other.providerReference = "other-ref"
        try await store.insert(older)
        try await store.insert(newer)
        try await store.insert(other)
        #expect(try await store.record(providerID: "twilio", reference: "shared-ref")?.id == "VEref0002")
        #expect(try await store.record(providerID: "sendgrid", reference: "other-ref")?.id == "VEref0003")
        #expect(try await store.record(providerID: "twilio", reference: "other-ref") == nil)
        #expect(try await store.record(providerID: "twilio", reference: "missing") == nil)
        // A reference changed by an update (a resend that started over) is found under the new value.
        var moved = Self.nextVersion(of: older, status: .pending)
        moved.providerReference = "moved-ref"
        #expect(try await store.update(moved))
        #expect(try await store.record(providerID: "twilio", reference: "moved-ref")?.id == "VEref0001")
    }

    /// Each kind of next action, and none, reads back as it was written.
    public func everyNextActionSurvivesARoundTrip() async throws {
        let store = try await makeStore()
        let actions: [NextAction?] = [
            nil,
            .solveChallenge(NextAction.Challenge(kind: "slider_captcha", data: ["x": 1])),
            .interceptCall(NextAction.CallInterception(callerPattern: "+4670123****", timeoutSeconds: 20)),
            .openURL(NextAction.URLOpening(url: "https://check.example/sna?id=1&b=2", cellularOnly: true)),
            .awaitApproval(NextAction.ApprovalPrompt(message: "Approve the login?", expiresAt: Self.epoch)),
            .awaitApproval(NextAction.ApprovalPrompt()),
        ]
        for (index, action) in actions.enumerated() {
            var record = Self.emailRecord(id: "VEaction\(index)")
            record.nextAction = action
            try await store.insert(record)
            #expect(try await store.record(id: record.id)?.nextAction == action)
        }
    }

    /// The experiment report's query: only that experiment's records, in `from ..< to`, oldest first.
    public func recordsByExperimentAndTime() async throws {
        let store = try await makeStore()
        for index in 0..<6 {
            var record = try Self.phoneRecord(id: "vf_exp\(index)")
            record.experiment = index < 4 ? "ab" : "other"
            record.createdAt = Self.epoch.addingTimeInterval(Double(10 * (3 - index % 4)))
            try await store.insert(record)
        }
        let all = try await store.records(experiment: "ab", from: nil, to: nil)
        #expect(all.map(\.id) == ["vf_exp3", "vf_exp2", "vf_exp1", "vf_exp0"])
        let window = try await store.records(
            experiment: "ab", from: Self.epoch.addingTimeInterval(10), to: Self.epoch.addingTimeInterval(30))
        #expect(window.map(\.id) == ["vf_exp2", "vf_exp1"])
        #expect(try await store.records(experiment: "none", from: nil, to: nil).isEmpty)
    }

    // MARK: - Records

    /// Phone, email and identity records come back equal to what was inserted, every field included:
    /// the provider state map, locales, metadata, empty strings and nil optionals.
    public func insertedRecordsReadBackWithEveryField() async throws {
        let store = try await makeStore()
        let records = [try Self.phoneRecord(), Self.emailRecord(), Self.identityRecord()]
        for record in records {
            try await store.insert(record)
        }
        for record in records {
            let stored = try #require(try await store.record(id: record.id))
            #expect(stored == record)
        }
        let email = try #require(try await store.record(id: Self.emailRecord().id))
        #expect(email.providerReference == nil)
        #expect(email.contentLanguage == nil)
        #expect(email.experimentArm == nil)
        #expect(email.clientReference == nil)
        #expect(email.apiKeyID == nil)
        let phone = try #require(try await store.record(id: try Self.phoneRecord().id))
        #expect(phone.clientReference == "", "an empty string must not come back as nil")
        #expect(phone.providerState.json["empty"] == .string(""))
    }

    /// Every channel and every status is stored and read back as itself.
    public func everyChannelAndStatusSurvivesARoundTrip() async throws {
        let store = try await makeStore()
        var inserted: [VerificationRecord] = []
        for channel in Channel.allCases {
            for status in VerificationStatus.allCases {
                var record = Self.emailRecord(id: "VE-\(channel.rawValue)-\(status.rawValue)")
                record.channel = channel
                record.status = status
                try await store.insert(record)
                inserted.append(record)
            }
        }
        for record in inserted {
            #expect(try await store.record(id: record.id) == record)
        }
    }

    /// Timestamps taken from a real clock (not on whole seconds) come back within a microsecond, the
    /// precision both SQLite (Unix seconds as REAL) and PostgreSQL (`timestamptz`) keep.
    public func timestampsKeepMicrosecondPrecision() async throws {
        let store = try await makeStore()
        var record = Self.emailRecord(id: "VEclock0001")
        record.createdAt = Date()
        record.updatedAt = Date(timeIntervalSinceReferenceDate: 800_000_000.123_456_789)
        record.expiresAt = record.createdAt.addingTimeInterval(600.000_001)
        try await store.insert(record)
        let stored = try #require(try await store.record(id: record.id))
        #expect(abs(stored.createdAt.timeIntervalSince(record.createdAt)) <= 0.000_001)
        #expect(abs(stored.updatedAt.timeIntervalSince(record.updatedAt)) <= 0.000_001)
        #expect(abs(stored.expiresAt.timeIntervalSince(record.expiresAt)) <= 0.000_001)
    }

    /// Inserting an id that exists fails with `internal` and leaves the stored record alone.
    public func duplicateInsertFailsAndKeepsTheOriginal() async throws {
        let store = try await makeStore()
        let original = try Self.phoneRecord()
        try await store.insert(original)
        let duplicate = Self.emailRecord(id: original.id)
        let error = await #expect(throws: GatewayError.self) { try await store.insert(duplicate) }
        #expect(error?.code == .internal)
        #expect(try await store.record(id: original.id) == original)
    }

    /// Reading an id that was never inserted gives nil, not an error.
    public func unknownIDReadsAsNil() async throws {
        let store = try await makeStore()
        try await store.insert(Self.emailRecord())
        #expect(try await store.record(id: "VEnothere0001") == nil)
        #expect(try await store.record(id: "") == nil)
    }

    // MARK: - Compare-and-set

    /// An update carrying the stored version plus one succeeds, and the next one builds on it.
    public func updateAdvancesTheVersion() async throws {
        let store = try await makeStore()
        let first = try Self.phoneRecord()
        try await store.insert(first)
        var second = Self.nextVersion(of: first, status: .approved)
        second.providerState = ["approvedBy": "check", "round": 2, "nested": ["ok": true]]
        second.metadata = [:]
        second.providerReference = nil
        #expect(try await store.update(second))
        #expect(try await store.record(id: first.id) == second)
        let third = Self.nextVersion(of: second)
        #expect(try await store.update(third))
        let stored = try #require(try await store.record(id: first.id))
        #expect(stored == third)
        #expect(stored.version == first.version + 2)
    }

    /// An update based on an old version, or skipping a version, or for an unknown id, returns false and
    /// changes nothing.
    public func staleUpdateFailsAndChangesNothing() async throws {
        let store = try await makeStore()
        let first = try Self.phoneRecord()
        try await store.insert(first)
        let winner = Self.nextVersion(of: first, attempts: 2)
        #expect(try await store.update(winner))

        let stale = Self.nextVersion(of: first, attempts: 3, status: .maxAttemptsReached)
        #expect(try await store.update(stale) == false)
        var skipping = Self.nextVersion(of: winner)
        skipping.version += 1
        #expect(try await store.update(skipping) == false)
        #expect(try await store.record(id: first.id) == winner)

        let stranger = Self.nextVersion(of: Self.emailRecord(id: "VEnothere0001"))
        #expect(try await store.update(stranger) == false)
        #expect(try await store.record(id: stranger.id) == nil)
    }

    /// Twenty writers holding the same version race; exactly one update lands, and it is the stored one.
    public func concurrentUpdatesFromOneVersionHaveOneWinner() async throws {
        let store = try await makeStore()
        let base = try Self.phoneRecord()
        try await store.insert(base)
        let candidates = (0..<20).map { Self.nextVersion(of: base, attempts: 100 + $0) }
        let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for (index, candidate) in candidates.enumerated() {
                group.addTask { (index, try await store.update(candidate)) }
            }
            var outcomes: [(Int, Bool)] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let winners = outcomes.filter(\.1).map(\.0)
        #expect(winners.count == 1)
        let winner = try #require(winners.first)
        #expect(try await store.record(id: base.id) == candidates[winner])
    }

    /// `modify` hands the stored record to the change and writes its answer as the next version; a change
    /// that answers `nil`, an answer that skips a version and an unknown id write nothing.
    public func modifyReadsThenWritesWithCompareAndSet() async throws {
        let store = try await makeStore()
        let first = try Self.phoneRecord()
        try await store.insert(first)
        let approved = Self.nextVersion(of: first, status: .approved)
        for durability in [StoreWriteDurability.provisional, .answered] {
            let unchanged = try await store.modify(id: first.id, durability: durability) { _ in nil }
            #expect(unchanged == StoreModification(read: first, written: nil))
        }
        let modified = try await store.modify(id: first.id, durability: .provisional) { read in
            read == first ? approved : nil
        }
        #expect(modified == StoreModification(read: first, written: approved))
        #expect(try await store.record(id: first.id) == approved)

        let skipping = try await store.modify(id: first.id, durability: .answered) { read in
            var next = Self.nextVersion(of: read)
            next.version += 1
            return next
        }
        #expect(skipping == StoreModification(read: approved, written: nil))
        #expect(try await store.record(id: first.id) == approved)

        let unknown = try await store.modify(id: "VEnothere0001", durability: .answered) { Self.nextVersion(of: $0) }
        #expect(unknown == StoreModification(read: nil, written: nil))
        #expect(try await store.record(id: "VEnothere0001") == nil)
    }

    /// Twenty modifies at once, each adding one attempt to what it read: every write that says it landed
    /// is counted in the stored record, each built on the one before (no write is lost to another).
    public func concurrentModifiesLoseNoWrite() async throws {
        let store = try await makeStore()
        let base = try Self.phoneRecord()
        try await store.insert(base)
        let written = try await withThrowingTaskGroup(of: VerificationRecord?.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await store.modify(id: base.id, durability: .provisional) { Self.nextVersion(of: $0) }.written
                }
            }
            var written: [VerificationRecord] = []
            for try await outcome in group { if let outcome { written.append(outcome) } }
            return written
        }
        let stored = try #require(try await store.record(id: base.id))
        #expect(!written.isEmpty)
        #expect(stored.attempts == base.attempts + written.count)
        #expect(stored.version == base.version + written.count)
        #expect(Set(written.map(\.version)).count == written.count)
        #expect(written.contains(stored))
    }

    // MARK: - Events

    /// Events come back in the order they were appended (not by timestamp), each verification seeing only
    /// its own; a verification without events has an empty log.
    public func eventsAreOrderedByAppendAndScopedPerVerification() async throws {
        let store = try await makeStore()
        let first = try Self.phoneRecord()
        let second = Self.emailRecord()
        try await store.insert(first)
        try await store.insert(second)
        let a1 = VerificationEvent(
            verificationID: first.id, kind: .started, at: Self.epoch.addingTimeInterval(10),
            detail: ["provider": "twilio", "channel": "sms"])
        let b1 = VerificationEvent(verificationID: second.id, kind: .started, at: Self.epoch)
        // Later events with earlier or equal timestamps: the log's order is the append order.
        let a2 = VerificationEvent(
            verificationID: first.id, kind: .providerCall, at: Self.epoch.addingTimeInterval(5),
            detail: ["operation": "check", "outcome": "incorrect_code", "latency_ms": "41"])
        let a3 = VerificationEvent(
            verificationID: first.id, kind: .checked, at: Self.epoch.addingTimeInterval(5), detail: [:])
        let b2 = VerificationEvent(
            verificationID: second.id, kind: .canceled, at: Self.epoch.addingTimeInterval(1.5),
            detail: ["reason": "client"])
        for event in [a1, b1, a2, a3, b2] {
            try await store.append(event)
        }
        #expect(try await store.events(verificationID: first.id) == [a1, a2, a3])
        #expect(try await store.events(verificationID: second.id) == [b1, b2])
        #expect(try await store.events(verificationID: Self.identityRecord().id) == [])
        for kind in VerificationEvent.Kind.allCases {
            try await store.append(VerificationEvent(verificationID: "VEkinds0001", kind: kind, at: Self.epoch))
        }
        #expect(try await store.events(verificationID: "VEkinds0001").map(\.kind) == VerificationEvent.Kind.allCases)
    }

    // MARK: - Instances

    /// A heartbeat inserts an instance's row, a later one moves only its time; rows list by id; removing one
    /// (or one that is not there) leaves the others.
    public func instanceHeartbeatsAreWrittenListedAndRemoved() async throws {
        let store = try await makeStore()
        #expect(try await store.instances().isEmpty)
        let first = GatewayInstance(
            id: "in_b", host: "host/boot/pid:[1]", pid: 41, startedAt: Self.epoch, heartbeatAt: Self.epoch)
        let second = GatewayInstance(
            id: "in_a", host: "other", pid: 1, startedAt: Self.epoch + 1, heartbeatAt: Self.epoch + 1.25)
        try await store.heartbeat(first)
        try await store.heartbeat(second)
        var later = first
        later.heartbeatAt = Self.epoch + 5.5
        try await store.heartbeat(later)
        #expect(try await store.instances() == [second, later])
        try await store.removeInstance(id: "in_a")
        try await store.removeInstance(id: "in_unknown")
        #expect(try await store.instances() == [later])
    }

    // MARK: - Idempotency

    /// The token the conformance checks claim keys under, unless a check needs a second claimant.
    public static let token = "token-1"

    /// A claim at `at` (the epoch by default) for `lease` seconds.
    public static func claim(
        _ store: any VerificationStore, _ key: IdempotencyKey, _ fingerprint: String, token: String = token,
        at: Date = epoch, lease: TimeInterval = 40
    ) async throws -> IdempotencyClaim {
        try await store.claimIdempotencyKey(key, fingerprint: fingerprint, token: token, at: at, lease: lease)
    }

    /// A new key is claimed; while it runs a retry sees it in progress; once completed a retry gets the
    /// stored response.
    public func idempotencyKeyGoesFromClaimedToInProgressToReplay() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "order-17")
        #expect(try await Self.claim(store, key, "fp-1") == .claimed)
        #expect(try await Self.claim(store, key, "fp-1") == .inProgress(owner: nil))
        let response = StoredResponse(status: 201, body: Data(#"{"id":"VEphone0001","status":"pending"}"#.utf8))
        try await store.completeIdempotencyKey(key, token: Self.token, response: response)
        #expect(try await Self.claim(store, key, "fp-1") == .replay(response))
        #expect(try await Self.claim(store, key, "fp-1") == .replay(response))
    }

    /// Reusing a key for a different request is a mismatch, both while it runs and after it completed.
    public func idempotencyKeyWithAnotherFingerprintIsAMismatch() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "order-18")
        #expect(try await Self.claim(store, key, "fp-1") == .claimed)
        #expect(try await Self.claim(store, key, "fp-2") == .mismatch)
        let stored = StoredResponse(status: 200, body: Data("{}".utf8))
        try await store.completeIdempotencyKey(key, token: Self.token, response: stored)
        #expect(try await Self.claim(store, key, "fp-2") == .mismatch)
    }

    /// A released key is free again, for the same request or a different one.
    public func releasedIdempotencyKeyCanBeClaimedAgain() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "order-19")
        #expect(try await Self.claim(store, key, "fp-1") == .claimed)
        try await store.releaseIdempotencyKey(key, token: Self.token)
        #expect(try await Self.claim(store, key, "fp-1") == .claimed)
        try await store.releaseIdempotencyKey(key, token: Self.token)
        #expect(try await Self.claim(store, key, "fp-2") == .claimed)
        // Releasing or completing a key nobody holds is not an error.
        let unknown = IdempotencyKey(scope: "key_live_1", key: "never-claimed")
        try await store.releaseIdempotencyKey(unknown, token: Self.token)
        let nothing = StoredResponse(status: 200, body: Data())
        try await store.completeIdempotencyKey(unknown, token: Self.token, response: nothing)
        #expect(try await Self.claim(store, unknown, "fp-1") == .claimed)
    }

    /// The same key under two API keys is two independent keys.
    public func idempotencyKeysAreScoped() async throws {
        let store = try await makeStore()
        let first = IdempotencyKey(scope: "key_live_1", key: "shared")
        let second = IdempotencyKey(scope: "key_live_2", key: "shared")
        #expect(try await Self.claim(store, first, "fp-1") == .claimed)
        #expect(try await Self.claim(store, second, "fp-2") == .claimed)
        let response = StoredResponse(status: 201, body: Data("first".utf8))
        try await store.completeIdempotencyKey(first, token: Self.token, response: response)
        #expect(try await Self.claim(store, second, "fp-2") == .inProgress(owner: nil))
        try await store.releaseIdempotencyKey(second, token: Self.token)
        #expect(try await Self.claim(store, first, "fp-1") == .replay(response))
        #expect(try await Self.claim(store, second, "fp-3") == .claimed)
    }

    /// A completed response with an empty body (a 204) replays as an empty body, not as "in progress".
    public func emptyStoredResponseReplaysAsEmpty() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "cancel-1")
        #expect(try await Self.claim(store, key, "fp-1") == .claimed)
        let response = StoredResponse(status: 204, body: Data())
        try await store.completeIdempotencyKey(key, token: Self.token, response: response)
        #expect(try await Self.claim(store, key, "fp-1") == .replay(response))
    }

    /// Twenty requests racing with one new key: exactly one claims it, the rest see it in progress.
    public func concurrentClaimsOfOneKeyHaveOneWinner() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "race")
        let claims = try await withThrowingTaskGroup(of: IdempotencyClaim.self) { group in
            for _ in 0..<20 {
                group.addTask { try await Self.claim(store, key, "fp-1") }
            }
            var claims: [IdempotencyClaim] = []
            for try await claim in group { claims.append(claim) }
            return claims
        }
        #expect(claims.count == 20)
        #expect(claims.filter { $0 == .claimed }.count == 1)
        #expect(claims.filter { $0 == .inProgress(owner: nil) }.count == 19)
    }

    /// A claim nobody finished is in progress until its lease (renewed by recording progress) runs out; then
    /// the next claim takes it over and learns how far it got, and the old holder's token no longer counts.
    public func lapsedClaimIsTakenOverWithItsProgress() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "crashed")
        #expect(try await Self.claim(store, key, "fp-1") == .claimed)
        #expect(
            try await Self.claim(store, key, "fp-1", token: "token-2", at: Self.epoch + 39) == .inProgress(owner: nil))
        let progress = IdempotencyProgress(stage: .vendorCallBegun, verificationID: "vf_0001")
        #expect(
            try await store.recordIdempotencyProgress(
                key, token: Self.token, progress: progress, until: Self.epoch + 45))
        #expect(
            try await Self.claim(store, key, "fp-1", token: "token-2", at: Self.epoch + 44) == .inProgress(owner: nil))
        #expect(try await Self.claim(store, key, "fp-2", token: "token-2", at: Self.epoch + 50) == .mismatch)
        #expect(try await Self.claim(store, key, "fp-1", token: "token-2", at: Self.epoch + 45) == .takenOver(progress))
        // The new holder's lease runs from the takeover.
        #expect(
            try await Self.claim(store, key, "fp-1", token: "token-3", at: Self.epoch + 84) == .inProgress(owner: nil))
        let late = StoredResponse(status: 201, body: Data("late".utf8))
        #expect(try await store.completeIdempotencyKey(key, token: Self.token, response: late) == false)
        #expect(
            try await store.recordIdempotencyProgress(
                key, token: Self.token, progress: progress, until: Self.epoch + 500) == false)
        let response = StoredResponse(status: 201, body: Data("second".utf8))
        #expect(try await store.completeIdempotencyKey(key, token: "token-2", response: response))
        #expect(try await Self.claim(store, key, "fp-1", token: "token-3", at: Self.epoch + 1000) == .replay(response))
    }

    /// Twenty retries of one lapsed key at once: exactly one takes it over, the rest see it in progress.
    public func concurrentTakeoversOfALapsedClaimHaveOneWinner() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "lapsed-race")
        #expect(try await Self.claim(store, key, "fp-1") == .claimed)
        let claims = try await withThrowingTaskGroup(of: IdempotencyClaim.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try await Self.claim(store, key, "fp-1", token: "taker-\(index)", at: Self.epoch + 60)
                }
            }
            var claims: [IdempotencyClaim] = []
            for try await claim in group { claims.append(claim) }
            return claims
        }
        #expect(claims.filter { $0 == .takenOver(IdempotencyProgress(stage: .claimed)) }.count == 1)
        #expect(claims.filter { $0 == .inProgress(owner: nil) }.count == 19)
    }

    /// A claim names the instance holding it, which an in-progress answer reports. Claiming with that instance
    /// as the dead owner takes the claim over before its lease lapses, with its progress (the provider and the
    /// time of the call included); naming any other instance does not, nor does naming the dead instance again
    /// once another took the claim. The dead holder's token no longer counts.
    public func deadOwnersClaimIsTakenOverAtOnceWithItsProgress() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "owner-died")
        func claim(_ token: String, owner: String, at: TimeInterval, deadOwner: String? = nil) async throws
            -> IdempotencyClaim
        {
            try await store.claimIdempotencyKey(
                key, fingerprint: "fp-1", token: token, owner: owner, at: Self.epoch + at, lease: 40,
                deadOwner: deadOwner)
        }
        #expect(try await claim(Self.token, owner: "in_a", at: 0) == .claimed)
        #expect(try await claim("token-2", owner: "in_b", at: 1) == .inProgress(owner: "in_a"))
        let progress = IdempotencyProgress(
            stage: .vendorCallBegun, verificationID: "vf_0003", providerID: "sinch-eu",
            callBegunAt: Self.epoch + 2.25)
        #expect(
            try await store.recordIdempotencyProgress(
                key, token: Self.token, progress: progress, until: Self.epoch + 42))
        #expect(try await claim("token-2", owner: "in_b", at: 3, deadOwner: "in_c") == .inProgress(owner: "in_a"))
        #expect(
            try await store.claimIdempotencyKey(
                key, fingerprint: "fp-2", token: "token-2", owner: "in_b", at: Self.epoch + 3, lease: 40,
                deadOwner: "in_a") == .mismatch)
        #expect(try await claim("token-2", owner: "in_b", at: 3, deadOwner: "in_a") == .takenOver(progress))
        // The taker holds it for a whole lease from the takeover, under its own name.
        #expect(try await claim("token-3", owner: "in_c", at: 42, deadOwner: "in_a") == .inProgress(owner: "in_b"))
        #expect(try await claim("token-3", owner: "in_c", at: 43) == .takenOver(progress))
        #expect(
            try await store.recordIdempotencyProgress(
                key, token: Self.token, progress: progress, until: Self.epoch + 99)
                == false)
        #expect(
            try await store.completeIdempotencyKey(
                key, token: "token-2", response: StoredResponse(status: 201, body: Data()))
                == false)
        let response = StoredResponse(status: 201, body: Data("third".utf8))
        #expect(try await store.completeIdempotencyKey(key, token: "token-3", response: response))
        #expect(try await claim("token-4", owner: "in_d", at: 44, deadOwner: "in_c") == .replay(response))
        // A claim that names no instance is never taken from a dead one: only its lease ends it.
        let anonymous = IdempotencyKey(scope: "key_live_1", key: "no-owner")
        #expect(try await Self.claim(store, anonymous, "fp-1") == .claimed)
        #expect(
            try await store.claimIdempotencyKey(
                anonymous, fingerprint: "fp-1", token: "token-2", owner: "in_b", at: Self.epoch + 1, lease: 40,
                deadOwner: "in_a") == .inProgress(owner: nil))
    }

    /// Twenty retries at once, each having found the holder dead: exactly one takes the claim over; the others
    /// see it in progress under the winner's instance.
    public func concurrentTakeoversFromADeadOwnerHaveOneWinner() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "owner-race")
        #expect(
            try await store.claimIdempotencyKey(
                key, fingerprint: "fp-1", token: Self.token, owner: "in_dead", at: Self.epoch, lease: 40,
                deadOwner: nil) == .claimed)
        let claims = try await withThrowingTaskGroup(of: (String, IdempotencyClaim).self) { group in
            for index in 0..<20 {
                group.addTask {
                    let owner = "in_taker\(index)"
                    return (
                        owner,
                        try await store.claimIdempotencyKey(
                            key, fingerprint: "fp-1", token: "taker-\(index)", owner: owner, at: Self.epoch + 1,
                            lease: 40, deadOwner: "in_dead")
                    )
                }
            }
            var claims: [(String, IdempotencyClaim)] = []
            for try await claim in group { claims.append(claim) }
            return claims
        }
        let winners = claims.filter { $0.1 == .takenOver(IdempotencyProgress(stage: .claimed)) }
        #expect(winners.count == 1)
        let winner = try #require(winners.first?.0)
        #expect(claims.filter { $0.1 == .inProgress(owner: winner) }.count == 19)
    }

    /// A holder that called a vendor and then failed without an answer abandons the claim: the next retry
    /// takes it over at once and sees the progress, which a takeover keeps.
    public func abandonedClaimIsTakenOverAtOnceWithItsProgress() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "abandoned")
        #expect(try await Self.claim(store, key, "fp-1") == .claimed)
        let progress = IdempotencyProgress(stage: .vendorCallBegun, verificationID: "vf_0002")
        #expect(
            try await store.recordIdempotencyProgress(
                key, token: Self.token, progress: progress, until: Self.epoch + 40))
        try await store.abandonIdempotencyKey(key, token: "someone-else", at: Self.epoch + 5)
        #expect(
            try await Self.claim(store, key, "fp-1", token: "token-2", at: Self.epoch + 5) == .inProgress(owner: nil))
        try await store.abandonIdempotencyKey(key, token: Self.token, at: Self.epoch + 5)
        #expect(try await Self.claim(store, key, "fp-1", token: "token-2", at: Self.epoch + 5) == .takenOver(progress))
        try await store.abandonIdempotencyKey(key, token: "token-2", at: Self.epoch + 6)
        #expect(try await Self.claim(store, key, "fp-1", token: "token-3", at: Self.epoch + 6) == .takenOver(progress))
    }

    /// The record and its events are stored and the claim's lease ends at the record's creation, keeping its id:
    /// the next claim takes it over at once and finds the verification. Another token's claim keeps running
    /// (the record is stored all the same); an insert that fails (a duplicate id) leaves the claim running.
    public func insertEndingAClaimStoresTheRecordAndEndsTheLeaseTogether() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "twilio_compat.create:key_live_1", key: "VA1 sms +447700900123")
        #expect(try await Self.claim(store, key, "fp-1") == .claimed)
        let record = Self.emailRecord(id: "VEclaimend1")
        let event = VerificationEvent(verificationID: record.id, kind: .started, at: Self.epoch)
        try await store.insert(record, events: [event], endingClaim: key, token: Self.token)
        #expect(try await store.record(id: record.id) == record)
        #expect(try await store.events(verificationID: record.id).count == 1)
        #expect(
            try await Self.claim(store, key, "fp-1", token: "token-2", at: Self.epoch + 1)
                == .takenOver(IdempotencyProgress(stage: .claimed, verificationID: record.id)))

        let held = IdempotencyKey(scope: "twilio_compat.create:key_live_1", key: "VA1 sms +447700900124")
        #expect(try await Self.claim(store, held, "fp-1") == .claimed)
        let other = Self.emailRecord(id: "VEclaimend2")
        try await store.insert(other, events: [], endingClaim: held, token: "someone-else")
        #expect(try await store.record(id: other.id) == other)
        #expect(
            try await Self.claim(store, held, "fp-1", token: "token-2", at: Self.epoch + 1) == .inProgress(owner: nil))
        await #expect(throws: GatewayError.self) {
            try await store.insert(other, events: [], endingClaim: held, token: Self.token)
        }
        #expect(
            try await Self.claim(store, held, "fp-1", token: "token-2", at: Self.epoch + 1) == .inProgress(owner: nil))
    }

    /// A new key keeps the progress its claim carried (a start that claims just before its vendor call), and a
    /// takeover keeps it too, whatever progress the taker offered; a takeover counts as a claim at its own
    /// time for pruning, so a claim taken over recently stays however old its key.
    public func newClaimCarriesItsFirstProgressAndATakeoverIsANewClaim() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "twilio_compat.create:key_live_1", key: "VA1 sms +447700900125")
        let first = IdempotencyProgress(
            stage: .vendorCallBegun, verificationID: "vf_0000000000000000000000000000c1a1", providerID: "alpha",
            callBegunAt: Self.epoch + 1)
        #expect(
            try await store.claimIdempotencyKey(
                key, fingerprint: "fp", token: Self.token, owner: nil, at: Self.epoch, lease: 40, deadOwner: nil,
                progress: first) == .claimed)
        #expect(
            try await Self.claim(store, key, "fp", token: "token-2", at: Self.epoch + 10) == .inProgress(owner: nil))
        #expect(
            try await store.claimIdempotencyKey(
                key, fingerprint: "fp", token: "token-2", owner: nil, at: Self.epoch + 50, lease: 40, deadOwner: nil,
                progress: IdempotencyProgress(stage: .claimed, verificationID: "vf_other")) == .takenOver(first))
        #expect(try await Self.claim(store, key, "fp", token: "token-3", at: Self.epoch + 100) == .takenOver(first))
        #expect(
            try await store.recordIdempotencyProgress(
                key, token: "token-3", progress: IdempotencyProgress(stage: .claimed), until: Self.epoch + 101))
        #expect(try await store.pruneIdempotencyKeys(claimedBefore: Self.epoch + 99, limit: 10) == 0)
        #expect(try await store.pruneIdempotencyKeys(claimedBefore: Self.epoch + 150, limit: 10) == 1)
        #expect(try await Self.claim(store, key, "fp", token: "token-4", at: Self.epoch + 200) == .claimed)
    }

    /// Another token's release, progress or completion changes nothing; a completed key is never released.
    public func onlyTheHoldersTokenReleasesOrCompletesAClaim() async throws {
        let store = try await makeStore()
        let key = IdempotencyKey(scope: "key_live_1", key: "held")
        #expect(try await Self.claim(store, key, "fp-1") == .claimed)
        try await store.releaseIdempotencyKey(key, token: "token-2")
        #expect(
            try await store.recordIdempotencyProgress(
                key, token: "token-2", progress: IdempotencyProgress(stage: .vendorCallBegun), until: Self.epoch + 1)
                == false)
        #expect(
            try await store.completeIdempotencyKey(
                key, token: "token-2", response: StoredResponse(status: 500, body: Data())) == false)
        #expect(
            try await Self.claim(store, key, "fp-1", token: "token-2", at: Self.epoch + 1) == .inProgress(owner: nil))
        let response = StoredResponse(status: 201, body: Data("done".utf8))
        #expect(try await store.completeIdempotencyKey(key, token: Self.token, response: response))
        try await store.releaseIdempotencyKey(key, token: Self.token)
        #expect(
            try await store.recordIdempotencyProgress(
                key, token: Self.token, progress: IdempotencyProgress(stage: .claimed), until: Self.epoch + 1) == false)
        #expect(try await Self.claim(store, key, "fp-1", token: "token-2", at: Self.epoch + 100) == .replay(response))
    }

    /// Keys claimed before the cut-off go, completed or lapsed, at most `limit` per call; a claim whose
    /// lease still runs and a newer key stay.
    public func expiredIdempotencyKeysArePrunedInBoundedBatches() async throws {
        let store = try await makeStore()
        let done = IdempotencyKey(scope: "key_live_1", key: "done")
        let lapsed = IdempotencyKey(scope: "key_live_1", key: "lapsed")
        let running = IdempotencyKey(scope: "key_live_1", key: "running")
        let newer = IdempotencyKey(scope: "key_live_1", key: "newer")
        #expect(try await Self.claim(store, done, "fp") == .claimed)
        try await store.completeIdempotencyKey(
            done, token: Self.token, response: StoredResponse(status: 201, body: Data()))
        #expect(try await Self.claim(store, lapsed, "fp", at: Self.epoch + 1) == .claimed)
        #expect(try await Self.claim(store, running, "fp", at: Self.epoch + 2, lease: 1000) == .claimed)
        #expect(try await Self.claim(store, newer, "fp", at: Self.epoch + 200) == .claimed)
        let cutoff = Self.epoch + 100
        #expect(try await store.pruneIdempotencyKeys(claimedBefore: cutoff, limit: 1) == 1)
        #expect(try await store.pruneIdempotencyKeys(claimedBefore: cutoff, limit: 10) == 1)
        #expect(try await store.pruneIdempotencyKeys(claimedBefore: cutoff, limit: 10) == 0)
        for key in [done, lapsed] {
            #expect(try await Self.claim(store, key, "fp-other", token: "token-2", at: Self.epoch + 300) == .claimed)
        }
        #expect(
            try await Self.claim(store, running, "fp", token: "token-2", at: Self.epoch + 300)
                == .inProgress(owner: nil))
        #expect(
            try await Self.claim(store, newer, "fp", token: "token-2", at: Self.epoch + 210) == .inProgress(owner: nil))
    }
}
