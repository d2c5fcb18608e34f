import Foundation

/// Configured test numbers with fixed codes (Firebase's idea, for every vendor and every mode): a start
/// for one never reaches a vendor, nothing is sent or paid for, and the verification says it was a
/// test number (`provider: test_numbers`, `test_number: true`). Checks still count attempts.
struct TestNumberProvider: ResendingProvider, CancelingProvider {
    static let providerID = "test_numbers"

    let codes: [String: String]

    var id: String { Self.providerID }

    var capabilities: ProviderCapabilities {
        ProviderCapabilities(
            channels: Set(Channel.allCases).subtracting([.email, .push, .silentAuth]), resendKeepsCode: true,
            resendCanChangeChannel: true)
    }

    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        ProviderStartResult(reference: nil, sentNothing: true)
    }

    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        guard let expected = codes[verification.destination.value] else {
            // The number was removed from the configuration after the start.
            throw GatewayError(.expired, "This test number is no longer configured; start a new verification.")
        }
        return ProviderCheckResult(status: ConstantTime.equals(code, expected) ? .approved : .pending)
    }

    func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        ProviderStartResult(reference: verification.reference, sentNothing: true)
    }

    func cancel(_ verification: ProviderVerification) async throws(GatewayError) {}
}
