import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayTelnyx

/// A Telnyx provider wired to a ``TelnyxEmulator`` in process, sharing one manual clock and outbox; the
/// emulator's webhooks are kept by a sink.
final class TelnyxHarness: EmulatorHarness {
    static let mount = "/sandbox/telnyx"
    static let baseURL = "http://localhost:8080" + mount

    let clock = ManualClock()
    let outbox = SandboxOutbox()
    let emulator: TelnyxEmulator
    let recorder: RecordingTransport
    let provider: TelnyxProvider
    let callbacks = CallbackSink()

    init(
        settings extra: [String: String] = [:], timeout: Duration = .seconds(5),
        persistence: any EmulatorPersistence = NoEmulatorPersistence()
    ) throws {
        emulator = TelnyxEmulator(
            context: .testing(
                clock: clock, outbox: outbox, callbacks: callbacks, route: "http://localhost:8080/callbacks/telnyx",
                persistence: persistence))
        recorder = RecordingTransport(InProcessTransport(emulator: emulator, pathPrefix: Self.mount))
        provider = try TelnyxProvider(
            context: TelnyxPlugin.plugin.testContext(
                baseURL: Self.baseURL, settings: extra, transport: recorder, clock: clock, requestTimeout: timeout))
    }
}

/// The Telnyx harness as the conformance suite drives it.
struct TelnyxConformanceRig: HarnessConformanceRig {
    let harness: TelnyxHarness

    var provider: any VerificationProvider { harness.provider }

    func callbacks() async -> [VendorCallback] {
        await harness.emulator.deliverPending()
        return harness.callbacks.vendorCallbacks
    }
}

extension TelnyxEmulator: SwitchedEmulator {}
