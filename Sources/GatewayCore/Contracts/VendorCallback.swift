import Foundation
import HTTPTypes

/// A request a vendor sent to the gateway's callback route, `/callbacks/{provider id}/…`, handed raw to
/// the provider's plugin so it can check the vendor's signature over exactly what arrived.
public struct VendorCallback: Sendable {
    /// The HTTP method (callbacks are `POST`).
    public var method: HTTPRequest.Method
    /// The URL the vendor called, built from the configured public base URL, the path and the query
    /// (Twilio signs the full URL).
    public var url: URL
    /// The path after `/callbacks/{provider id}` (`/` when none).
    public var subpath: String
    /// The query string as it arrived, without the `?`; `nil` when the URL has none.
    public var query: String?
    /// The request's header fields, the vendor's signature header among them.
    public var headerFields: HTTPFields
    /// The body, byte for byte as it arrived.
    public var body: Data

    /// A callback as the gateway's callback route received it.
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
    /// The changes to apply, one per verification the callback names; empty when it changes nothing.
    public var updates: [ProviderUpdate]
    /// The HTTP answer to the vendor (Sinch's request event is answered with an allow or deny body).
    public var response: TransportResponse

    /// A reply applying `updates` and answering the vendor `200 OK` with no body unless told.
    public init(updates: [ProviderUpdate], response: TransportResponse = TransportResponse(status: .ok)) {
        self.updates = updates
        self.response = response
    }
}

/// One verification a callback is about, and what changed.
public struct ProviderUpdate: Sendable, Equatable {
    /// How a callback names its verification.
    public enum Target: Sendable, Hashable {
        /// The vendor's id (``VerificationRecord/providerReference``).
        case reference(String)
        /// The gateway's id, which the vendor echoes where it takes a reference of ours.
        case verificationID(String)
    }

    /// The verification the update is about.
    public var target: Target
    /// What changed at the vendor.
    public var change: VerificationChange

    /// An update of the verification `target` names.
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

    /// The verification `target` names, if the provider started it; `nil` when the gateway has none.
    public func callAsFunction(_ target: ProviderUpdate.Target) async throws(GatewayError) -> ProviderVerification? {
        try await find(target)
    }
}
