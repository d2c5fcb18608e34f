import Crypto
import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayTwilio

/// The provider's push verifications and factors against the emulator in process; webhooks the emulator
/// sends are handed to the provider's callback handler as the gateway would.
@Suite("Twilio provider: Verify Push")
struct TwilioPushProviderTests {
    static let identity = "user-0001-abcd"
    static let hook = URL(string: "http://gateway.test/callbacks/twilio")!

    let clock = ManualClock()
    let outbox = SandboxOutbox()
    let sink = WebhookSink()
    let emulator: TwilioEmulator
    let recorder: RecordingTransport
    let provider: TwilioProvider
    var wire: PushWire { PushWire(emulator: emulator) }

    init() throws {
        emulator = TwilioEmulator(
            context: EmulatorContext(
                clock: clock, outbox: outbox, logger: .quiet,
                callbacks: CallbackSender(baseURL: Self.hook, transport: sink)))
        recorder = RecordingTransport(InProcessTransport(emulator: emulator, pathPrefix: TwilioHarness.mount))
        let settings = TwilioPlugin.plugin.sandboxSettings(try #require(URL(string: TwilioHarness.baseURL)))
        provider = try TwilioProvider(
            context: ProviderContext(
                providerID: "twilio", settings: settings, transport: recorder, clock: clock, logger: .quiet))
    }

    func enrolled(_ identity: String = Self.identity) async throws -> PushDevice {
        var device = PushDevice(identity: identity)
        try await device.enrol(wire, now: clock.now)
        return device
    }

    static func pushStart(factor: String? = nil, prompt: ChannelOptions.Prompt? = nil) -> StartVerification {
        StartVerification(
            destination: .identity(identity), channel: .push,
            channelOptions: ChannelOptions(factorID: factor, prompt: prompt))
    }

    func started(_ request: StartVerification = pushStart()) async throws -> ProviderVerification {
        let result = try await provider.start(request)
        return ProviderVerification(
            destination: request.destination, channel: .push, reference: result.reference, state: result.state)
    }

    /// The last webhook the emulator sent, as the gateway's callback route hands it over.
    func lastCallback(signature: String? = nil) throws -> VendorCallback {
        let request = try #require(sink.requests.last)
        var headers = request.headerFields
        if let signature { headers[TwilioPushCrypto.signatureHeader] = signature }
        return VendorCallback(
            method: .post, url: request.url, subpath: "/", query: nil, headerFields: headers, body: request.body)
    }

    static let noLookup = VerificationLookup { _ in nil }

    @Test("a push start challenges the only verified factor with the prompt, and answers await_approval")
    func start() async throws {
        let device = try await enrolled()
        let prompt = ChannelOptions.Prompt(
            message: "Sign in to Example?", details: [.init(label: "IP", value: "203.0.113.9")],
            hiddenDetails: ["session": "s-1"])
        let result = try await provider.start(Self.pushStart(prompt: prompt))
        let sid = try #require(result.reference)
        #expect(sid.hasPrefix("YC"))
        #expect(result.status == .pending && result.channel == .push)
        #expect(result.nextAction == .awaitApproval(.init(message: "Sign in to Example?", expiresAt: result.expiresAt)))
        #expect(result.expiresAt == clock.now.addingTimeInterval(300))
        let challenge = try await wire.call(.get, "/Entities/\(Self.identity)/Challenges/\(sid)")
        #expect(challenge.json["factor_sid"]?.stringValue == device.factorSID)
        #expect(challenge.json["details"]?["fields"] == [["label": "IP", "value": "203.0.113.9"]])
        #expect(challenge.json["hidden_details"] == ["session": "s-1"])
        #expect(outbox.last(to: Self.identity)?.kind == .push)
    }

    @Test("approval arrives by a signed webhook and by refresh; the webhook names the challenge")
    func approved() async throws {
        let device = try await enrolled()
        let verification = try await started()
        let sid = try #require(verification.reference)
        #expect(try await provider.status(verification).status == .pending)
        _ = try await device.answer(wire, challenge: sid, status: "approved", now: clock.now)
        let reply = try await provider.handleCallback(try lastCallback(), lookup: Self.noLookup)
        #expect(
            reply.updates == [
                ProviderUpdate(
                    target: .reference(sid), change: VerificationChange(status: .approved, reason: "approved"))
            ])
        #expect(try await provider.status(verification).status == .approved)
    }

    @Test("denial gives denied, by webhook and refresh")
    func denied() async throws {
        let device = try await enrolled()
        let verification = try await started()
        _ = try await device.answer(
            wire, challenge: try #require(verification.reference), status: "denied", now: clock.now)
        let reply = try await provider.handleCallback(try lastCallback(), lookup: Self.noLookup)
        #expect(reply.updates.first?.change.status == .denied)
        #expect(try await provider.status(verification).status == .denied)
    }

    @Test("an unanswered challenge reads expired after its expiry")
    func expired() async throws {
        _ = try await enrolled()
        let verification = try await started()
        clock.advance(by: 301)
        #expect(try await provider.status(verification).status == .expired)
    }

    @Test("push_challenge_seconds sets the challenge's expiration date")
    func challengeLifetime() async throws {
        _ = try await enrolled()
        var settings = TwilioPlugin.plugin.sandboxSettings(try #require(URL(string: TwilioHarness.baseURL)))
        settings["push_challenge_seconds"] = "3"
        let short = try TwilioProvider(
            context: ProviderContext(
                providerID: "twilio", settings: settings, transport: recorder, clock: clock, logger: .quiet))
        let result = try await short.start(Self.pushStart())
        #expect(result.expiresAt == clock.now.addingTimeInterval(3))
        let verification = ProviderVerification(
            destination: .identity(Self.identity), channel: .push, reference: result.reference, state: result.state)
        clock.advance(by: 4)
        #expect(try await short.status(verification).status == .expired)
        settings["push_challenge_seconds"] = "0"
        #expect(throws: ConfigurationError.self) {
            try TwilioProvider(
                context: ProviderContext(
                    providerID: "twilio", settings: settings, transport: recorder, clock: SystemClock(), logger: .quiet)
            )
        }
    }

    @Test("a webhook with a bad or missing signature is unauthorized; one for a changed URL too")
    func badSignature() async throws {
        let device = try await enrolled()
        let verification = try await started()
        _ = try await device.answer(
            wire, challenge: try #require(verification.reference), status: "approved", now: clock.now)
        await expectGatewayError(.unauthorized) {
            try await provider.handleCallback(try lastCallback(signature: "AAAA"), lookup: Self.noLookup)
        }
        var moved = try lastCallback()
        moved.url = try #require(URL(string: "http://elsewhere.test/callbacks/twilio"))
        await expectGatewayError(.unauthorized) { try await provider.handleCallback(moved, lookup: Self.noLookup) }
        var unsigned = try lastCallback()
        unsigned.headerFields[TwilioPushCrypto.signatureHeader] = nil
        await expectGatewayError(.unauthorized) { try await provider.handleCallback(unsigned, lookup: Self.noLookup) }
    }

    @Test("factor events change nothing")
    func factorEvents() async throws {
        _ = try await enrolled()
        let reply = try await provider.handleCallback(try lastCallback(), lookup: Self.noLookup)
        #expect(reply.updates.isEmpty)
    }

    @Test("an approval signed with another factor's key is refused and the verification stays pending")
    func otherFactorsKey() async throws {
        let device = try await enrolled()
        let other = try await enrolled("other-user-0002")
        let verification = try await started()
        let answer = try await device.answer(
            wire, challenge: try #require(verification.reference), status: "approved", now: clock.now, signer: other.key
        )
        #expect(answer.status == 403 && answer.code == 60324)
        #expect(try await provider.status(verification).status == .pending)
    }

    @Test("no factor is not_enrolled; two need factor_id; a named unverified factor is app_verification_required")
    func factorChoice() async throws {
        await expectGatewayError(.notEnrolled) { try await provider.start(Self.pushStart()) }
        let first = try await enrolled()
        _ = try await enrolled()
        await expectGatewayError(.invalidRequest) { try await provider.start(Self.pushStart()) }
        let named = try await provider.start(Self.pushStart(factor: first.factorSID))
        #expect(named.reference != nil)
        let pending = PushDevice(identity: Self.identity)
        let created = try await wire.call(
            .post, "/Entities/\(Self.identity)/Factors", form: PushDevice.factorForm(publicKey: pending.publicKey))
        let unverified = try #require(created.json["sid"]?.stringValue)
        await expectGatewayError(.appVerificationRequired) {
            try await provider.start(Self.pushStart(factor: unverified))
        }
        await expectGatewayError(.notEnrolled) {
            try await provider.start(Self.pushStart(factor: "YF" + String(repeating: "0", count: 32)))
        }
        await expectGatewayError(.invalidRequest) { try await provider.start(Self.pushStart(factor: "../x")) }
        let long = ChannelOptions.Prompt(
            message: "Hi", details: [.init(label: String(repeating: "L", count: 40), value: "v")])
        await expectGatewayError(.invalidRequest) {
            try await provider.start(Self.pushStart(factor: first.factorSID, prompt: long))
        }
    }

    @Test("a check never completes a push; cancel calls nobody; resend notifies three times then max_sends_reached")
    func checkCancelResend() async throws {
        _ = try await enrolled()
        let verification = try await started()
        let before = recorder.requests.count
        await expectGatewayError(.invalidState) { try await provider.check(verification, code: "123456") }
        try await provider.cancel(verification)
        #expect(recorder.requests.count == before)
        for _ in 0..<3 {
            let again = try await provider.resend(verification, request: ResendRequest())
            #expect(again.nextAction != nil && again.reference == verification.reference)
        }
        await expectGatewayError(.maxSendsReached) { try await provider.resend(verification, request: ResendRequest()) }
        await expectGatewayError(.unsupportedChannel) {
            try await provider.resend(verification, request: ResendRequest(channel: .sms))
        }
    }

    @Test("factors: an access token enrols a device, which is listed, fetched and deleted")
    func factors() async throws {
        let token = try await provider.createFactorAccessToken(
            identity: Self.identity, friendlyName: "Phone", ttlSeconds: 120)
        #expect(token.expiresAt == clock.now.addingTimeInterval(120))
        #expect(token.details["service_sid"] == .string(TwilioSandbox.serviceSID))
        #expect(try await provider.listFactors(identity: Self.identity).isEmpty)
        var device = PushDevice(identity: Self.identity)
        let created = try await wire.call(
            .post, "/Entities/\(Self.identity)/Factors", form: PushDevice.factorForm(publicKey: device.publicKey),
            auth: PushWire.device(token.token))
        #expect(created.status == 201)
        device.factorSID = try #require(created.json["sid"]?.stringValue)
        let listed = try await provider.listFactors(identity: Self.identity)
        #expect(listed.map(\.id) == [device.factorSID] && listed.first?.status == .unverified)
        #expect(listed.first?.details["notification_platform"] == "apn")
        let fetched = try await provider.fetchFactor(identity: Self.identity, id: device.factorSID)
        #expect(fetched.friendlyName == "Test phone")
        try await provider.deleteFactor(identity: Self.identity, id: device.factorSID)
        await expectGatewayError(.notFound) {
            try await provider.fetchFactor(identity: Self.identity, id: device.factorSID)
        }
        await expectGatewayError(.notFound) {
            try await provider.deleteFactor(identity: Self.identity, id: device.factorSID)
        }
        await expectGatewayError(.invalidRequest) { try await provider.listFactors(identity: "short") }
        await expectGatewayError(.invalidRequest) {
            try await provider.createFactorAccessToken(identity: Self.identity, friendlyName: nil, ttlSeconds: 30)
        }
    }
}
