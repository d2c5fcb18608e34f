import Foundation

/// A provider that verifies and reads the callbacks its vendor sends to `/callbacks/{provider id}/…`. The route
/// answers `404` for a provider without this operation, before any of the callback is read.
public protocol CallbackReceivingProvider: VerificationProvider {
    /// Verifies and reads a callback. A callback whose signature is missing or wrong throws `unauthorized` and
    /// changes nothing. `lookup` finds the verifications a callback names, for vendors that must be answered on
    /// the spot (Sinch's request event is answered allow or deny).
    func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
}
