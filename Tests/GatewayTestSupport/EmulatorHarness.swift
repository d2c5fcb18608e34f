import Foundation
import GatewayCore
import Logging
import Testing

/// A plugin's in-process test harness: its provider wired to its own emulator on one manual clock and outbox.
package protocol EmulatorHarness: Sendable {
    associatedtype Emulator: SwitchedEmulator
    var clock: ManualClock { get }
    var outbox: SandboxOutbox { get }
    var emulator: Emulator { get }
}

/// An emulator with the switch that answers a row of its plugin's error table (every plugin's emulator has one;
/// each test target declares its emulator's conformance).
package protocol SwitchedEmulator: VendorEmulator {
    var errors: EmulatorErrorSwitch { get }
}

/// A conformance rig over a plugin's ``EmulatorHarness``: the clock, the outbox and the emulator's error and fault
/// switches are the harness's, nothing runs on time and no callbacks are kept unless the rig says otherwise. A rig
/// names the provider, and whatever else its vendor needs (a tick, its callbacks, the app's part).
package protocol HarnessConformanceRig: ProviderConformanceRig {
    associatedtype Harness: EmulatorHarness
    var harness: Harness { get }
}

extension HarnessConformanceRig {
    package var clock: ManualClock { harness.clock }
    package var outbox: SandboxOutbox { harness.outbox }
    package var errors: EmulatorErrorSwitch { harness.emulator.errors }
    package var faults: FaultSwitch { harness.emulator.faults }

    package func tick() async {}

    package func callbacks() async -> [VendorCallback] { [] }
}

extension ProviderConformance {
    /// Destinations numbered from `prefix`: the `index`-th is `prefix` and `index` in `digits` digits (a range of
    /// valid numbers the emulator accepts, one per index).
    package static func phones(_ prefix: String, digits: Int) -> @Sendable (Int) throws -> Destination {
        { .phone(try PhoneNumber(parsing: prefix + String(format: "%0\(digits)d", $0))) }
    }
}

extension Logger {
    /// A logger that drops everything, so test output stays readable.
    package static let quiet = Logger(label: "gateway.tests") { _ in SwiftLogNoOpLogHandler() }
}

extension GatewayPlugin {
    /// A context for a provider of this plugin in its tests: the sandbox's settings for the emulator at `baseURL`
    /// with `extra` over them, the plugin's id as the provider id, and a quiet logger.
    package func testContext(
        baseURL: String, settings extra: [String: String] = [:], transport: any HTTPTransport, clock: any WallClock,
        requestTimeout: Duration = .seconds(10)
    ) throws -> ProviderContext {
        var settings = sandboxSettings(try #require(URL(string: baseURL)))
        settings.merge(extra) { _, new in new }
        return ProviderContext(
            providerID: id, settings: settings, transport: transport, clock: clock, logger: .quiet,
            requestTimeout: requestTimeout)
    }
}

extension EmulatorContext {
    /// An emulator's context in tests: the harness's clock and outbox, a quiet logger, and its callbacks kept by
    /// `sink` as sent to the gateway's callback route `route`.
    package static func testing(
        clock: ManualClock, outbox: SandboxOutbox, callbacks sink: CallbackSink, route: String,
        persistence: any EmulatorPersistence = NoEmulatorPersistence()
    ) -> EmulatorContext {
        EmulatorContext(
            clock: clock, outbox: outbox, logger: .quiet,
            callbacks: CallbackSender(baseURL: URL(string: route), transport: sink), persistence: persistence)
    }
}
