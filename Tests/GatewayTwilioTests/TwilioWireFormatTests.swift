import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayTwilio

@Suite("Twilio wire format")
struct TwilioWireFormatTests {
    static let basic =
        "Basic " + Data("\(TwilioSandbox.accountSID):\(TwilioSandbox.authToken)".utf8).base64EncodedString()

    @Test("a start is a form POST to the service's Verifications with Basic auth and PascalCase fields")
    func start() async throws {
        let harness = try TwilioHarness()
        _ = try await harness.provider.start(try TwilioHarness.smsStart(locales: ["es-MX"]))
        let request = try #require(harness.recorder.requests.first)
        #expect(request.method == .post)
        #expect(
            request.url.absoluteString
                == "\(TwilioHarness.baseURL)/v2/Services/\(TwilioSandbox.serviceSID)/Verifications")
        #expect(request.headerFields[.authorization] == Self.basic)
        #expect(request.headerFields[.accept] == "application/json")
        #expect(request.headerFields[.contentType] == "application/x-www-form-urlencoded")
        let body = String(decoding: request.body, as: UTF8.self)
        #expect(body == "To=%2B14155550100&Channel=sms&Locale=es")
    }

    @Test(
        "the gateway's channels become Twilio's Channel values",
        arguments: [
            (Channel.sms, "sms"), (.voice, "call"), (.whatsapp, "whatsapp"),
        ])
    func channelNames(channel: Channel, twilio: String) async throws {
        let harness = try TwilioHarness()
        let request = StartVerification(
            destination: .phone(try PhoneNumber(parsing: TwilioHarness.phone)), channel: channel)
        let result = try await harness.provider.start(request)
        #expect(result.channel == channel)
        #expect(formFields(try #require(harness.recorder.requests.first).body)["Channel"] == twilio)
        #expect(harness.outbox.all.first?.channel == twilio)
    }

    @Test("a check posts VerificationSid and Code to VerificationCheck")
    func check() async throws {
        let harness = try TwilioHarness()
        let (verification, code) = try await harness.startSMS()
        _ = try await harness.provider.check(verification, code: code)
        let request = try #require(harness.recorder.requests.last)
        #expect(request.method == .post)
        #expect(request.url.path().hasSuffix("/v2/Services/\(TwilioSandbox.serviceSID)/VerificationCheck"))
        #expect(formFields(request.body) == ["VerificationSid": try #require(verification.reference), "Code": code])
        #expect(request.headerFields[.authorization] == Self.basic)
    }

    @Test("a cancel posts Status=canceled to the verification, and a status is a GET without a body")
    func cancelAndStatus() async throws {
        let harness = try TwilioHarness()
        let (verification, _) = try await harness.startSMS()
        let sid = try #require(verification.reference)
        try await harness.provider.cancel(verification)
        _ = try await harness.provider.status(verification)
        let requests = harness.recorder.requests
        let cancel = requests[requests.count - 2]
        #expect(cancel.method == .post)
        #expect(cancel.url.path().hasSuffix("/Verifications/\(sid)"))
        #expect(formFields(cancel.body) == ["Status": "canceled"])
        let fetch = requests[requests.count - 1]
        #expect(fetch.method == .get)
        #expect(fetch.url.path().hasSuffix("/Verifications/\(sid)"))
        #expect(fetch.body.isEmpty)
        #expect(fetch.headerFields[.contentType] == nil)
        #expect(fetch.headerFields[.authorization] == Self.basic)
    }

    @Test("an API key SID authenticates like an account SID")
    func apiKey() async throws {
        let clock = ManualClock()
        let emulator = TwilioEmulator(context: EmulatorContext(clock: clock, logger: .quiet))
        let recorder = RecordingTransport(InProcessTransport(emulator: emulator))
        var settings = TwilioPlugin.plugin.sandboxSettings(try #require(URL(string: "https://verify.example")))
        settings["account_sid"] = "SK" + String(repeating: "ab", count: 16)
        let provider = try TwilioProvider(
            context: ProviderContext(
                providerID: "twilio-eu", settings: settings, transport: recorder, clock: clock, logger: .quiet))
        let result = try await provider.start(try TwilioHarness.smsStart())
        #expect(result.reference != nil)
        let header = try #require(recorder.requests.first?.headerFields[.authorization])
        #expect(
            header == "Basic "
                + Data("\(settings["account_sid"] ?? ""):\(TwilioSandbox.authToken)".utf8).base64EncodedString())
    }
}
