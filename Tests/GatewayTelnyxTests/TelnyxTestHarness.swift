import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Testing

@testable import GatewayTelnyx

/// A Telnyx provider wired to a ``TelnyxEmulator`` in process, sharing one manual clock and outbox; the
/// emulator's webhooks are kept by a sink.
final class TelnyxHarness: Sendable {
    static let mount = "/sandbox/telnyx"
    static let baseURL = "http://localhost:8080" + mount

    let clock = ManualClock()
    let outbox = SandboxOutbox()
    let emulator: TelnyxEmulator
    let recorder: RecordingTransport
    let provider: TelnyxProvider
    let callbacks = CallbackSink()

    init(settings extra: [String: String] = [:], persistence: any EmulatorPersistence = NoEmulatorPersistence()) throws
    {
        emulator = TelnyxEmulator(
            context: EmulatorContext(
                clock: clock, outbox: outbox, logger: .quiet,
                callbacks: CallbackSender(
                    baseURL: URL(string: "http://localhost:8080/callbacks/telnyx"), transport: callbacks),
                persistence: persistence))
        recorder = RecordingTransport(InProcessTransport(emulator: emulator, pathPrefix: Self.mount))
        var settings = TelnyxPlugin.plugin.sandboxSettings(try #require(URL(string: Self.baseURL)))
        for (key, value) in extra { settings[key] = value }
        provider = try TelnyxProvider(
            context: ProviderContext(
                providerID: "telnyx", settings: settings, transport: recorder, clock: clock, logger: .quiet,
                requestTimeout: .seconds(5)))
    }
}

extension Logger {
    static let quiet = Logger(label: "gateway.telnyx.tests") { _ in SwiftLogNoOpLogHandler() }
}

/// The Telnyx harness as the conformance suite drives it.
struct TelnyxConformanceRig: ProviderConformanceRig {
    let harness: TelnyxHarness

    var provider: any VerificationProvider { harness.provider }
    var clock: ManualClock { harness.clock }
    var outbox: SandboxOutbox { harness.outbox }
    var errors: EmulatorErrorSwitch { harness.emulator.errors }

    /// Telnyx expiry is read when a verification is: nothing runs on time.
    func tick() async {}

    func callbacks() async -> [VendorCallback] {
        await harness.emulator.deliverPending()
        return harness.callbacks.vendorCallbacks
    }
}
