import AsyncHTTPClient
import Foundation
import GatewayCore
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The production ``HTTPTransport``: AsyncHTTPClient with a deadline per call and a cap on response size.
struct AsyncHTTPClientTransport: HTTPTransport {
    let client: HTTPClient
    /// Vendor answers above this size are treated as a broken response.
    var maxResponseBytes = 1 << 20

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        var outbound = HTTPClientRequest(url: request.url.absoluteString)
        outbound.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headerFields {
            outbound.headers.add(name: field.name.rawName, value: field.value)
        }
        if !request.body.isEmpty {
            outbound.body = .bytes(ByteBuffer(data: request.body))
        }
        let deadline = TimeAmount.nanoseconds(
            timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        do {
            let response = try await client.execute(outbound, timeout: deadline)
            var fields = HTTPFields()
            for header in response.headers {
                if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
            }
            let body = try await response.body.collect(upTo: maxResponseBytes)
            return TransportResponse(
                status: HTTPResponse.Status(code: Int(response.status.code)), headerFields: fields,
                body: Data(buffer: body))
        } catch {
            throw Self.classify(error)
        }
    }

    /// Whether the vendor can have seen the request decides the case: a refused or timed-out connect
    /// never reached it; a read timeout or a dropped connection may have.
    static func classify(_ error: any Error) -> TransportError {
        if let error = error as? HTTPClientError {
            if [.deadlineExceeded, .readTimeout, .writeTimeout].contains(error) { return .timeout }
            if [.connectTimeout, .invalidURL, .emptyHost, .emptyScheme].contains(error) {
                return .connectFailed(String(describing: error))
            }
            return .connectionReset(String(describing: error))
        }
        if error is ChannelError {
            return .connectFailed(String(describing: error))
        }
        if let error = error as? IOError, [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH].contains(error.errnoCode) {
            return .connectFailed(String(describing: error))
        }
        return .connectionReset(String(describing: error))
    }
}

import HTTPTypes
