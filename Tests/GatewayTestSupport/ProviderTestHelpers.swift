import Foundation
import GatewayCore
import HTTPTypes
import Synchronization
import Testing

/// Passes requests on and keeps a copy of each.
package final class RecordingTransport: HTTPTransport {
    private let next: any HTTPTransport
    private let log = Mutex<[TransportRequest]>([])

    package init(_ next: any HTTPTransport) { self.next = next }

    package var requests: [TransportRequest] { log.withLock { $0 } }

    package func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse
    {
        log.withLock { $0.append(request) }
        return try await next.send(request, timeout: timeout)
    }
}

/// Answers every request with one canned response or transport error, or with what `respond` makes of it.
package struct StubTransport: HTTPTransport {
    package var outcome: Result<TransportResponse, TransportError>
    private var respond: (@Sendable (TransportRequest) throws(TransportError) -> TransportResponse)?

    package init(outcome: Result<TransportResponse, TransportError>) { self.outcome = outcome }

    /// Answers each request with `respond`'s answer (one that depends on the request, or counts the calls).
    package init(_ respond: @escaping @Sendable (TransportRequest) throws(TransportError) -> TransportResponse) {
        self.outcome = .failure(.connectFailed("no answer"))
        self.respond = respond
    }

    /// A fixed answer with a JSON (or `contentType`) body.
    package static func answer(
        status: Int, body: String, contentType: String = "application/json", headers: HTTPFields = [:]
    ) -> StubTransport {
        var fields = headers
        fields[.contentType] = contentType
        return StubTransport(
            outcome: .success(
                TransportResponse(
                    status: HTTPResponse.Status(code: status), headerFields: fields, body: Data(body.utf8))))
    }

    package static func failing(_ error: TransportError) -> StubTransport { StubTransport(outcome: .failure(error)) }

    package func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse
    {
        if let respond { return try respond(request) }
        return try outcome.get()
    }
}

/// Receives an emulator's callbacks as the gateway's callback route would, answering 200.
package final class CallbackSink: HTTPTransport {
    private let received = Mutex<[TransportRequest]>([])

    package init() {}

    package var requests: [TransportRequest] { received.withLock { $0 } }

    package func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse
    {
        received.withLock { $0.append(request) }
        return TransportResponse(status: .ok)
    }

    /// The callbacks as the provider's plugin gets them: the subpath is what follows `/callbacks/{provider id}`.
    package var vendorCallbacks: [VendorCallback] {
        requests.map {
            let parts = $0.url.path.split(separator: "/", omittingEmptySubsequences: false)
            let below = parts.count > 3 && parts[1] == "callbacks" ? parts[3...].joined(separator: "/") : ""
            return VendorCallback(
                method: $0.method, url: $0.url, subpath: "/" + below, query: $0.url.query,
                headerFields: $0.headerFields,
                body: $0.body)
        }
    }
}

/// Expects `body` to throw a ``GatewayError`` with `code`, and returns it.
@discardableResult
package func expectGatewayError<Value>(
    _ code: GatewayError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Value
) async -> GatewayError? {
    do {
        let value = try await body()
        Issue.record("expected `\(code.rawValue)`, but it returned \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as GatewayError {
        #expect(error.code == code, "expected `\(code.rawValue)`, got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected `\(code.rawValue)`, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

extension StartLookupResult {
    /// What the start returned, when the lookup found it; `nil` otherwise (`try #require(answer.foundStart)`).
    package var foundStart: ProviderStartResult? {
        guard case .found(let result) = self else { return nil }
        return result
    }
}
