import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayIDaaS

/// The IDaaS harness as the conformance suite drives it: the app solves each slider with the sandbox's answer.
struct IDaaSConformanceRig: HarnessConformanceRig {
    let harness: IDaaSProviderHarness

    var provider: any VerificationProvider { harness.provider }

    /// A start or a resend answers a slider: the app solves it, and the answer sends the code.
    func completed(_ result: ProviderStartResult, of verification: ProviderVerification) async throws
        -> ProviderStartResult
    {
        guard case .solveChallenge? = result.nextAction else { return result }
        return try await harness.submit(verification, x: try await harness.answer(verification))
    }
}

/// IDaaS through the provider conformance suite: every row of its one vocabulary is answered to the start's
/// first call (the area codes), since IDaaS maps its codes the same on every call.
@Suite("IDaaS provider conformance")
struct IDaaSConformanceTests {
    static let subject: ProviderConformance = {
        var subject = ProviderConformance(
            name: "idaas",
            makeRig: { persistence in
                IDaaSConformanceRig(
                    harness: try IDaaSProviderHarness(base: IDaaSEmulatorHarness(persistence: persistence)))
            },
            // Mainland mobiles +86 138 0000 0000 onwards (clear of the sandbox's special +86 139 numbers).
            destination: ProviderConformance.phones("+8613800", digits: 6),
            rows: IDaaSErrorMapping.table.rows,
            calls: [:], expiresAfter: IDaaSEmulator.defaultCodeLifetime, stateTable: IDaaSEmulatorState.table)
        subject.startsWithReference = false
        // A start's first calls fetch the area codes and the slider: nothing is sent before the app's answer.
        subject.startFailureMaySend = false
        subject.makeRigWithTimeout = { IDaaSConformanceRig(harness: try IDaaSProviderHarness(requestTimeout: $0)) }
        return subject
    }()

    @Test("IDaaS", arguments: ProviderConformance.Check.allCases)
    func conformance(_ check: ProviderConformance.Check) async throws {
        try await Self.subject.run(check)
    }
}

extension IDaaSEmulator: SwitchedEmulator {}
