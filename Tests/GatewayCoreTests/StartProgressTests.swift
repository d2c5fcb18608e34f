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
}
