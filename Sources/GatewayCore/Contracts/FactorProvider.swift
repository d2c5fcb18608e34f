import Foundation

/// A provider whose vendor keeps device factors (Twilio Verify Push), served by `/v1/factors`. A provider
/// adopts it beside ``VerificationProvider``; the API finds it with a cast, so nothing else changes.
public protocol FactorProvider: Sendable {
    /// The provider instance id.
    var id: String { get }

    /// A token the app's SDK enrols a factor with, for `identity`. `ttlSeconds` within the vendor's range.
    func createFactorAccessToken(identity: String, friendlyName: String?, ttlSeconds: Int?) async throws(GatewayError)
        -> FactorAccessToken

    /// The identity's factors, oldest first; none (not an error) for an identity the vendor does not know.
    func listFactors(identity: String) async throws(GatewayError) -> [DeviceFactor]

    /// One factor of the identity; `not_found` when it has no such factor.
    func fetchFactor(identity: String, id: String) async throws(GatewayError) -> DeviceFactor

    /// Removes a factor; `not_found` when the identity has no such factor.
    func deleteFactor(identity: String, id: String) async throws(GatewayError)
}
