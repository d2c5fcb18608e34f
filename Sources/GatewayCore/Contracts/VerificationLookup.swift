import Foundation
import HTTPTypes

/// Finds the verification a callback names, among those the provider itself started.
public struct VerificationLookup: Sendable {
    private let find: @Sendable (ProviderUpdate.Target) async throws(GatewayError) -> ProviderVerification?
    private let permitsDestination: @Sendable (Destination) -> Bool

    /// `permits` answers whether the gateway's own policy (its country permissions) allows a destination,
    /// for a vendor that asks before it sends (Sinch's request event); by default every destination is.
    public init(
        _ find: @escaping @Sendable (ProviderUpdate.Target) async throws(GatewayError) -> ProviderVerification?,
        permits: @escaping @Sendable (Destination) -> Bool = { _ in true }
    ) {
        self.find = find
        self.permitsDestination = permits
    }

    /// Whether the gateway's policy allows verifications to `destination` (a blocked country does not).
    public func permits(_ destination: Destination) -> Bool { permitsDestination(destination) }

    /// The verification `target` names, if the provider started it; `nil` when the gateway has none.
    public func callAsFunction(_ target: ProviderUpdate.Target) async throws(GatewayError) -> ProviderVerification? {
        try await find(target)
    }
}
