import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayVonage

@Suite("Vonage v1 (legacy) provider against its emulator")
struct VonageV1ProviderTests {
    static func harness(_ extra: [String: String] = [:]) throws -> VonageHarness {
        var settings = ["api": "v1", "signature_secret": ""]
        for (key, value) in extra { settings[key] = value }
        return try VonageHarness(settings: settings)
    }

    @Test("a start posts key and secret in the form with the workflow id; wrong then right code approves")
    func startAndCheck() async throws {
        let harness = try Self.harness()
        let request = try VonageHarness.request(.sms, fallbacks: [.voice], locales: ["fr-FR"])
        let (verification, code) = try await harness.start(request)
        let form = FormEncoding.decode(
            String(decoding: try #require(harness.recorder.requests.first).body, as: UTF8.self))
        #expect(form["api_key"] == VonageSandbox.apiKey && form["api_secret"] == VonageSandbox.apiSecret)
        #expect(form["workflow_id"] == "5" && form["number"] == "14155550100" && form["lg"] == "fr-fr")
        #expect(harness.recorder.requests.first?.url.path() == "/sandbox/vonage/verify/json")
        #expect(try await harness.provider.check(verification, code: VonageHarness.wrong(code)).status == .pending)
        #expect(try await harness.provider.check(verification, code: try #require(code)).status == .approved)
        let change = try await harness.provider.status(verification)
        #expect(change.status == .approved)
    }

    @Test("three wrong codes: status 17 is max_attempts_reached, and search says FAILED")
    func status17() async throws {
        let harness = try Self.harness()
        let (verification, code) = try await harness.start(try VonageHarness.request())
        for _ in 1...2 { _ = try await harness.provider.check(verification, code: VonageHarness.wrong(code)) }
        let error = await expectGatewayError(.maxAttemptsReached) {
            try await harness.provider.check(verification, code: VonageHarness.wrong(code))
        }
        #expect(error?.vendor?.code == "17" && error?.vendor?.httpStatus == 200)
        #expect(try await harness.provider.status(verification).status == .failed)
    }

    @Test("trigger_next_event moves to the next event; search shows the channel; none left is status 19")
    func nextEvent() async throws {
        let harness = try Self.harness()
        let (verification, code) = try await harness.start(try VonageHarness.request(.sms, fallbacks: [.voice]))
        let result = try await harness.provider.resend(verification, request: ResendRequest())
        #expect(result.channel == .voice)
        #expect(harness.outbox.last(to: "+14155550100")?.channel == "voice")
        #expect(harness.outbox.last(to: "+14155550100")?.code == code)
        var moved = verification
        moved.channel = .voice
        moved.state = result.state
        let refreshed = try await harness.provider.status(moved)
        #expect(refreshed.channel == .voice && refreshed.status == .pending)
        await expectGatewayError(.invalidState) { try await harness.provider.resend(moved, request: ResendRequest()) }
    }

    @Test("workflow_id 2 repeats sms before voice; the position is kept in the state")
    func workflowTwo() async throws {
        let harness = try Self.harness(["workflow_id": "2"])
        let (verification, _) = try await harness.start(try VonageHarness.request(.sms))
        let first = try await harness.provider.resend(verification, request: ResendRequest())
        #expect(first.channel == .sms)
        var next = verification
        next.state = first.state
        let second = try await harness.provider.resend(next, request: ResendRequest())
        #expect(second.channel == .voice)
    }

    @Test("cancel within 30 s is status 19 (invalid_state); later it cancels; search says CANCELLED")
    func cancel() async throws {
        let harness = try Self.harness()
        let (verification, _) = try await harness.start(try VonageHarness.request())
        let early = await expectGatewayError(.invalidState) { try await harness.provider.cancel(verification) }
        #expect(early?.vendor?.code == "19")
        harness.clock.advance(by: 31)
        try await harness.provider.cancel(verification)
        #expect(try await harness.provider.status(verification).status == .canceled)
        await expectGatewayError(.notFound) { try await harness.provider.cancel(verification) }
    }

    @Test("a concurrent start is status 10; bad credentials status 4; an unknown request on search 101")
    func errors() async throws {
        let harness = try Self.harness()
        let (verification, _) = try await harness.start(try VonageHarness.request())
        await expectGatewayError(.concurrentVerification) {
            try await harness.provider.start(try VonageHarness.request())
        }
        let intruder = try Self.harness(["api_secret": "wrong-secret-000"])
        await expectGatewayError(.providerAuthFailed) { try await intruder.provider.start(try VonageHarness.request()) }
        var unknown = verification
        unknown.reference = "0123456789abcdef0123456789abcdef"
        await expectGatewayError(.notFound) { try await harness.provider.status(unknown) }
        await expectGatewayError(.notFound) { try await harness.provider.check(unknown, code: "1234") }
    }

    @Test("v1 offers sms and voice only, with Vonage's 3 attempts; other channel shapes are refused")
    func channels() async throws {
        let harness = try Self.harness()
        #expect(harness.provider.capabilities.channels == [.sms, .voice])
        #expect(harness.provider.capabilities.vendorMaxAttempts == 3)
        await expectGatewayError(.unsupportedChannel) {
            try await harness.provider.start(try VonageHarness.request(.voice, fallbacks: [.sms]))
        }
    }

    @Test("v1 answers in HTTP 200 with a status string, for every emulated error")
    func inBand() async throws {
        let emulator = VonageEmulator(
            context: EmulatorContext(clock: SystemClock(), logger: .quiet), settings: .init(autoAdvance: false))
        let cases: [(String, String)] = [
            ("/verify/json", "api_key=\(VonageSandbox.apiKey)&api_secret=\(VonageSandbox.apiSecret)&brand=B"),
            ("/verify/json", "api_key=\(VonageSandbox.apiKey)&api_secret=x&number=447700900123&brand=B"),
            (
                "/verify/check/json",
                "api_key=\(VonageSandbox.apiKey)&api_secret=\(VonageSandbox.apiSecret)&request_id=x&code=1234"
            ),
            (
                "/verify/control/json",
                "api_key=\(VonageSandbox.apiKey)&api_secret=\(VonageSandbox.apiSecret)&request_id=x&cmd=stop"
            ),
        ]
        for (path, body) in cases {
            let outcome = await emulator.handle(
                EmulatorRequest(method: .post, path: path, query: nil, headerFields: [:], body: Data(body.utf8)))
            guard case .response(let response) = outcome else { throw VonageTestFailure.reset }
            #expect(response.status == .ok)
            let answer = try JSONDecoder().decode(VonageWire.V1Response.self, from: response.body)
            #expect(answer.code != 0 && answer.errorText != nil)
        }
    }

    @Test(
        "v1 takes Basic auth instead of body credentials, and a form body labelled JSON, as vonage-verify-legacy 1.1 sends"
    )
    func pythonClientShape() async throws {
        let emulator = VonageEmulator(
            context: EmulatorContext(clock: SystemClock(), logger: .quiet), settings: .init(autoAdvance: false))
        var headers = HTTPFields()
        headers[.authorization] =
            "Basic " + Data("\(VonageSandbox.apiKey):\(VonageSandbox.apiSecret)".utf8).base64EncodedString()
        headers[.contentType] = "application/json"
        let outcome = await emulator.handle(
            EmulatorRequest(
                method: .post, path: "/verify/json", query: nil, headerFields: headers,
                body: Data("number=14155550100&brand=Gateway".utf8)))
        guard case .response(let response) = outcome else { throw VonageTestFailure.reset }
        let answer = try JSONDecoder().decode(VonageWire.V1Response.self, from: response.body)
        #expect(answer.status == "0" && answer.requestID != nil)
        headers[.authorization] = "Basic " + Data("\(VonageSandbox.apiKey):wrong".utf8).base64EncodedString()
        let refused = await emulator.handle(
            EmulatorRequest(
                method: .post, path: "/verify/json", query: nil, headerFields: headers,
                body: Data("number=14155550101&brand=Gateway".utf8)))
        guard case .response(let denied) = refused else { throw VonageTestFailure.reset }
        #expect(try JSONDecoder().decode(VonageWire.V1Response.self, from: denied.body).status == "4")
    }
}

@Suite("Vonage emulator state")
struct VonageEmulatorStateTests {
    @Test("a restarted emulator keeps its live requests, their step timing and the one-per-number rule")
    func persistence() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let clock = ManualClock()
        let outbox = SandboxOutbox()
        let settings = VonageEmulator.Settings(channelTimeout: 60, autoAdvance: false)
        let first = VonageEmulator(
            context: EmulatorContext(clock: clock, outbox: outbox, logger: .quiet, persistence: persistence),
            settings: settings)
        let transport = InProcessTransport(emulator: first)
        let provider = try VonageProvider(
            context: ProviderContext(
                providerID: "vonage",
                settings: VonagePlugin.plugin.sandboxSettings(try #require(URL(string: "http://localhost"))),
                transport: transport, clock: clock, logger: .quiet))
        let request = try VonageHarness.request(.sms, fallbacks: [.voice])
        _ = try await provider.start(request)
        // The request and the count of live ones: two rows, nothing saved as entities.
        #expect(persistence.memoryTable(VonageEmulatorState.table).writeCount == 2)
        #expect(persistence.writeCount == 0)
        let second = VonageEmulator(
            context: EmulatorContext(clock: clock, outbox: outbox, logger: .quiet, persistence: persistence),
            settings: settings)
        let again = try VonageProvider(
            context: ProviderContext(
                providerID: "vonage",
                settings: VonagePlugin.plugin.sandboxSettings(try #require(URL(string: "http://localhost"))),
                transport: InProcessTransport(emulator: second), clock: clock, logger: .quiet))
        await expectGatewayError(.concurrentVerification) { try await again.start(request) }
        clock.advance(by: 61)
        await second.tick()
        #expect(outbox.last(to: "+14155550100")?.channel == "voice")
    }

    @Test("requests an earlier version saved as entities become rows once, live ones counted for the ticker")
    func movesEarlierEntities() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let clock = ManualClock()
        let live = VonageEmulatorState.Request(
            id: "0123456789abcdef0123456789abcdef", api: "v1", number: "14155550100", brand: "Gateway",
            steps: [.init(channel: "sms", to: "14155550100", status: "pending", initiatedAt: clock.now)], position: 0,
            code: "1234", codeLength: 4, locale: nil, channelTimeout: 300, createdAt: clock.now,
            stepStartedAt: clock.now, wrongChecks: 0, status: "in_progress", finalizedAt: nil, checks: [])
        var old = live
        old.id = "fedcba9876543210fedcba9876543210"
        old.status = "completed"
        old.finalizedAt = clock.now.addingTimeInterval(-2 * VonageEmulatorState.retention)
        persistence.save([live.id: try JSONEncoder().encode(live), old.id: try JSONEncoder().encode(old)])
        let oldID = old.id
        let emulator = VonageEmulator(
            context: EmulatorContext(clock: clock, logger: .quiet, persistence: persistence),
            settings: VonageEmulator.Settings(autoAdvance: false))
        #expect(persistence.load().isEmpty)
        let found = try await persistence.table(VonageEmulatorState.table).transaction { rows in
            let state = VonageEmulatorState(rows: rows, now: clock.now)
            return (try state.live(number: "14155550100"), try state.request(oldID), try state.hasLive)
        }
        #expect(found.0 == live)
        #expect(found.1 == nil, "finished two days ago: not moved")
        #expect(found.2)
        _ = emulator
    }

    @Test("racing v1 starts to one number: one request, the others are status 10 with its id")
    func racingStarts() async throws {
        let emulator = VonageEmulator(
            context: EmulatorContext(clock: SystemClock(), logger: .quiet, persistence: InMemoryEmulatorPersistence()),
            settings: VonageEmulator.Settings(autoAdvance: false))
        let body =
            "api_key=\(VonageSandbox.apiKey)&api_secret=\(VonageSandbox.apiSecret)&number=14155550100&brand=Gateway"
        let answers = await withTaskGroup(of: VonageWire.V1Response?.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    var headers = HTTPFields()
                    headers[.contentType] = "application/x-www-form-urlencoded"
                    let request = EmulatorRequest(
                        method: .post, path: "/verify/json", query: nil, headerFields: headers, body: Data(body.utf8))
                    guard case .response(let response) = await emulator.handle(request) else { return nil }
                    return try? JSONDecoder().decode(VonageWire.V1Response.self, from: response.body)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let started = answers.compactMap { $0 }.filter { $0.status == "0" }
        #expect(started.count == 1)
        let id = try #require(started.first?.requestID)
        let refused = answers.compactMap { $0 }.filter { $0.status == "10" }
        #expect(refused.count == 5)
        #expect(refused.allSatisfy { $0.requestID == id })
    }
}
