import Foundation
import HTTPTypes

/// An outbound HTTP request a plugin sends to its vendor.
public struct TransportRequest: Sendable {
    public var method: HTTPRequest.Method
    public var url: URL
    public var headerFields: HTTPFields
    public var body: Data

    public init(method: HTTPRequest.Method, url: URL, headerFields: HTTPFields = [:], body: Data = Data()) {
        self.method = method
        self.url = url
        self.headerFields = headerFields
        self.body = body
    }
}

/// The vendor's answer.
public struct TransportResponse: Sendable {
    public var status: HTTPResponse.Status
    public var headerFields: HTTPFields
    public var body: Data

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
    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse
}
