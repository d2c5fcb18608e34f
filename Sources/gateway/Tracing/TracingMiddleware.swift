import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import Instrumentation
import Tracing

/// The server span of each API request (docs/operations.md, "Traces"): the caller's `traceparent` continued, named
/// by the route's pattern (`POST /v1/verifications/{id}/check`), with the HTTP semantic conventions' method, route
/// and status, the verification id a route names under `verification.id`, and the trace id in the request's logs.
/// Never the path itself, whose segments can be a phone number (`/v1/phone-numbers/{number}`), nor the query.
struct TracingMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let tracer: GatewayTracer

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var incoming = ServiceContext.current ?? .topLevel
        tracer.extract(request.headers, into: &incoming, using: HTTPFieldsExtractor())
        let span = tracer.startSpan(request.method.rawValue, context: incoming, ofKind: .server)
        defer { span.end() }
        var context = context
        context.logger[metadataKey: "trace_id"] = .string(span.trace.traceIDHex)
        return try await ServiceContext.withValue(span.context) {
            try await StoreTracing.$tracer.withValue(tracer) {
                do {
                    let response = try await next(request, context)
                    finish(span, request: request, context: context, status: Int(response.status.code))
                    return response
                } catch {
                    let status = (error as? any HTTPResponseError)?.status.code ?? 500
                    finish(span, request: request, context: context, status: Int(status))
                    span.recordError(error)
                    throw error
                }
            }
        }
    }

    private func finish(_ span: GatewaySpan, request: Request, context: Context, status: Int) {
        guard span.isRecording else { return }
        let route = context.endpointPath
        span.operationName = request.method.rawValue + (route.map { " " + $0 } ?? "")
        span.updateAttributes { attributes in
            attributes["http.request.method"] = request.method.rawValue
            if let route { attributes["http.route"] = route }
            attributes["http.response.status_code"] = status
            attributes["url.scheme"] = request.uri.scheme?.rawValue ?? "http"
            if let id = Self.verificationID(path: request.uri.path, route: route) {
                attributes["verification.id"] = id
            }
        }
        if status >= 500 { span.setStatus(SpanStatus(code: .error, message: "HTTP \(status)")) }
    }

    /// The value of a route's `{id}` under `/v1/verifications/`, when it looks like a verification id.
    static func verificationID(path: String, route: String?) -> String? {
        guard let route, route.hasPrefix("/v1/verifications/{id}") else { return nil }
        let segments = path.split(separator: "/")
        guard segments.count >= 3, segments[2].hasPrefix("vf_"), segments[2].count <= 64 else { return nil }
        return String(segments[2])
    }
}

/// Reads `traceparent` and `tracestate` from a request's fields.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}

/// A vendor call's (or a webhook's) client span around the transport, with the W3C `traceparent` (and the caller's
/// `tracestate`) added to the request: named `POST api.twilio.com`, with the method, `server.address`,
/// `server.port` and the answer's status; an answer of 400 or more, or none, is an error. Never the URL's path or
/// query, which may carry a number.
struct TracingTransport: HTTPTransport {
    let base: any HTTPTransport
    let tracer: GatewayTracer
    static let traceparent = HTTPField.Name("traceparent")!
    static let tracestate = HTTPField.Name("tracestate")!

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        let host = request.url.host() ?? "unknown"
        let span = tracer.startSpan(
            request.method.rawValue + " " + host, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        defer { span.end() }
        var request = request
        request.headerFields[Self.traceparent] = span.trace.traceparent
        if let state = span.trace.traceState { request.headerFields[Self.tracestate] = state }
        if span.isRecording {
            span.updateAttributes { attributes in
                attributes["http.request.method"] = request.method.rawValue
                attributes["server.address"] = host
                if let port = request.url.port { attributes["server.port"] = port }
            }
        }
        do {
            let response = try await base.send(request, timeout: timeout)
            if span.isRecording {
                span.attributes["http.response.status_code"] = Int(response.status.code)
                if response.status.code >= 400 {
                    span.setStatus(SpanStatus(code: .error, message: "HTTP \(response.status.code)"))
                }
            }
            return response
        } catch {
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: "no answer"))
            throw error
        }
    }
}

/// Store calls as client spans of the request they serve (`store <operation>`, with `db.system.name` and
/// `db.operation.name`), when traces are on: the server middleware puts its tracer in this task-local, so the
/// stores need no tracer of their own and read one task-local per call when traces are off.
enum StoreTracing {
    @TaskLocal static var tracer: GatewayTracer?

    static func traced<Value>(
        _ operation: String, system: String, _ body: () async throws(GatewayError) -> Value
    ) async throws(GatewayError) -> Value {
        guard let tracer else { return try await body() }
        let span = tracer.startSpan(
            "store " + operation, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        defer { span.end() }
        if span.isRecording {
            span.updateAttributes { attributes in
                attributes["db.system.name"] = system
                attributes["db.operation.name"] = operation
            }
        }
        do {
            return try await body()
        } catch {
            if span.isRecording {
                span.attributes["error.type"] = error.code.rawValue
                span.setStatus(SpanStatus(code: .error, message: error.code.rawValue))
            }
            throw error
        }
    }
}
