import Foundation

/// A provider that can send a verification again. The engine resends only through a provider that adopts this
/// protocol and does not withhold ``ProviderOperations/resend``; any other resend is refused with
/// `invalid_request` before the vendor is called.
public protocol ResendingProvider: VerificationProvider {
    /// Sends again. ``ResendRequest/channel`` is set when the caller (or the next fallback channel) asks for
    /// another channel. A vendor that resends by starting over returns a new reference and state.
    func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
}
