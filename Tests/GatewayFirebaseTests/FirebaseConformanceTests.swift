import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayFirebase

/// The Firebase harness as the conformance suite drives it.
struct FirebaseConformanceRig: HarnessConformanceRig {
    let harness: FirebaseHarness

    var provider: any VerificationProvider { harness.provider }
}

/// Firebase phone sign-in through the provider conformance suite. Every row, in both vocabularies (server
/// strings and Google-level reasons), is answered to the start's `sendVerificationCode`: Identity Toolkit maps
/// its strings the same on every method.
@Suite("Firebase provider conformance")
struct FirebaseConformanceTests {
    static let subject: ProviderConformance = {
        var subject = ProviderConformance(
            name: "firebase",
            makeRig: { persistence in
                // A resend sends at once (no FirebaseUI wait), with the proof the suite carries.
                FirebaseConformanceRig(
                    harness: try FirebaseHarness(settings: ["resend_after_seconds": "0"], persistence: persistence))
            },
            // UK mobiles +44 7400 000000 onwards: none is one of the sandbox's test numbers.
            destination: ProviderConformance.phones("+447400", digits: 6),
            rows: FirebaseErrorMapping.rows, calls: [:], expiresAfter: FirebaseEmulator.defaultCodeLifetime,
            stateTable: FirebaseEmulatorState.table)
        subject.appVerification = .recaptcha
        subject.makeRigWithTimeout = { FirebaseConformanceRig(harness: try FirebaseHarness(requestTimeout: $0)) }
        return subject
    }()

    @Test("Firebase", arguments: ProviderConformance.Check.allCases)
    func conformance(_ check: ProviderConformance.Check) async throws {
        try await Self.subject.run(check)
    }
}

extension FirebaseEmulator: SwitchedEmulator {}
