import Foundation
import GatewayCore
import Testing

/// An emulator whose error switch the conformance suite arms (a messaging plugin's).
package protocol ErrorSwitchedEmulator: VendorEmulator {
    /// Rows of the plugin's table armed to answer the next calls.
    var errors: EmulatorErrorSwitch { get }
}

/// A messaging plugin's provider (an ``OwnCodeProvider`` over its sender) wired to its emulator in process, with
/// a recorder of the requests it makes: what the suite and each messaging plugin's own tests drive.
package struct MessagingRig: ProviderConformanceRig {
    package let clock = ManualClock()
    package let outbox = SandboxOutbox()
    package let emulator: any ErrorSwitchedEmulator
    package let recorder: RecordingTransport
    /// Keeps the delivery receipts the emulator posts to the gateway's callback route.
    package let sink = CallbackSink()
    package let provider: any VerificationProvider

    package var errors: EmulatorErrorSwitch { emulator.errors }
    package var faults: FaultSwitch { emulator.faults }

    /// `plugin`'s provider, with `ownCodes`, over the emulator `makeEmulator` builds, mounted at `mount`.
    package init(
        _ plugin: GatewayPlugin, mount: String, ownCodes: OwnCodeSettings, settings: [String: String] = [:],
        requestTimeout: Duration = .seconds(10),
        makeEmulator: (EmulatorContext) -> any ErrorSwitchedEmulator
    ) throws {
        emulator = makeEmulator(
            .testing(
                clock: clock, outbox: outbox, callbacks: sink, route: "http://gateway.test/callbacks/" + plugin.id))
        recorder = RecordingTransport(InProcessTransport(emulator: emulator, pathPrefix: mount))
        var context = try plugin.testContext(
            baseURL: "http://localhost:8080" + mount, settings: settings, transport: recorder, clock: clock,
            requestTimeout: requestTimeout)
        context.ownCodes = ownCodes
        // The vendor is told the callback route under this address, and asked for receipts there.
        context.publicBaseURL = URL(string: "http://gateway.test")
        provider = try plugin.makeProvider(context)
    }

    package func tick() async {}

    /// The receipts the emulator has posted, waiting (up to a minute, for a busy machine) for the first: the
    /// emulator posts them after it answered the send.
    package func callbacks() async -> [VendorCallback] {
        for _ in 0..<600 where sink.requests.isEmpty {
            try? await Task.sleep(for: .milliseconds(100))
        }
        return sink.vendorCallbacks
    }

    /// The JSON object body of the `index`th request (the last by default).
    package func json(_ index: Int = -1) throws -> [String: JSONValue] {
        let requests = recorder.requests
        let request = try #require(index < 0 ? requests.last : requests[index])
        return try #require(try JSONDecoder().decode(JSONValue.self, from: request.body).objectValue)
    }

    /// The form body of the `index`th request (the last by default).
    package func form(_ index: Int = -1) throws -> [String: String] {
        let requests = recorder.requests
        let request = try #require(index < 0 ? requests.last : requests[index])
        return FormEncoding.decode(String(decoding: request.body, as: UTF8.self))
    }
}
