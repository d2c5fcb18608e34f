import Foundation

/// A provider whose vendor reports a verification's current status. Without this operation a refresh
/// (`GET …?refresh=true`) answers from the store.
public protocol StatusReportingProvider: VerificationProvider {
    /// The vendor's current view of the verification. Never spends an attempt.
    func status(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationChange
}
