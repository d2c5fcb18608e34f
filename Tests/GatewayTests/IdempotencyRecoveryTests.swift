import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import gateway

/// A start whose instance died holding its `Idempotency-Key` (docs/architecture.md §9.2): the dead claim is
/// put in the store as that instance left it, the clock is moved past its lease, and the retry must get a
/// true answer without a second send.
@Suite("Idempotency claims left by a dead instance")
struct IdempotencyRecoveryTests {
    /// The claim a crashed start left: `progress` as it recorded it, its lease running from the clock's now.
    static func deadClaim(
        _ runtime: GatewayRuntime, key: String, body: String, progress: IdempotencyProgress? = nil
    ) async throws {
        let store = runtime.service.store
        // Keys are scoped to the API key's id: the sandbox key's.
        let idempotencyKey = IdempotencyKey(scope: "key_" + APIKeyring.hash(GatewayHarness.apiKey).prefix(12), key: key)
        let fingerprint = Hex.lowercase(SHA256.hash(data: Data(body.utf8)))
        let now = runtime.service.clock.now
        let lease = runtime.service.policy.idempotencyLease
        #expect(
            try await store.claimIdempotencyKey(
                idempotencyKey, fingerprint: fingerprint, token: "dead", at: now, lease: lease) == .claimed)
        if let progress {
            #expect(
                try await store.recordIdempotencyProgress(
                    idempotencyKey, token: "dead", progress: progress, until: now.addingTimeInterval(lease)))
        }
    }

    static func sent(_ runtime: GatewayRuntime, to number: String) -> Int {
        runtime.sandbox?.outbox.all.filter { $0.to == number }.count ?? 0
    }

    @Test("a claim that died before any vendor call is in progress until its lease ends, then starts anew once")
    func diedBeforeTheVendor() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let body = #"{"to": "+14155550140"}"#
            try await Self.deadClaim(runtime, key: "crash-1", body: body)
            let early = try await client.call(.post, "/v1/verifications", json: body, headers: [.idempotencyKey: "crash-1"])
            #expect(early.status == .conflict)
            #expect(early.body.errorCode == "idempotency_conflict")
            harness.clock.advance(by: runtime.service.policy.idempotencyLease)
            let retry = try await client.call(.post, "/v1/verifications", json: body, headers: [.idempotencyKey: "crash-1"])
            #expect(retry.status == .created)
            let replay = try await client.call(.post, "/v1/verifications", json: body, headers: [.idempotencyKey: "crash-1"])
            #expect(replay.status == .created)
            #expect(replay.headers[.idempotentReplayed] == "true")
            #expect(replay.body["id"] as? String == retry.body["id"] as? String)
            #expect(Self.sent(runtime, to: "+14155550140") == 1)
        }
    }

    @Test("a claim that died after calling the vendor and storing nothing answers idempotency_outcome_unknown, sending nothing")
    func diedAtTheVendor() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let body = #"{"to": "+14155550141"}"#
            let lost = VerificationService.newID()
            try await Self.deadClaim(
                runtime, key: "crash-2", body: body,
                progress: IdempotencyProgress(stage: .vendorCallBegun, verificationID: lost))
            harness.clock.advance(by: runtime.service.policy.idempotencyLease)
            for _ in 0..<2 {
                // Each retry takes the claim over at once (the verification may still turn up) and is told the same.
                let retry = try await client.call(
                    .post, "/v1/verifications", json: body, headers: [.idempotencyKey: "crash-2"])
                #expect(retry.status == .conflict)
                #expect(retry.body.errorCode == "idempotency_outcome_unknown")
                #expect(retry.body.error?["retryable"] as? Bool == false)
                #expect((retry.body.error?["message"] as? String)?.contains("new Idempotency-Key") == true)
            }
            #expect(Self.sent(runtime, to: "+14155550141") == 0)
        }
    }

    @Test("a claim that died after storing its verification answers that verification, replayed")
    func diedAfterStoring() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let body = #"{"to": "+14155550142"}"#
            // The verification the dead start stored (its answer never reached the key).
            let original = try await client.call(.post, "/v1/verifications", json: body)
            let id = try #require(original.body["id"] as? String)
            try await Self.deadClaim(
                runtime, key: "crash-3", body: body,
                progress: IdempotencyProgress(stage: .vendorCallBegun, verificationID: id))
            harness.clock.advance(by: runtime.service.policy.idempotencyLease)
            for _ in 0..<2 {
                let retry = try await client.call(
                    .post, "/v1/verifications", json: body, headers: [.idempotencyKey: "crash-3"])
                #expect(retry.status == .created)
                #expect(retry.body["id"] as? String == id)
                #expect(retry.headers[.idempotentReplayed] == "true")
            }
            #expect(Self.sent(runtime, to: "+14155550142") == 1)
        }
    }

    @Test("two retries of one lapsed key at once: one takes it over and starts, the other is told it is in progress or replayed")
    func concurrentRetriesAfterTheLease() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let body = #"{"to": "+14155550143", "provider": "twilio"}"#
            try await Self.deadClaim(runtime, key: "crash-4", body: body)
            harness.clock.advance(by: runtime.service.policy.idempotencyLease)
            // A slow vendor keeps the taker's start running while the other retry arrives.
            runtime.sandbox?.mount("twilio")?.emulator.faults.set(.init(latencyMilliseconds: 200))
            let answers = try await withThrowingTaskGroup(
                of: (status: HTTPResponse.Status, code: String?, id: String?).self
            ) { group in
                for _ in 0..<2 {
                    group.addTask {
                        let answer = try await client.call(
                            .post, "/v1/verifications", json: body, headers: [.idempotencyKey: "crash-4"])
                        return (answer.status, answer.body.errorCode, answer.body["id"] as? String)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let created = answers.filter { $0.status == .created }
            #expect(created.count >= 1)
            #expect(Set(created.compactMap(\.id)).count == 1)
            for answer in answers where answer.status != .created {
                #expect(answer.status == .conflict)
                #expect(answer.code == "idempotency_conflict")
            }
            #expect(Self.sent(runtime, to: "+14155550143") == 1)
        }
    }

    @Test("keys older than the retention are pruned by the store maintenance")
    func pruning() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let body = #"{"to": "+14155550144"}"#
            let first = try await client.call(.post, "/v1/verifications", json: body, headers: [.idempotencyKey: "old"])
            #expect(first.status == .created)
            let maintenance = StoreMaintenance(
                store: runtime.service.store, clock: harness.clock, policy: runtime.service.policy,
                logger: runtime.service.logger, batch: 1)
            #expect(await maintenance.pruneIdempotencyKeys() == 0)
            harness.clock.advance(by: runtime.service.policy.idempotencyRetention + 1)
            #expect(await maintenance.pruneIdempotencyKeys() == 1)
            // The key is new again: the same key and body start a second verification.
            let again = try await client.call(.post, "/v1/verifications", json: body, headers: [.idempotencyKey: "old"])
            #expect(again.status == .created)
            #expect(again.headers[.idempotentReplayed] == nil)
            #expect(again.body["id"] as? String != first.body["id"] as? String)
        }
    }
}
