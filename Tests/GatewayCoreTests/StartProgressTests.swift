import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// What an idempotent start records in its claim before each vendor call: the provider a takeover may ask
/// about it, or none once a call that may have sent was failed over (docs/architecture.md §9.2).
@Suite("Idempotent start progress")
struct StartProgressTests {
    static let key = IdempotencyKey(scope: "key_1", key: "order-1")

    /// Starts under a claim of the instance `in_dead`, then reads the progress back as a taker that found it dead.
    static func progress(
        after alphaFails: GatewayError, failoverOnTimeout: Bool = true
    ) async throws -> (IdempotencyProgress, VerificationRecord) {
        let alpha = ScriptedProvider(id: "alpha")
        let beta = ScriptedProvider(id: "beta")
        alpha.scriptStart(.fail(alphaFails))
        let table = RoutingTable(
            defaultOrder: ["alpha"],
            rules: [Route(name: "r", target: .providers(["alpha", "beta"]), failoverOnTimeout: failoverOnTimeout)])
        let h = try ServiceHarness([alpha, beta], table: table)
        let claim = IdempotentStart(key: key)
        #expect(
            try await h.store.claimIdempotencyKey(
                key, fingerprint: "fp", token: claim.token, owner: "in_dead", at: h.clock.now, lease: 45,
                deadOwner: nil) == .claimed)
        let record = try await h.service.start(try .sms(), idempotency: claim)
        let taken = try await h.store.claimIdempotencyKey(
            key, fingerprint: "fp", token: "taker", owner: "in_taker", at: h.clock.now, lease: 45, deadOwner: "in_dead")
        guard case .takenOver(let progress) = taken else {
            Issue.record("expected a takeover, got \(taken)")
            return (IdempotencyProgress(stage: .claimed), record)
        }
        #expect(progress.callBegunAt == h.clock.now)
        #expect(progress.verificationID == record.id)
        #expect(progress.stage == .vendorCallBegun)
        return (progress, record)
    }

    @Test("after a failure before the vendor accepted, the next call names its own provider")
    func cleanFailover() async throws {
        let (progress, record) = try await Self.progress(after: GatewayError(.providerUnavailable, "down"))
        #expect(record.providerID == "beta")
        #expect(progress.providerID == "beta")
    }

    @Test("after an ambiguous failure, the next call names no provider: two vendors may have sent")
    func ambiguousFailover() async throws {
        let (progress, record) = try await Self.progress(
            after: GatewayError(.providerTimeout, "read timeout", sendMayHaveHappened: true))
        #expect(record.providerID == "beta")
        #expect(progress.providerID == nil)
    }

    @Test("a start anew after a takeover keeps the dead start's id, which its vendor knows as the reference")
    func resumedID() async throws {
        let alpha = ScriptedProvider(id: "alpha")
        let h = try ServiceHarness([alpha])
        let claim = IdempotentStart(key: Self.key, resumingID: "vf_0000000000000000000000000000beef")
        _ = try await h.store.claimIdempotencyKey(
            Self.key, fingerprint: "fp", token: claim.token, at: h.clock.now, lease: 45)
        let record = try await h.service.start(try .sms(), idempotency: claim)
        #expect(record.id == "vf_0000000000000000000000000000beef")
        #expect(alpha.calls(.start).first?.startRequest?.verificationID == record.id)
    }

    @Test("a start that claims ahead takes a new key in the one write that records its first vendor call")
    func claimAhead() async throws {
        let alpha = ScriptedProvider(id: "alpha")
        let spy = SpyVerificationStore()
        let h = try ServiceHarness([alpha], store: spy)
        // A window no busy machine outlasts between the claim and the call.
        let claim = IdempotentStart(key: Self.key, claimsAhead: "fp", aheadCallWindow: 600)
        let claimedAt = h.clock.now
        let record = try await h.service.start(try .sms(), idempotency: claim)
        #expect(alpha.calls(.start).count == 1)
        #expect(claim.tookClaimAhead && claim.claimFoundTaken == nil)
        #expect(spy.claims == 1)
        #expect(spy.progressWrites == 0)
        h.clock.advance(by: h.service.policy.idempotencyLease + 1)
        let taken = try await spy.claimIdempotencyKey(
            Self.key, fingerprint: "fp", token: "taker", at: h.clock.now, lease: 45)
        // The recorded call begins no earlier than the call did: a takeover waits at least as long for it.
        #expect(
            taken
                == .takenOver(
                    IdempotencyProgress(
                        stage: .vendorCallBegun, verificationID: record.id, providerID: "alpha",
                        callBegunAt: claimedAt.addingTimeInterval(600))))
    }

    @Test("a start that claims ahead a key another request holds stops before it counts or sends anything")
    func claimAheadFindsItHeld() async throws {
        let alpha = ScriptedProvider(id: "alpha")
        var policy = VerificationPolicy()
        policy.rateLimits.startsPerDestination = RateLimit(limit: 1, window: 3600)
        let h = try ServiceHarness([alpha], policy: policy)
        #expect(
            try await h.store.claimIdempotencyKey(
                Self.key, fingerprint: "fp", token: "holder", at: h.clock.now, lease: 45)
                == .claimed)
        let claim = IdempotentStart(key: Self.key, claimsAhead: "fp")
        await #expect(throws: GatewayError.self) { try await h.service.start(try .sms(), idempotency: claim) }
        #expect(claim.claimFoundTaken == .inProgress(owner: nil))
        #expect(!claim.tookClaimAhead)
        #expect(alpha.calls(.start).isEmpty)
        // Not counted: the destination's one start an hour is still there.
        try await h.store.releaseIdempotencyKey(Self.key, token: "holder")
        _ = try await h.service.start(try .sms())
        #expect(alpha.calls(.start).count == 1)
    }
}
