import Foundation
import HTTPTypes

/// A request a vendor sent to the gateway's callback route, `/callbacks/{provider id}/…`, handed raw to
/// the provider's plugin so it can check the vendor's signature over exactly what arrived.
public struct VendorCallback: Sendable {
    public var method: HTTPRequest.Method
    /// The URL the vendor called, built from the configured public base URL, the path and the query
    /// (Twilio signs the full URL).
    public var url: URL
    /// The path after `/callbacks/{provider id}` (`/` when none).
    public var subpath: String
    public var query: String?
    public var headerFields: HTTPFields
    public var body: Data

    public init(
        method: HTTPRequest.Method, url: URL, subpath: String, query: String?, headerFields: HTTPFields, body: Data
    ) {
        self.method = method
        self.url = url
        self.subpath = subpath
        self.query = query
        self.headerFields = headerFields
        self.body = body
    }
}

/// What a plugin made of a callback: updates to apply, and the answer the vendor expects.
public struct CallbackReply: Sendable {
    public var updates: [ProviderUpdate]
    /// The HTTP answer to the vendor (Sinch's request event is answered with an allow or deny body).
    public var response: TransportResponse

    public init(updates: [ProviderUpdate], response: TransportResponse = TransportResponse(status: .ok)) {
        self.updates = updates
        self.response = response
    }
}

/// One verification a callback is about, and what changed.
public struct ProviderUpdate: Sendable, Equatable {
    public enum Target: Sendable, Hashable {
        /// The vendor's id (``VerificationRecord/providerReference``).
        case reference(String)
        /// The gateway's id, which the vendor echoes where it takes a reference of ours.
        case verificationID(String)
    }

    public var target: Target
    public var change: VerificationChange

    public init(target: Target, change: VerificationChange) {
        self.target = target
        self.change = change
    }
}

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

    public func callAsFunction(_ target: ProviderUpdate.Target) async throws(GatewayError) -> ProviderVerification? {
        try await find(target)
    }
}
