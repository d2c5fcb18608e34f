import Foundation
import GatewayCore
import GatewayTestSupport
import HummingbirdTesting
import Testing

@testable import gateway

/// Issue 34: creates for one `To` and channel at the same instant (a double-tapped submit, two app servers
/// retrying) start one verification and send once, on one instance and on two sharing a SQLite file or a
/// PostgreSQL schema; the claim that makes it so is released by a failed start, ends with the verification,
/// and lapses when its holder died.
@Suite("The Twilio-compatible front door: creates at the same instant")
struct TwilioCompatCreateRaceTests {
    static let service = TwilioCompatTests.sinchService
    static let verifications = TwilioCompatTests.path(service, "/Verifications")
    /// The front door's configuration, with breakers that never open: a failed start here must not close Sinch
    /// to the next one.
    static let config =
        TwilioCompatTests.config + "\nbreakers: {consecutive_failures: 1000, failure_rate: 1, min_requests: 100000}\n"
    static let environment = [
        "FRONT_KEY": TwilioCompatTests.secret, "OTHER_KEY": TwilioCompatTests.otherSecret,
        "READ_KEY": TwilioCompatTests.readSecret,
    ]

    /// The `backend` key's id, as the keyring derives it from its secret.
    static let backendKeyID = "key_" + APIKeyring.hash(TwilioCompatTests.secret).prefix(12)

    struct Answer: Sendable, CustomStringConvertible {
        var status: Int
        var sid: String?
        var attempts: Int
        var body: String
        var description: String { "\(status) \(sid ?? "-") attempts=\(attempts) \(body.prefix(160))" }
    }

    /// `count` creates of `to` by SMS at once, spread over `clients` (one per instance).
    static func createAtOnce(_ clients: [any TestClientProtocol], count: Int, to: String) async throws -> [Answer] {
        let body = FormEncoding.encode([("To", to), ("Channel", "sms")])
        return try await withThrowingTaskGroup(of: Answer.self) { group in
            for index in 0..<count {
                let client = clients[index % clients.count]
                group.addTask { try await create(client, body: body) }
            }
            var answers: [Answer] = []
            for try await answer in group { answers.append(answer) }
            return answers
        }
    }

    static func create(
        _ client: any TestClientProtocol, body: String, authorization: String = TwilioCompatTests.basic()
    ) async throws -> Answer {
        let answer = try await client.twilio(.post, verifications, form: body, authorization: authorization)
        return Answer(
            status: Int(answer.status.code), sid: answer.body["sid"] as? String,
            attempts: (answer.body["send_code_attempts"] as? [Any])?.count ?? 0, body: "\(answer.body)")
    }

    static func create(_ client: any TestClientProtocol, to: String) async throws -> Answer {
        try await create(client, body: FormEncoding.encode([("To", to), ("Channel", "sms")]))
    }

    /// What the sandbox's vendors sent to `to`, over every instance.
    static func sent(_ runtimes: [GatewayRuntime], to: String) -> Int {
        runtimes.map { $0.sandbox?.outbox.all.filter { $0.to == to }.count ?? 0 }.reduce(0, +)
    }

    /// The store's pending verifications to `to`.
    static func pending(_ runtime: GatewayRuntime, to: String) async throws -> [VerificationRecord] {
        try await runtime.service.store.openVerifications(destination: to, at: runtime.service.clock.now, limit: 50)
    }

    /// Slows each instance's Sinch emulator by 1 s a request: every create of a burst then arrives while the
    /// first one holds the claim (a create that came after it answered would be a repeat, and resend). On a
    /// machine as busy as CI's, 300 ms was once not enough for a burst through the real server.
    static func slowSinch(_ clients: [any TestClientProtocol]) async throws {
        for client in clients {
            let slowed = try await client.call(.put, "/sandbox/faults/sinch", json: #"{"latency_ms": 1000}"#, key: nil)
            #expect(slowed.status == .ok)
        }
    }

    /// `count` creates at once over `clients`: one verification, one send, every answer `201` with its `sid`
    /// and one send attempt. Then a repeat resends it (as Twilio), and repeats at once resend it once more.
    static func expectOneStart(
        _ clients: [any TestClientProtocol], _ runtimes: [GatewayRuntime], count: Int, to: String
    ) async throws {
        try await slowSinch(clients)
        let answers = try await createAtOnce(clients, count: count, to: to)
        #expect(answers.allSatisfy { $0.status == 201 }, "\(answers)")
        let sids = Set(answers.compactMap(\.sid))
        #expect(sids.count == 1, "one verification for \(count) creates at once: \(answers)")
        #expect(answers.allSatisfy { $0.attempts == 1 }, "\(answers)")
        #expect(sent(runtimes, to: to) == 1, "the vendor was asked to send once")
        let stored = try await pending(runtimes[0], to: to)
        #expect(
            stored.count == 1 && stored.first.map { TwilioCompatController.sid(verificationID: $0.id) } == sids.first)
        #expect(stored.first?.sends == 1)

        let repeated = try await create(clients[0], to: to)
        #expect(repeated.status == 201 && repeated.sid == sids.first && repeated.attempts == 2, "\(repeated)")
        #expect(sent(runtimes, to: to) == 2, "a repeat after the create resends, as Twilio does")
        let repeats = try await createAtOnce(clients, count: count, to: to)
        #expect(repeats.allSatisfy { $0.status == 201 && $0.sid == sids.first && $0.attempts == 3 }, "\(repeats)")
        #expect(sent(runtimes, to: to) == 3, "repeats at the same instant resend once")
        #expect(try await pending(runtimes[0], to: to).count == 1)
    }

    func withGateway(
        _ harness: GatewayHarness = GatewayHarness(),
        _ body: @Sendable (any TestClientProtocol, GatewayRuntime) async throws -> Void
    ) async throws {
        let (app, runtime) = try await buildApplication(
            try harness.options(config: Self.config, environment: Self.environment))
        try await app.test(.router) { client in try await body(client, runtime) }
    }

    @Test("8 creates at once through the router: one verification, one send, the same sid in every answer")
    func oneInstance() async throws {
        try await withGateway { client, runtime in
            try await Self.expectOneStart([client], [runtime], count: 8, to: "+46701234101")
        }
    }

    /// Two gateways on one store, each with its own router and sandbox: creates split between them.
    static func twoInstances(_ first: GatewayOptions, _ second: GatewayOptions, to: String) async throws {
        let (appA, runtimeA) = try await buildApplication(first)
        let (appB, runtimeB) = try await buildApplication(second)
        try await appA.test(.router) { a in
            try await appB.test(.router) { b in
                try await expectOneStart([a, b], [runtimeA, runtimeB], count: 8, to: to)
            }
        }
    }

    @Test("two instances on one SQLite file: 8 creates at once between them start one verification, send once")
    func twoInstancesOnSQLite() async throws {
        let first = GatewayHarness()
        let second = GatewayHarness(clock: first.clock, dataDirectory: first.dataDirectory)
        try await Self.twoInstances(
            try first.options(config: Self.config, environment: Self.environment),
            try second.options(config: Self.config, environment: Self.environment), to: "+46701234102")
    }

    @Test(
        "two instances on one PostgreSQL schema: 8 creates at once between them start one verification, send once",
        .enabled(if: PostgresTestServer.isAvailable))
    func twoInstancesOnPostgres() async throws {
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        async let a = PostgresStoreTests.store(schema: schema)
        async let b = PostgresStoreTests.store(schema: schema)
        let stores = try await [a, b]
        defer { for store in stores { store.close() } }
        // One data directory as well: the sandbox's emulators keep their vendors' state there, and a resend
        // through one instance goes to the vendor that the other's start reached.
        let first = GatewayHarness()
        var options: [GatewayOptions] = []
        for store in stores {
            var each = try GatewayHarness(clock: first.clock, dataDirectory: first.dataDirectory).options(
                config: Self.config, environment: Self.environment)
            each.store = store
            options.append(each)
        }
        try await Self.twoInstances(options[0], options[1], to: "+46701234103")
    }

    @Test("a start that fails releases the claim: creates at once all fail, none sends, and the next one starts")
    func failedStartReleases() async throws {
        try await withGateway { client, runtime in
            let to = "+46701234104"
            let faults = try await client.call(
                .put, "/sandbox/faults/sinch", json: #"{"error_rate": 1, "error_status": 503}"#, key: nil)
            #expect(faults.status == .ok)
            let failed = try await Self.createAtOnce([client], count: 4, to: to)
            #expect(failed.allSatisfy { $0.status == 503 && $0.sid == nil }, "\(failed)")
            #expect(Self.sent([runtime], to: to) == 0)
            // Nothing holds the claim: a claimant with its own token gets it at once (and gives it back).
            let key = TwilioCompatController.createClaimKey(
                serviceSID: Self.service, channel: .sms, destination: to, apiKeyID: Self.backendKeyID)
            let store = runtime.service.store
            #expect(
                try await store.claimIdempotencyKey(
                    key, fingerprint: TwilioCompatController.createClaimFingerprint, token: "probe",
                    at: runtime.service.clock.now, lease: 30) == .claimed)
            try await store.releaseIdempotencyKey(key, token: "probe")

            // The errors cleared (and the vendor slowed, so the 4 creates below arrive while the first holds).
            try await Self.slowSinch([client])
            let answers = try await Self.createAtOnce([client], count: 4, to: to)
            #expect(answers.allSatisfy { $0.status == 201 && $0.attempts == 1 }, "\(answers)")
            #expect(Set(answers.compactMap(\.sid)).count == 1 && Self.sent([runtime], to: to) == 1)
        }
    }

    @Test("after an approval or a cancel, creates start a new verification (one, for creates at once)")
    func newVerificationAfterTheLast() async throws {
        try await withGateway { client, runtime in
            let to = "+46701234105"
            try await Self.slowSinch([client])
            let first = try await Self.create(client, to: to)
            let firstSID = try #require(first.sid)
            let code = try sandboxCode(runtime, to: to)
            let check = try await client.twilio(
                .post, TwilioCompatTests.path(Self.service, "/VerificationCheck"),
                form: FormEncoding.encode([("VerificationSid", firstSID), ("Code", code)]))
            #expect(check.body["status"] as? String == "approved")

            let afterApproval = try await Self.createAtOnce([client], count: 4, to: to)
            let secondSID = try #require(afterApproval.first?.sid)
            #expect(secondSID != firstSID)
            #expect(afterApproval.allSatisfy { $0.status == 201 && $0.sid == secondSID && $0.attempts == 1 })
            #expect(Self.sent([runtime], to: to) == 2)

            let canceled = try await client.twilio(
                .post, TwilioCompatTests.path(Self.service, "/Verifications/\(secondSID)"),
                form: FormEncoding.encode([("Status", "canceled")]))
            #expect(canceled.body["status"] as? String == "canceled")
            let afterCancel = try await Self.create(client, to: to)
            #expect(afterCancel.status == 201 && afterCancel.attempts == 1, "\(afterCancel)")
            #expect(afterCancel.sid != nil && afterCancel.sid != firstSID && afterCancel.sid != secondSID)
            #expect(Self.sent([runtime], to: to) == 3)
            #expect(try await Self.pending(runtime, to: to).count == 1)
        }
    }

    @Test("creates at once by two API keys: each key's creates share one verification, the keys do not")
    func twoKeys() async throws {
        try await withGateway { client, runtime in
            try await Self.slowSinch([client])
            let to = "+46701234109"
            let body = FormEncoding.encode([("To", to), ("Channel", "sms")])
            let other = TwilioCompatTests.basic(TwilioCompatTests.account, TwilioCompatTests.otherSecret)
            let answers = try await withThrowingTaskGroup(of: (String, Answer).self) { group in
                for index in 0..<8 {
                    let (name, authorization) =
                        index % 2 == 0 ? ("backend", TwilioCompatTests.basic()) : ("other", other)
                    group.addTask { (name, try await Self.create(client, body: body, authorization: authorization)) }
                }
                var all: [(String, Answer)] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(answers.allSatisfy { $0.1.status == 201 && $0.1.attempts == 1 }, "\(answers)")
            let backend = Set(answers.compactMap { $0.0 == "backend" ? $0.1.sid : nil })
            let theirs = Set(answers.compactMap { $0.0 == "other" ? $0.1.sid : nil })
            #expect(backend.count == 1 && theirs.count == 1 && backend != theirs, "\(answers)")
            #expect(Self.sent([runtime], to: to) == 2, "one send per key")
        }
    }

    @Test("a claim whose create died: taken over once its lease lapsed, or at once when its instance is dead")
    func deadHolder() async throws {
        let harness = GatewayHarness()
        try await withGateway(harness) { client, runtime in
            let store = runtime.service.store
            let lease = runtime.service.policy.idempotencyLease
            func deadClaim(_ to: String, at: Date, owner: String? = nil) async throws {
                let key = TwilioCompatController.createClaimKey(
                    serviceSID: Self.service, channel: .sms, destination: to, apiKeyID: Self.backendKeyID)
                #expect(
                    try await store.claimIdempotencyKey(
                        key, fingerprint: TwilioCompatController.createClaimFingerprint, token: "dead", owner: owner,
                        at: at, lease: lease, deadOwner: nil) == .claimed)
            }
            // Its lease already over.
            let lapsed = "+46701234106"
            try await deadClaim(lapsed, at: runtime.service.clock.now.addingTimeInterval(-lease - 1))
            let afterLapse = try await Self.create(client, to: lapsed)
            #expect(afterLapse.status == 201 && afterLapse.attempts == 1, "\(afterLapse)")
            #expect(Self.sent([runtime], to: lapsed) == 1)

            // Held by an instance that was killed: taken over at once.
            try await IdempotencyRecoveryTests.registerKilledInstance(runtime)
            let killed = "+46701234107"
            try await deadClaim(killed, at: runtime.service.clock.now, owner: IdempotencyRecoveryTests.killed)
            let afterKill = try await Self.create(client, to: killed)
            #expect(afterKill.status == 201 && afterKill.attempts == 1, "\(afterKill)")
            #expect(Self.sent([runtime], to: killed) == 1)

            // Held with a live lease and no instance named: the create waits, and starts once the lease ends.
            let held = "+46701234108"
            try await deadClaim(held, at: runtime.service.clock.now)
            let waiting = Task { try await Self.create(client, to: held) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(Self.sent([runtime], to: held) == 0, "nothing is sent while the claim is held")
            harness.clock.advance(by: lease + 1)
            let afterWait = try await waiting.value
            #expect(afterWait.status == 201 && afterWait.attempts == 1, "\(afterWait)")
            #expect(Self.sent([runtime], to: held) == 1)
        }
    }

    @Test(
        "a create killed during its vendor call: the next create answers the vendor's verification without a send; one the vendor never got is 60212 until the dead call cannot arrive, then starts anew once"
    )
    func killedAtTheVendor() async throws {
        let harness = GatewayHarness()
        try await withGateway(harness) { client, runtime in
            try await IdempotencyRecoveryTests.registerKilledInstance(runtime)
            let store = runtime.service.store
            let lease = runtime.service.policy.idempotencyLease
            /// The claim a create killed during its call to Sinch left, under the gateway id it sent as reference.
            func killed(_ to: String, id: String) async throws {
                let key = TwilioCompatController.createClaimKey(
                    serviceSID: Self.service, channel: .sms, destination: to, apiKeyID: Self.backendKeyID)
                let now = runtime.service.clock.now
                #expect(
                    try await store.claimIdempotencyKey(
                        key, fingerprint: TwilioCompatController.createClaimFingerprint, token: "dead",
                        owner: IdempotencyRecoveryTests.killed, at: now, lease: lease, deadOwner: nil) == .claimed)
                #expect(
                    try await store.recordIdempotencyProgress(
                        key, token: "dead",
                        progress: IdempotencyProgress(
                            stage: .vendorCallBegun, verificationID: id, providerID: "sinch", callBegunAt: now),
                        until: now.addingTimeInterval(lease)))
            }
            // Sinch got the dead create's start: the next create answers that verification, and sends nothing.
            let reached = "+46701234109"
            let id = VerificationService.newID()
            try await IdempotencyRecoveryTests.vendorGotTheStart(runtime, provider: "sinch", to: reached, id: id)
            try await killed(reached, id: id)
            let recovered = try await Self.create(client, to: reached)
            #expect(recovered.status == 201, "\(recovered)")
            #expect(Self.sent([runtime], to: reached) == 1, "the dead create's code only")
            #expect(try await Self.pending(runtime, to: reached).map(\.id) == [id])
            let events = try await store.events(verificationID: id)
            #expect(events.first?.detail["recovered"] == "vendor_lookup")

            // Sinch never got it: refused while the dead call may still arrive, then started anew, once.
            let missed = "+46701234110"
            try await killed(missed, id: VerificationService.newID())
            let early = try await Self.create(client, to: missed)
            #expect(early.status == 429 && early.body.contains("60212"), "\(early)")
            #expect(Self.sent([runtime], to: missed) == 0)
            harness.clock.advance(by: 61)
            let anew = try await Self.create(client, to: missed)
            #expect(anew.status == 201 && anew.attempts == 1, "\(anew)")
            #expect(Self.sent([runtime], to: missed) == 1)
        }
    }

    @Test(
        "a create killed at Vonage, which cannot be asked: 60212 within the dead call's lease, then a create sends"
    )
    func killedAtVonage() async throws {
        let harness = GatewayHarness()
        try await withGateway(harness) { client, runtime in
            try await IdempotencyRecoveryTests.registerKilledInstance(runtime)
            let store = runtime.service.store
            let lease = runtime.service.policy.idempotencyLease
            let to = "+447400123456"
            let key = TwilioCompatController.createClaimKey(
                serviceSID: TwilioCompatTests.vonageService, channel: .sms, destination: to, apiKeyID: Self.backendKeyID
            )
            let now = runtime.service.clock.now
            #expect(
                try await store.claimIdempotencyKey(
                    key, fingerprint: TwilioCompatController.createClaimFingerprint, token: "dead",
                    owner: IdempotencyRecoveryTests.killed, at: now, lease: lease, deadOwner: nil) == .claimed)
            #expect(
                try await store.recordIdempotencyProgress(
                    key, token: "dead",
                    progress: IdempotencyProgress(
                        stage: .vendorCallBegun, verificationID: VerificationService.newID(), providerID: "vonage",
                        callBegunAt: now),
                    until: now.addingTimeInterval(lease)))
            let path = TwilioCompatTests.path(TwilioCompatTests.vonageService, "/Verifications")
            let body = FormEncoding.encode([("To", to), ("Channel", "sms")])
            let early = try await client.twilio(.post, path, form: body, authorization: TwilioCompatTests.basic())
            #expect(early.status.code == 429 && early.body["code"] as? Int == 60212, "\(early.body)")
            #expect(Self.sent([runtime], to: to) == 0)
            harness.clock.advance(by: lease + 1)
            let later = try await client.twilio(.post, path, form: body, authorization: TwilioCompatTests.basic())
            #expect(later.status.code == 201, "\(later.body)")
            #expect(Self.sent([runtime], to: to) == 1)
        }
    }
}
