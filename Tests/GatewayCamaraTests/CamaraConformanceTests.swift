import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayCamara

/// The provider conformance suite on CAMARA's codeless profile: starts on `silent_auth` (Number Verification);
/// the error rows reached through the signal (SIM Swap and the token endpoint) and the device's step (the
/// authorization redirect); the transport failures on the signal, since a start calls no vendor.
@Suite("CAMARA provider conformance")
struct CamaraConformanceTests {
    static let subject: ProviderConformance = {
        let rows = CamaraErrorMapping.table.rows.map { row in
            var row = row
            switch row.vocabulary {
            case "authorize": row.operation = "authorize"
            case "oauth": row.operation = "token"
            default: row.operation = "sim_swap_check"
            }
            return row
        }
        var subject = ProviderConformance(
            name: "camara", makeRig: { _ in CamaraConformanceRig(harness: try CamaraHarness()) },
            destination: ProviderConformance.phones("+447400", digits: 6), rows: rows,
            calls: ["sim_swap_check": .signal, "token": .signal, "authorize": .silentStep],
            expiresAfter: 120, stateTable: "")
        subject.startChannel = .silentAuth
        subject.callbackChannel = .silentAuth
        subject.callbacksAreUnsigned = true
        // A changed callback: the state no longer names the verification.
        subject.tamper = { callback in
            var tampered = callback
            tampered.query = callback.query?.replacingOccurrences(of: "state=", with: "state=x")
            return tampered
        }
        subject.transportCall = .signal
        subject.startFailureMaySend = false
        subject.makeRigWithTimeout = { timeout in CamaraConformanceRig(harness: try CamaraHarness(timeout: timeout)) }
        return subject
    }()

    @Test("CAMARA conformance", arguments: ProviderConformance.Check.allCases)
    func byID(_ check: ProviderConformance.Check) async throws {
        try await Self.subject.run(check)
    }
}
