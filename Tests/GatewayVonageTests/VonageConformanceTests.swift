import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayVonage

/// The Vonage harness as the conformance suite drives it.
struct VonageConformanceRig: HarnessConformanceRig {
    let harness: VonageHarness

    var provider: any VerificationProvider { harness.provider }

    func tick() async { await harness.emulator.tick() }

    func callbacks() async -> [VendorCallback] {
        await harness.emulator.deliverPending()
        return harness.callbacks.vendorCallbacks
    }

    /// Silent auth: the device follows `check_url` and ends with the code the backend checks.
    func appCode(after result: ProviderStartResult, to destination: Destination) async throws -> String? {
        guard case .openURL(let opening)? = result.nextAction else { return nil }
        return try await VonageV2ProviderTests.followCheckURL(opening.url, harness: harness)
    }
}

/// Vonage v2 and v1 through the provider conformance suite, each with its vocabulary of the error table.
@Suite("Vonage provider conformance")
struct VonageConformanceTests {
    static func subject(api: String) -> ProviderConformance {
        var subject = ProviderConformance(
            name: "vonage \(api)",
            makeRig: { persistence in
                VonageConformanceRig(
                    harness: try VonageHarness(
                        settings: api == "v1" ? ["api": "v1", "signature_secret": ""] : [:], persistence: persistence))
            },
            // UK mobiles +44 7400 000000 onwards: valid numbers the emulator accepts, one per index.
            destination: ProviderConformance.phones("+447400", digits: 6),
            rows: VonageErrorMapping.table.rows(in: api),
            calls: ["start": .start, "check": .check, "cancel": .cancel, "next_workflow": .resend, "search": .status],
            expiresAfter: 60, stateTable: VonageEmulatorState.table)
        subject.destinationFor = { $0 == .email ? .email("user@example.com") : nil }
        subject.resendFallbacks = [.voice]
        subject.cancelAfter = VonageWire.cancelWindow
        subject.signatureHeaders = [.authorization]
        subject.makeRigWithTimeout = { timeout in
            VonageConformanceRig(
                harness: try VonageHarness(
                    settings: api == "v1" ? ["api": "v1", "signature_secret": ""] : [:], timeout: timeout))
        }
        return subject
    }

    @Test("Vonage v2", arguments: ProviderConformance.Check.allCases)
    func v2(_ check: ProviderConformance.Check) async throws {
        try await Self.subject(api: "v2").run(check)
    }

    @Test("Vonage v1", arguments: ProviderConformance.Check.allCases)
    func v1(_ check: ProviderConformance.Check) async throws {
        try await Self.subject(api: "v1").run(check)
    }

    /// The SMS API's rows are reached by VonageSMSTests' conformance run; the SDK rows and the receipt rows are
    /// no call's answer.
    @Test("the conformance runs reach every wire row of the table")
    func everyRowIsReached() {
        let reached =
            VonageErrorMapping.table.rows(in: "v2") + VonageErrorMapping.table.rows(in: "v1")
            + VonageErrorMapping.table.rows(in: "sms")
        let unanswered = VonageErrorMapping.sdkRows + VonageErrorMapping.dlrRows
        #expect(reached.count + unanswered.count == VonageErrorMapping.table.rows.count)
        #expect(VonageErrorMapping.table.rows(in: "sms") == VonageErrorMapping.smsRows)
    }
}

extension VonageEmulator: SwitchedEmulator {}
