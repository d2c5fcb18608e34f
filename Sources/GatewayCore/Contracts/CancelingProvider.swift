import Foundation

/// A provider whose vendor can cancel a verification. The engine calls ``cancel(_:)`` only for a verification that
/// sent something; a provider without this operation has its verifications canceled in the gateway alone.
public protocol CancelingProvider: VerificationProvider {
    /// Cancels the verification at the vendor.
    func cancel(_ verification: ProviderVerification) async throws(GatewayError)
}
