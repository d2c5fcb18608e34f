import Foundation
import GatewayCore
import HTTPTypes

/// Answers every request with one canned response or transport error.
struct StubTransport: HTTPTransport {
    var outcome: Result<TransportResponse, TransportError>

    static func answer(status: Int, body: String, headers: HTTPFields = [:]) -> StubTransport {
        StubTransport(
            outcome: .success(
                TransportResponse(
                    status: HTTPResponse.Status(code: status), headerFields: headers, body: Data(body.utf8))))
    }

    static func failing(_ error: TransportError) -> StubTransport { StubTransport(outcome: .failure(error)) }

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        try outcome.get()
    }
}
