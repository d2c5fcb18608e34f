import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Synchronization
import Testing

@testable import GatewayVonage

/// A Vonage provider wired to a ``VonageEmulator`` in process, sharing one manual clock and outbox; the
/// emulator's callbacks go to the provider's `handleCallback`, and the updates they make are kept.
final class VonageHarness: EmulatorHarness {
    static let mount = "/sandbox/vonage"
    static let baseURL = "http://localhost:8080" + mount
    static let phone = "+14155550100"

    let clock = ManualClock()
    let outbox = SandboxOutbox()
    let emulator: VonageEmulator
    let recorder: RecordingTransport
    let provider: VonageProvider
    let callbacks: CallbackSink

    init(
        settings extra: [String: String] = [:], timeout: Duration = .seconds(5),
        emulatorSettings: VonageEmulator.Settings = .init(channelTimeout: 60, autoAdvance: false),
        persistence: any EmulatorPersistence = NoEmulatorPersistence()
    ) throws {
        let sink = CallbackSink()
        callbacks = sink
        emulator = VonageEmulator(
            context: .testing(
                clock: clock, outbox: outbox, callbacks: sink, route: "http://localhost:8080/callbacks/vonage",
                persistence: persistence),
            settings: emulatorSettings)
        recorder = RecordingTransport(InProcessTransport(emulator: emulator, pathPrefix: Self.mount))
        provider = try VonageProvider(
            context: VonagePlugin.plugin.testContext(
                baseURL: Self.baseURL, settings: extra, transport: recorder, clock: clock, requestTimeout: timeout))
    }

    static func request(
        _ channel: Channel = .sms, fallbacks: [Channel] = [], to phone: String = phone, locales: [String] = []
    ) throws -> StartVerification {
        StartVerification(
            destination: .phone(try PhoneNumber(parsing: phone)), channel: channel, locales: locales,
            fallbackChannels: fallbacks)
    }

    static func stored(_ request: StartVerification, _ result: ProviderStartResult) -> ProviderVerification {
        ProviderVerification(
            destination: request.destination, channel: result.channel ?? request.channel,
            fallbackChannels: request.fallbackChannels, reference: result.reference, state: result.state,
            locales: request.locales)
    }

    /// Starts and returns the stored verification and the code sent.
    func start(_ request: StartVerification) async throws -> (ProviderVerification, String?) {
        let result = try await provider.start(request)
        return (Self.stored(request, result), outbox.last(to: request.destination.value)?.code)
    }

    func code(to phone: String = phone) -> String? { outbox.last(to: phone)?.code }

    static func wrong(_ code: String?) -> String { code == "0000" ? "1111" : "0000" }
}
