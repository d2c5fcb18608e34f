import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayTelnyx

/// Telnyx through the provider conformance suite, checking codes by id and by phone number.
@Suite("Telnyx provider conformance")
struct TelnyxConformanceTests {
    static func subject(verifyBy: String) -> ProviderConformance {
        var subject = ProviderConformance(
            name: "telnyx by \(verifyBy)",
            makeRig: { persistence in
                TelnyxConformanceRig(
                    harness: try TelnyxHarness(settings: ["verify_by": verifyBy], persistence: persistence))
            },
            // UK mobiles +44 7400 000000 onwards: valid numbers the emulator accepts, one per index.
            destination: ProviderConformance.phones("+447400", digits: 6),
            rows: TelnyxErrorMapping.table.rows,
            calls: ["trigger": .start, "verify": .check, "retrieve": .status],
            expiresAfter: TimeInterval(TelnyxEmulator.defaultTimeout), stateTable: TelnyxEmulatorState.table)
        subject.signatureHeaders = [TelnyxWire.signatureHeader, TelnyxWire.timestampHeader]
        subject.makeRigWithTimeout = { timeout in
            TelnyxConformanceRig(harness: try TelnyxHarness(settings: ["verify_by": verifyBy], timeout: timeout))
        }
        return subject
    }

    @Test("Telnyx, verify by id", arguments: ProviderConformance.Check.allCases)
    func byID(_ check: ProviderConformance.Check) async throws {
        try await Self.subject(verifyBy: "id").run(check)
    }

    @Test("Telnyx, verify by phone number", arguments: ProviderConformance.Check.allCases)
    func byPhoneNumber(_ check: ProviderConformance.Check) async throws {
        try await Self.subject(verifyBy: "phone_number").run(check)
    }
}
