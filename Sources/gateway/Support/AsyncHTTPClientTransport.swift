import AsyncHTTPClient
import Foundation
import GatewayCore
import HTTPTypes
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The production ``HTTPTransport``: AsyncHTTPClient with a deadline per call and a cap on response size.
struct AsyncHTTPClientTransport: HTTPTransport {
    let client: HTTPClient
    /// Vendor answers above this size are treated as a broken response.
    var maxResponseBytes = 1 << 20

    /// Sent with AsyncHTTPClient's event-loop API and the whole answer gathered on the event loop
    /// (`ResponseAccumulator`, capped at ``maxResponseBytes``): the calling task resumes once, with the
    /// complete response, instead of once for the head and again for each part of the body as the
    /// `HTTPClientRequest` API does (docs/performance.md, "The vendor call").
    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        let deadline = TimeAmount.nanoseconds(
            timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        do {
            var headers = HTTPHeaders()
            headers.reserveCapacity(request.headerFields.count)
            for field in request.headerFields {
                headers.add(name: field.name.rawName, value: field.value)
            }
            let outbound = try HTTPClient.Request(
                url: request.url, method: HTTPMethod(rawValue: request.method.rawValue),
                headers: headers, body: request.body.isEmpty ? nil : .byteBuffer(ByteBuffer(data: request.body)))
            let task = client.execute(
                request: outbound, delegate: ResponseAccumulator(request: outbound, maxBodySize: maxResponseBytes),
                deadline: .now() + deadline)
            let response = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
            var fields = HTTPFields()
            fields.reserveCapacity(response.headers.count)
            for header in response.headers {
                if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
            }
            return TransportResponse(
                status: HTTPResponse.Status(code: Int(response.status.code)), headerFields: fields,
                body: response.body.map { Data(buffer: $0) } ?? Data())
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
