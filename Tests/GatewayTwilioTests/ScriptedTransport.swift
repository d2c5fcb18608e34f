import Foundation
import GatewayCore
import HTTPTypes
import Synchronization

/// Answers requests from a queue of canned responses, oldest first, and keeps a copy of each request.
final class ScriptedTransport: HTTPTransport {
    private struct State {
        var answers: [TransportResponse]
        var requests: [TransportRequest] = []
    }

    private let state: Mutex<State>

    init(_ answers: [TransportResponse]) { state = Mutex(State(answers: answers)) }

    var requests: [TransportRequest] { state.withLock { $0.requests } }

    static func response(status: Int, json: String) -> TransportResponse {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return TransportResponse(
            status: HTTPResponse.Status(code: status), headerFields: headers, body: Data(json.utf8))
    }

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        let answer: TransportResponse? = state.withLock { state in
            state.requests.append(request)
            return state.answers.isEmpty ? nil : state.answers.removeFirst()
        }
        guard let answer else { throw .connectFailed("no scripted answer left") }
        return answer
    }
}
