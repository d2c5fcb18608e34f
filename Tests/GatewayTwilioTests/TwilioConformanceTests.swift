import Foundation
import GatewayCore
import GatewayTestSupport
import Synchronization
import Testing

@testable import GatewayTwilio

/// A Twilio provider wired to its emulator as the conformance suite drives it: webhooks kept by a sink, and a
/// simulated phone per identity for Verify Push (enrolled before a push start, approving on the device).
final class TwilioConformanceRig: ProviderConformanceRig {
    let clock = ManualClock()
    let outbox = SandboxOutbox()
    let sink = CallbackSink()
    let emulator: TwilioEmulator
    let provider: any VerificationProvider
    private let devices = Mutex<[String: PushDevice]>([:])

    var errors: EmulatorErrorSwitch { emulator.errors }
    var faults: FaultSwitch { emulator.faults }

    init(persistence: any EmulatorPersistence, requestTimeout: Duration = .seconds(10)) throws {
        emulator = TwilioEmulator(
            context: .testing(
                clock: clock, outbox: outbox, callbacks: sink, route: "http://gateway.test/callbacks/twilio",
                persistence: persistence))
        provider = try TwilioProvider(
            context: TwilioPlugin.plugin.testContext(
                baseURL: TwilioHarness.baseURL,
                transport: InProcessTransport(emulator: emulator, pathPrefix: TwilioHarness.mount), clock: clock,
                requestTimeout: requestTimeout))
    }

    func tick() async {}

    func callbacks() async -> [VendorCallback] { sink.vendorCallbacks }

    func prepare(_ destination: Destination, for channel: Channel) async throws {
        guard channel == .push, case .identity(let identity) = destination else { return }
        var device = PushDevice(identity: identity)
        try await device.enrol(PushWire(emulator: emulator), now: clock.now)
        devices.withLock { $0[identity] = device }
    }

    func approveWithoutCode(_ result: ProviderStartResult, to destination: Destination) async throws {
        let device = try #require(devices.withLock { $0[destination.value] }, "no device enrolled for the push")
        let answer = try await device.answer(
            PushWire(emulator: emulator), challenge: try #require(result.reference), status: "approved", now: clock.now)
        #expect(answer.status == 200)
    }
}

/// Twilio Verify (OTP and Verify Push) through the provider conformance suite.
@Suite("Twilio provider conformance")
struct TwilioConformanceTests {
    /// The push SDK's client-side codes (docs/vendors/twilio.md §5): the device's own, never an API answer.
    static let sdkCodes = Set((60401...60407).map(String.init))

    /// The rows Twilio's API answers, each reached by a start except 20404, which a create never gets as a
    /// `not_found` (it means an unknown service or locale there) and a check does.
    static let wireRows = TwilioErrorMapping.table.rows.filter { !sdkCodes.contains($0.code ?? "") }.map { row in
        var row = row
        if row.code == "20404" { row.operation = "check" }
        return row
    }

    static let subject: ProviderConformance = {
        var subject = ProviderConformance(
            name: "twilio",
            makeRig: { try TwilioConformanceRig(persistence: $0) },
            // +1 415 555 0000 onwards: valid numbers the emulator accepts, one per index.
            destination: ProviderConformance.phones("+1415555", digits: 4),
            rows: wireRows, calls: ["check": .check], expiresAfter: TwilioWire.validity,
            stateTable: TwilioEmulatorState.table)
        subject.destinationFor = {
            switch $0 {
            case .email: .email("user@example.com")
            case .push: .identity("conformance-user-01")
            default: nil
            }
        }
        subject.callbackChannel = .push
        subject.makeRigWithTimeout = {
            try TwilioConformanceRig(persistence: InMemoryEmulatorPersistence(), requestTimeout: $0)
        }
        subject.statusAfterApproval = false
        subject.signatureHeaders = [TwilioPushCrypto.signatureHeader]
        return subject
    }()

    @Test("Twilio Verify", arguments: ProviderConformance.Check.allCases)
    func conformance(_ check: ProviderConformance.Check) async throws {
        try await Self.subject.run(check)
    }

    @Test("the conformance run reaches every row of the table but the push SDK's client-side codes")
    func everyRowIsReached() {
        #expect(Self.wireRows.count + Self.sdkCodes.count == TwilioErrorMapping.table.rows.count)
    }
}
