import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewaySinch

/// The Sinch harness as the conformance suite drives it: callbacks reach the provider through the harness's
/// stand-in for the gateway (which answers Sinch's request events), and are kept as the provider got them.
struct SinchConformanceRig: HarnessConformanceRig {
    let harness: SinchHarness

    var provider: any VerificationProvider { harness.provider }

    func callbacks() async -> [VendorCallback] { harness.gateway.callbacks }
}

/// Sinch Verification through the provider conformance suite.
@Suite("Sinch provider conformance")
struct SinchConformanceTests {
    static let subject = ProviderConformance(
        name: "sinch",
        makeRig: { SinchConformanceRig(harness: try SinchHarness(persistence: $0)) },
        // Swedish mobiles +46 702 000000 onwards: valid numbers, none of the sandbox's error or fraud numbers.
        destination: ProviderConformance.phones("+46702", digits: 6),
        rows: SinchErrorMapping.table.rows(in: ""), calls: [:], expiresAfter: SinchEmulator.defaultValidity,
        stateTable: SinchEmulatorState.table)

    @Test("Sinch Verification", arguments: ProviderConformance.Check.allCases)
    func conformance(_ check: ProviderConformance.Check) async throws {
        var subject = Self.subject
        subject.signatureHeaders = [.authorization]
        subject.checkAfterApprovalIsApproved = true
        subject.makeRigWithTimeout = { SinchConformanceRig(harness: try SinchHarness(timeout: $0)) }
        try await subject.run(check)
    }

    @Test("the conformance run reaches every errorCode row; reasons and SDK constants are no call's answer")
    func everyRowIsReached() {
        #expect(SinchErrorMapping.rows == SinchErrorMapping.table.rows(in: ""))
        #expect(SinchErrorMapping.table.rows.count == SinchErrorMapping.rows.count + 14 + 6)
    }
}

extension SinchEmulator: SwitchedEmulator {}
