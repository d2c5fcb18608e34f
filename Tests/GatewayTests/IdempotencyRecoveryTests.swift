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
    /// The claim a crashed start left: `progress` as it recorded it, its lease running from the clock's now,
    /// held by the instance `owner` (none by default).
    static func deadClaim(
        _ runtime: GatewayRuntime, key: String, body: String, progress: IdempotencyProgress? = nil,
        owner: String? = nil
    ) async throws {
        let store = runtime.service.store
        // Keys are scoped to the API key's id: the sandbox key's.
        let idempotencyKey = IdempotencyKey(scope: "key_" + APIKeyring.hash(GatewayHarness.apiKey).prefix(12), key: key)
        let fingerprint = Hex.lowercase(SHA256.hash(data: Data(body.utf8)))
        let now = runtime.service.clock.now
        let lease = runtime.service.policy.idempotencyLease
        #expect(
            try await store.claimIdempotencyKey(
                idempotencyKey, fingerprint: fingerprint, token: "dead", owner: owner, at: now, lease: lease,
                deadOwner: nil) == .claimed)
        if let progress {
            #expect(
                try await store.recordIdempotencyProgress(
                    idempotencyKey, token: "dead", progress: progress, until: now.addingTimeInterval(lease)))
        }
    }

    static func sent(_ runtime: GatewayRuntime, to number: String) -> Int {
        runtime.sandbox?.outbox.all.filter { $0.to == number }.count ?? 0
    }

    /// The heartbeat row of an instance killed on this host: its process (a pid no process has) is gone.
    static let killed = "in_killed00000001"

    static func registerKilledInstance(_ runtime: GatewayRuntime) async throws {
        let now = runtime.service.clock.now
        try await runtime.service.store.heartbeat(
            GatewayInstance(
                id: killed, host: ProcessIdentity.hostKey(), pid: Int(Int32.max), startedAt: now, heartbeatAt: now))
    }

    /// What a start killed during its call to `provider` left: the claim of the dead instance, its progress
    /// naming the verification id (the vendor's reference), the provider and the call's time.
    static func killedAtTheVendor(
        _ runtime: GatewayRuntime, key: String, body: String, provider: String, id: String
    ) async throws {
        try await registerKilledInstance(runtime)
        try await deadClaim(
            runtime, key: key, body: body,
            progress: IdempotencyProgress(
                stage: .vendorCallBegun, verificationID: id, providerID: provider,
                callBegunAt: runtime.service.clock.now),
            owner: killed)
    }

    /// The dead start's own call, as the vendor got it: a start at `provider` carrying the gateway id.
    static func vendorGotTheStart(_ runtime: GatewayRuntime, provider: String, to number: String, id: String)
        async throws
    {
        let vendor = try #require(runtime.service.registry.provider(provider))
        _ = try await vendor.start(
            StartVerification(destination: .phone(try PhoneNumber(parsing: number)), channel: .sms, verificationID: id))
    }

    static func post(
        _ client: some TestClientProtocol, _ body: String, key: String
    ) async throws -> (status: HTTPResponse.Status, body: [String: Any], headers: HTTPFields) {
        try await client.call(.post, "/v1/verifications", json: body, headers: [.idempotencyKey: key])
    }

    @Test("a claim whose instance died is taken over at once, not after its lease; a live instance's stays in progress")
    func deadOwnerIsTakenOverAtOnce() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            try await Self.registerKilledInstance(runtime)
            let body = #"{"to": "+14155550145"}"#
            try await Self.deadClaim(runtime, key: "owner-dead", body: body, owner: Self.killed)
            let retry = try await Self.post(client, body, key: "owner-dead")
            #expect(retry.status == .created)
            #expect(Self.sent(runtime, to: "+14155550145") == 1)
            let replay = try await Self.post(client, body, key: "owner-dead")
            #expect(replay.headers[.idempotentReplayed] == "true")
            #expect(replay.body["id"] as? String == retry.body["id"] as? String)

            // An instance that beats on this host, its process alive: its claim is left to it.
            let now = runtime.service.clock.now
            try await runtime.service.store.heartbeat(
                GatewayInstance(
                    id: "in_alive0000000001", host: ProcessIdentity.hostKey(), pid: ProcessIdentity.currentPID(),
                    startedAt: now, heartbeatAt: now))
            let other = #"{"to": "+14155550146"}"#
            try await Self.deadClaim(runtime, key: "owner-alive", body: other, owner: "in_alive0000000001")
            let busy = try await Self.post(client, other, key: "owner-alive")
            #expect(busy.status == .conflict)
            #expect(busy.body.errorCode == "idempotency_conflict")
            #expect(Self.sent(runtime, to: "+14155550146") == 0)
        }
    }

    @Test(
        "Sinch has the dead start under its reference: the retry stores and answers it at once, 201 replayed, no second send"
    )
    func sinchFoundByReference() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let number = "+46701234571"
            let body = #"{"to": "\#(number)", "provider": "sinch"}"#
            let id = VerificationService.newID()
            try await Self.vendorGotTheStart(runtime, provider: "sinch", to: number, id: id)
            try await Self.killedAtTheVendor(runtime, key: "sinch-found", body: body, provider: "sinch", id: id)
            let retry = try await Self.post(client, body, key: "sinch-found")
            #expect(retry.status == .created)
            #expect(retry.headers[.idempotentReplayed] == "true")
            #expect(retry.body["id"] as? String == id)
            #expect(retry.body["provider"] as? String == "sinch")
            #expect(Self.sent(runtime, to: number) == 1)
            let again = try await Self.post(client, body, key: "sinch-found")
            #expect(again.body["id"] as? String == id)
            // The stored verification is Sinch's: the code the user got approves it.
            let code = try sandboxCode(runtime, to: number)
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.status == .ok)
            #expect(check.body["status"] as? String == "approved")
            let events = try await runtime.service.store.events(verificationID: id)
            #expect(events.first?.detail["recovered"] == "vendor_lookup")
        }
    }

    @Test(
        "Sinch has nothing under the reference: 'retry shortly' while the dead call may still arrive, then a start anew under the same id"
    )
    func sinchNotFoundStartsAnew() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let number = "+46701234572"
            let body = #"{"to": "\#(number)", "provider": "sinch"}"#
            let id = VerificationService.newID()
            try await Self.killedAtTheVendor(runtime, key: "sinch-none", body: body, provider: "sinch", id: id)
            let early = try await Self.post(client, body, key: "sinch-none")
            #expect(early.status == .conflict)
            #expect(early.body.errorCode == "idempotency_conflict")
            #expect(early.body.error?["retryable"] as? Bool == true)
            #expect(Self.sent(runtime, to: number) == 0)
            // Past the provider's request timeout from the dead call: it can no longer reach Sinch.
            harness.clock.advance(by: 61)
            let retry = try await Self.post(client, body, key: "sinch-none")
            #expect(retry.status == .created)
            #expect(retry.body["id"] as? String == id)
            #expect(Self.sent(runtime, to: number) == 1)
            let replay = try await Self.post(client, body, key: "sinch-none")
            #expect(replay.headers[.idempotentReplayed] == "true")
            #expect(replay.body["id"] as? String == id)
            #expect(Self.sent(runtime, to: number) == 1)
        }
    }

    @Test("Twilio has a pending verification for the dead start's number: the retry answers it, 201 replayed")
    func twilioFoundByNumber() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let number = "+14155550147"
            let body = #"{"to": "\#(number)", "provider": "twilio"}"#
            let id = VerificationService.newID()
            try await Self.vendorGotTheStart(runtime, provider: "twilio", to: number, id: id)
            try await Self.killedAtTheVendor(runtime, key: "twilio-found", body: body, provider: "twilio", id: id)
            let retry = try await Self.post(client, body, key: "twilio-found")
            #expect(retry.status == .created)
            #expect(retry.headers[.idempotentReplayed] == "true")
            #expect(retry.body["id"] as? String == id)
            #expect(Self.sent(runtime, to: number) == 1)
            let code = try sandboxCode(runtime, to: number)
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.body["status"] as? String == "approved")
        }
    }

    @Test("Vonage has no lookup: a start killed at Vonage answers idempotency_outcome_unknown at once, sending nothing")
    func vonageCannotLookUp() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let number = "+14155550148"
            let body = #"{"to": "\#(number)", "provider": "vonage"}"#
            try await Self.killedAtTheVendor(
                runtime, key: "vonage-dead", body: body, provider: "vonage", id: VerificationService.newID())
            let retry = try await Self.post(client, body, key: "vonage-dead")
            #expect(retry.status == .conflict)
            #expect(retry.body.errorCode == "idempotency_outcome_unknown")
            #expect(Self.sent(runtime, to: number) == 0)
        }
    }

    @Test("a claim that died before any vendor call is in progress until its lease ends, then starts anew once")
    func diedBeforeTheVendor() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let body = #"{"to": "+14155550140"}"#
            try await Self.deadClaim(runtime, key: "crash-1", body: body)
            let early = try await client.call(
                .post, "/v1/verifications", json: body, headers: [.idempotencyKey: "crash-1"])
            #expect(early.status == .conflict)
            #expect(early.body.errorCode == "idempotency_conflict")
            harness.clock.advance(by: runtime.service.policy.idempotencyLease)
            let retry = try await client.call(
                .post, "/v1/verifications", json: body, headers: [.idempotencyKey: "crash-1"])
            #expect(retry.status == .created)
            let replay = try await client.call(
                .post, "/v1/verifications", json: body, headers: [.idempotencyKey: "crash-1"])
            #expect(replay.status == .created)
            #expect(replay.headers[.idempotentReplayed] == "true")
            #expect(replay.body["id"] as? String == retry.body["id"] as? String)
            #expect(Self.sent(runtime, to: "+14155550140") == 1)
        }
    }

    @Test(
        "a claim that died after calling the vendor and storing nothing answers idempotency_outcome_unknown, sending nothing"
    )
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

    @Test(
        "two retries of one lapsed key at once: one takes it over and starts, the other is told it is in progress or replayed"
    )
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
