import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayVonage

@Suite("Vonage v2 provider against its emulator")
struct VonageV2ProviderTests {
    @Test("a start sends the workflow with brand, code length and locale; a wrong then the right code approves")
    func startAndCheck() async throws {
        let harness = try VonageHarness(settings: ["code_length": "6"])
        let request = try VonageHarness.request(.sms, fallbacks: [.voice], locales: ["de-DE"])
        let result = try await harness.provider.start(request)
        #expect(result.channel == .sms && result.reference != nil && result.nextAction == nil)
        let sent = try #require(harness.recorder.requests.first)
        let body = try JSONDecoder().decode(VonageWire.StartRequest.self, from: sent.body)
        #expect(body.brand == VonageSandbox.brand && body.codeLength == 6 && body.locale == "de-de")
        #expect(body.workflow.map(\.channel) == ["sms", "voice"] && body.workflow[0].to == "14155550100")
        #expect(sent.headerFields[.authorization]?.hasPrefix("Basic ") == true)
        let message = try #require(harness.outbox.last(to: "+14155550100"))
        #expect(message.channel == "sms" && message.code?.count == 6)
        let verification = VonageHarness.stored(request, result)
        let wrong = try await harness.provider.check(verification, code: VonageHarness.wrong(message.code))
        #expect(wrong.status == .pending)
        let right = try await harness.provider.check(verification, code: try #require(message.code))
        #expect(right.status == .approved)
        await expectGatewayError(.notFound) { try await harness.provider.check(verification, code: "123456") }
    }

    @Test("three wrong codes end the workflow: 410 is max_attempts_reached")
    func threeWrongCodes() async throws {
        let harness = try VonageHarness()
        let (verification, code) = try await harness.start(try VonageHarness.request())
        for _ in 1...2 {
            #expect(try await harness.provider.check(verification, code: VonageHarness.wrong(code)).status == .pending)
        }
        let error = await expectGatewayError(.maxAttemptsReached) {
            try await harness.provider.check(verification, code: VonageHarness.wrong(code))
        }
        #expect(error?.vendor?.httpStatus == 410)
        #expect(harness.provider.capabilities.vendorMaxAttempts == 3)
    }

    @Test("a second start to the same number is 409 concurrent_verification")
    func concurrent() async throws {
        let harness = try VonageHarness()
        _ = try await harness.start(try VonageHarness.request())
        await expectGatewayError(.concurrentVerification) {
            try await harness.provider.start(try VonageHarness.request(.voice))
        }
    }

    @Test("the gateway's resend is next_workflow: the verification shows the new channel with a new code")
    func nextWorkflow() async throws {
        let harness = try VonageHarness()
        let request = try VonageHarness.request(.sms, fallbacks: [.voice])
        let (verification, smsCode) = try await harness.start(request)
        let result = try await harness.provider.resend(verification, request: ResendRequest())
        #expect(result.channel == .voice)
        let voice = try #require(harness.outbox.last(to: "+14155550100"))
        #expect(voice.channel == "voice" && voice.kind == .voice)
        var moved = verification
        moved.channel = .voice
        await expectGatewayError(.invalidState) { try await harness.provider.resend(moved, request: ResendRequest()) }
        _ = smsCode
        #expect(try await harness.provider.check(moved, code: try #require(voice.code)).status == .approved)
    }

    @Test("a resend naming a channel other than Vonage's next is refused before any call")
    func resendOtherChannel() async throws {
        let harness = try VonageHarness()
        let (verification, _) = try await harness.start(try VonageHarness.request(.sms, fallbacks: [.voice]))
        let calls = harness.recorder.requests.count
        await expectGatewayError(.unsupportedChannel) {
            try await harness.provider.resend(verification, request: ResendRequest(channel: .email))
        }
        #expect(harness.recorder.requests.count == calls)
    }

    @Test("cancel is refused within 30 s (invalid_state), then works (DELETE, 204)")
    func cancel() async throws {
        let harness = try VonageHarness()
        let (verification, _) = try await harness.start(try VonageHarness.request())
        await expectGatewayError(.invalidState) { try await harness.provider.cancel(verification) }
        harness.clock.advance(by: 31)
        try await harness.provider.cancel(verification)
        #expect(harness.recorder.requests.last?.method == .delete)
        await expectGatewayError(.notFound) { try await harness.provider.cancel(verification) }
    }

    @Test("the workflow moves to voice after the channel timeout by itself; the signed callback says so")
    func timeoutCallback() async throws {
        let harness = try VonageHarness()
        let request = try VonageHarness.request(.sms, fallbacks: [.voice])
        let (verification, _) = try await harness.start(request)
        harness.clock.advance(by: 61)
        await harness.emulator.tick()
        let voice = try #require(harness.outbox.last(to: "+14155550100"))
        #expect(voice.channel == "voice")
        let callback = try #require(harness.callbacks.vendorCallbacks.first)
        let lookup = VerificationLookup { _ in verification }
        let reply = try await harness.provider.handleCallback(callback, lookup: lookup)
        #expect(reply.updates.first?.change.channel == .voice)
        #expect(reply.updates.first?.target == .reference(try #require(verification.reference)))
        // The last step runs out too: the summary expires the verification.
        harness.clock.advance(by: 61)
        await harness.emulator.tick()
        let summary = try #require(harness.callbacks.vendorCallbacks.last)
        var voiceVerification = verification
        voiceVerification.channel = .voice
        let onVoice = voiceVerification
        let last = try await harness.provider.handleCallback(summary, lookup: VerificationLookup { _ in onVoice })
        #expect(last.updates.last?.change.status == .expired)
    }

    @Test("a callback with a bad signature, a changed body or no token is unauthorized and changes nothing")
    func badSignatures() async throws {
        let harness = try VonageHarness()
        let (verification, _) = try await harness.start(try VonageHarness.request(.sms, fallbacks: [.voice]))
        harness.clock.advance(by: 61)
        await harness.emulator.tick()
        let good = try #require(harness.callbacks.vendorCallbacks.first)
        let lookup = VerificationLookup { _ in verification }
        var tampered = good
        tampered.body = Data(
            String(decoding: good.body, as: UTF8.self).replacingOccurrences(of: "expired", with: "completed").utf8)
        await expectGatewayError(.unauthorized) { try await harness.provider.handleCallback(tampered, lookup: lookup) }
        var unsigned = good
        unsigned.headerFields[.authorization] = nil
        await expectGatewayError(.unauthorized) { try await harness.provider.handleCallback(unsigned, lookup: lookup) }
        var otherKey = good
        otherKey.headerFields[.authorization] = try VonageJWT.signCallback(
            body: good.body, secret: "not-the-secret", apiKey: nil, applicationID: nil, now: harness.clock.now)
        await expectGatewayError(.unauthorized) { try await harness.provider.handleCallback(otherKey, lookup: lookup) }
        harness.clock.advance(by: 3600)
        await expectGatewayError(.unauthorized) { try await harness.provider.handleCallback(good, lookup: lookup) }
    }

    @Test("silent auth: check_url is an open_url over cellular; its redirects end in a code the check approves")
    func silentAuth() async throws {
        let harness = try VonageHarness()
        let request = try VonageHarness.request(.silentAuth, fallbacks: [.sms])
        let result = try await harness.provider.start(request)
        guard case .openURL(let opening)? = result.nextAction else {
            Issue.record("no open_url next action")
            return
        }
        #expect(opening.cellularOnly)
        #expect(harness.provider.capabilities.completesWithoutCode.isEmpty)
        let verification = VonageHarness.stored(request, result)
        // Before the device followed check_url there is no code: Vonage's 409 no-code.
        await expectGatewayError(.invalidState) { try await harness.provider.check(verification, code: "1234") }
        let code = try await Self.followCheckURL(opening.url, harness: harness)
        #expect(harness.callbacks.requests.isEmpty)
        #expect(try await harness.provider.check(verification, code: code).status == .approved)
        let sent = try #require(harness.recorder.requests.last)
        let reference = try #require(result.reference)
        #expect(sent.method == .post && sent.url.path().hasSuffix("/v2/verify/" + reference))
        // The status callbacks still come, after the answer, and say the same.
        await harness.emulator.deliverPending()
        var approved = false
        for callback in harness.callbacks.vendorCallbacks {
            let reply = try await harness.provider.handleCallback(
                callback, lookup: VerificationLookup { _ in verification })
            if reply.updates.contains(where: { $0.change.status == .approved }) { approved = true }
        }
        #expect(approved)
    }

    @Test("silent auth allows one check: a wrong code is max_attempts_reached")
    func silentAuthOneAttempt() async throws {
        let harness = try VonageHarness()
        let request = try VonageHarness.request(.silentAuth)
        let result = try await harness.provider.start(request)
        guard case .openURL(let opening)? = result.nextAction else {
            Issue.record("no open_url next action")
            return
        }
        let code = try await Self.followCheckURL(opening.url, harness: harness)
        let verification = VonageHarness.stored(request, result)
        let wrong = code == "abcd12" ? "abcd13" : "abcd12"
        let error = await expectGatewayError(.maxAttemptsReached) {
            try await harness.provider.check(verification, code: wrong)
        }
        #expect(error?.vendor?.httpStatus == 410)
    }

    /// Plays the device: GET `check_url` and its redirects on the emulator, then reads `code` from the answer.
    static func followCheckURL(_ url: String, harness: VonageHarness) async throws -> String {
        var next = try #require(URL(string: url))
        for _ in 0..<5 {
            let path = next.path(percentEncoded: true)
            #expect(path.hasPrefix(VonageHarness.mount))
            let opened = await harness.emulator.handle(
                EmulatorRequest(
                    method: .get, path: String(path.dropFirst(VonageHarness.mount.count)), query: nil,
                    headerFields: [:],
                    body: Data()))
            guard case .response(let response) = opened else { throw VonageTestFailure.reset }
            if response.status == .found {
                next = try #require(response.headerFields[.location].flatMap(URL.init(string:)))
                continue
            }
            #expect(response.status == .ok)
            let answer = try JSONDecoder().decode([String: String].self, from: response.body)
            return try #require(answer["code"])
        }
        throw VonageTestFailure.reset
    }

    @Test("silent auth only first, at most 3 channels; WhatsApp from whatsapp_from, only when it is set")
    func workflowRules() async throws {
        let harness = try VonageHarness()
        await expectGatewayError(.invalidRequest) {
            try await harness.provider.start(try VonageHarness.request(.sms, fallbacks: [.silentAuth]))
        }
        await expectGatewayError(.invalidRequest) {
            try await harness.provider.start(
                try VonageHarness.request(.silentAuth, fallbacks: [.sms, .voice, .sms]))
        }
        let without = try VonageHarness(settings: ["whatsapp_from": ""])
        #expect(!without.provider.capabilities.channels.contains(.whatsapp))
        await expectGatewayError(.unsupportedChannel) {
            try await without.provider.start(try VonageHarness.request(.whatsapp))
        }
        #expect(harness.recorder.requests.isEmpty && without.recorder.requests.isEmpty)
        // The sandbox provider has a WhatsApp number.
        #expect(harness.provider.capabilities.channels.contains(.whatsapp))
        let result = try await harness.provider.start(try VonageHarness.request(.whatsapp, fallbacks: [.sms, .voice]))
        #expect(result.channel == .whatsapp)
        let body = try JSONDecoder().decode(
            VonageWire.StartRequest.self, from: try #require(harness.recorder.requests.first).body)
        #expect(body.workflow.map(\.channel) == ["whatsapp", "sms", "voice"])
        #expect(body.workflow[0].from == VonageSandbox.whatsappFrom && body.workflow[1].from == nil)
        let message = try #require(harness.outbox.last(to: "+14155550100"))
        #expect(message.channel == "whatsapp" && message.kind == .whatsapp)
        let verification = VonageHarness.stored(
            try VonageHarness.request(.whatsapp, fallbacks: [.sms, .voice]), result)
        #expect(try await harness.provider.check(verification, code: try #require(message.code)).status == .approved)
    }

    @Test("whatsapp_from must be a phone number; a leading + is dropped on the wire")
    func whatsappFromSetting() async throws {
        #expect(throws: ConfigurationError.self) { try VonageHarness(settings: ["whatsapp_from": "Gateway"]) }
        let harness = try VonageHarness(settings: ["whatsapp_from": "+14155550198"])
        _ = try await harness.provider.start(try VonageHarness.request(.whatsapp))
        let body = try JSONDecoder().decode(
            VonageWire.StartRequest.self, from: try #require(harness.recorder.requests.first).body)
        #expect(body.workflow[0].from == "14155550198")
    }

    @Test("an invalid number answers 422 naming `to`: invalid_phone_number")
    func invalidNumber() async throws {
        let harness = try VonageHarness()
        let request = StartVerification(destination: .phone(try PhoneNumber(parsing: "+4474009000")), channel: .sms)
        await expectGatewayError(.invalidPhoneNumber) { try await harness.provider.start(request) }
    }

    @Test("application JWT auth: RS256 with the application id, accepted by the emulator")
    func applicationJWT() async throws {
        let harness = try VonageHarness(settings: [
            "api_key": "", "api_secret": "", "application_id": VonageSandbox.applicationID,
            "private_key": VonageSandbox.privateKeyPEM,
        ])
        let result = try await harness.provider.start(try VonageHarness.request())
        #expect(result.reference != nil)
        let header = try #require(harness.recorder.requests.first?.headerFields[.authorization])
        #expect(header.hasPrefix("Bearer "))
        let other = try VonageHarness(settings: ["api_secret": "wrong-secret-000"])
        await expectGatewayError(.providerAuthFailed) { try await other.provider.start(try VonageHarness.request()) }
    }

    /// Timeouts, resets and unreadable bodies are the conformance suite's (`transportFailuresMapToProviderErrors`);
    /// what is Vonage's own is that a 5xx to a start may have sent.
    @Test("a 5xx to a start is provider_unavailable that may have sent", arguments: [500, 503])
    func serverErrors(_ status: Int) async throws {
        for api in ["v2", "v1"] {
            let harness = try VonageHarness(settings: ["api": api])
            harness.emulator.faults.set(FaultSwitch.Faults(serverErrorStatus: status))
            let error = await expectGatewayError(.providerUnavailable) {
                try await harness.provider.start(try VonageHarness.request())
            }
            #expect(error?.sendMayHaveHappened == true, "\(api)")
        }
    }
}

enum VonageTestFailure: Error { case reset }
