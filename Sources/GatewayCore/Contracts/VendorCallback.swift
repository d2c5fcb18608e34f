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
