import Foundation
import HTTPTypes

/// An outbound HTTP request a plugin sends to its vendor.
public struct TransportRequest: Sendable {
    /// The HTTP method.
    public var method: HTTPRequest.Method
    /// The full URL, query included.
    public var url: URL
    /// The request's header fields.
    public var headerFields: HTTPFields
    /// The request body; empty for none.
    public var body: Data

    /// A request with no header fields and no body unless given.
    public init(method: HTTPRequest.Method, url: URL, headerFields: HTTPFields = [:], body: Data = Data()) {
        self.method = method
        self.url = url
        self.headerFields = headerFields
        self.body = body
    }
}

/// The vendor's answer.
public struct TransportResponse: Sendable {
    /// The HTTP status the vendor answered with.
    public var status: HTTPResponse.Status
    /// The response's header fields.
    public var headerFields: HTTPFields
    /// The response body; empty when the vendor sent none.
    public var body: Data

    /// A response with no header fields and no body unless given.
    public init(status: HTTPResponse.Status, headerFields: HTTPFields = [:], body: Data = Data()) {
        self.status = status
        self.headerFields = headerFields
        self.body = body
    }
}

/// Why a request got no HTTP response at all.
public enum TransportError: Error, Sendable, Equatable {
    /// No answer within the deadline; the vendor may or may not have acted on the request.
    case timeout
    /// The connection could not be made; the vendor never saw the request.
    case connectFailed(String)
    /// The connection broke after the request was sent; the vendor may have acted on it.
    case connectionReset(String)
}

/// The one-method outbound HTTP interface of the core (docs/design.md §3).
///
/// The executable implements it over AsyncHTTPClient; tests implement it with an in-process emulator.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the vendor's answer, whatever its status; throws only when no answer arrives
    /// within `timeout`, and the case says whether the vendor can have seen the request.
    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse
}
