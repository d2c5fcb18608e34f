import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayTwilio

/// A Twilio provider wired to a ``TwilioEmulator`` in process, sharing one manual clock and outbox.
struct TwilioHarness {
    static let mount = "/sandbox/twilio"
    static let baseURL = "http://localhost:8080" + mount
    static let phone = "+14155550100"

    let clock = ManualClock()
    let outbox = SandboxOutbox()
    let emulator: TwilioEmulator
    let recorder: RecordingTransport
    let provider: TwilioProvider

    init(authToken: String = TwilioSandbox.authToken, timeout: Duration = .seconds(5)) throws {
        emulator = TwilioEmulator(context: EmulatorContext(clock: clock, outbox: outbox, logger: .quiet))
        recorder = RecordingTransport(InProcessTransport(emulator: emulator, pathPrefix: Self.mount))
        provider = try TwilioProvider(
            context: TwilioPlugin.plugin.testContext(
                baseURL: Self.baseURL, settings: ["auth_token": authToken], transport: recorder, clock: clock,
                requestTimeout: timeout))
    }

    /// A provider over any transport (stubs), with sandbox settings.
    static func provider(over transport: any HTTPTransport, clock: any WallClock = ManualClock()) throws
        -> TwilioProvider
    {
        try TwilioProvider(
            context: TwilioPlugin.plugin.testContext(baseURL: baseURL, transport: transport, clock: clock))
    }

    static func smsStart(to phone: String = phone, locales: [String] = []) throws -> StartVerification {
        StartVerification(destination: .phone(try PhoneNumber(parsing: phone)), channel: .sms, locales: locales)
    }

    /// Starts an SMS verification and returns it as the gateway would store it, with the code sent.
    func startSMS(to phone: String = phone) async throws -> (verification: ProviderVerification, code: String) {
        let request = try Self.smsStart(to: phone)
        let result = try await provider.start(request)
        let code = try #require(outbox.last(to: phone)?.code)
        return (Self.stored(request, result), code)
    }

    /// The provider's view of a started verification.
    static func stored(_ request: StartVerification, _ result: ProviderStartResult) -> ProviderVerification {
        ProviderVerification(
            destination: request.destination, channel: result.channel ?? request.channel, reference: result.reference,
            state: result.state, locales: request.locales)
    }

    /// A code that is not `code` but has its shape.
    static func wrong(_ code: String) -> String { code == "000000" ? "111111" : "000000" }
}

/// A form body as a dictionary.
func formFields(_ body: Data) -> [String: String] {
    FormEncoding.decode(String(decoding: body, as: UTF8.self))
}
