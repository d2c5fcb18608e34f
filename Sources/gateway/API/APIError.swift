import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// A ``GatewayError`` on its way to the client, rendered in the one error shape:
/// `{"error": {"code", "message", "retryable", "request_id", "attempts_remaining"?, "retry_after"?,
/// "provider"?: {"id", "code", "status"}}}`.
struct APIError: HTTPResponseError {
    var error: GatewayError
    /// Overrides the code's own status where HTTP itself decides (405, 413).
    var statusOverride: HTTPResponse.Status?
    /// Extra response headers (`Allow` with a 405).
    var headers: HTTPFields = [:]

    init(_ error: GatewayError, status: HTTPResponse.Status? = nil) {
        self.error = error
        self.statusOverride = status
    }

    var status: HTTPResponse.Status { statusOverride ?? HTTPResponse.Status(code: error.httpStatus) }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        render(requestID: request.headers[.requestID] ?? "")
    }

    func render(requestID: String) -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        if !requestID.isEmpty { headers[.requestID] = requestID }
        return Response(
            status: status, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(data: body(requestID: requestID))))
    }

    /// The JSON bytes of the error shape.
    func body(requestID: String) -> Data {
        var body: [String: JSONValue] = [
            "code": .string(error.code.rawValue),
            "message": .string(error.message),
            "retryable": .bool(error.isRetryable),
            "request_id": .string(requestID),
        ]
        if let remaining = error.attemptsRemaining { body["attempts_remaining"] = .number(Double(remaining)) }
        if let retryAfter = error.retryAfter { body["retry_after"] = .number(Double(retryAfter)) }
        if let action = error.nextAction { body["next_action"] = action.json }
        if let vendor = error.vendor {
            var provider: [String: JSONValue] = ["id": .string(vendor.providerID)]
            provider["code"] = vendor.code.map(JSONValue.string) ?? .null
            provider["status"] = vendor.httpStatus.map { .number(Double($0)) } ?? .null
            body["provider"] = .object(provider)
        }
        return JSONResponse.encode(.object(["error": .object(body)]))
    }
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-Id")!
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let idempotentReplayed = HTTPField.Name("Idempotent-Replayed")!
}

/// JSON responses with stable key order, so bodies are easy to read and to compare.
enum JSONResponse {
    static func encode(_ value: JSONValue) -> Data {
        // The same bytes JSONEncoder writes, without its cost; it still writes numbers with a fraction.
        if let text = value.sortedJSON { return Data(text.utf8) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    /// JSON text written by hand (a resource answered on every call), sent as it is.
    static func response(text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    static func response(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        // Straight from the written text into the buffer: through `Data` it would be copied twice.
        let buffer = value.sortedJSON.map { ByteBuffer(string: $0) } ?? ByteBuffer(data: encode(value))
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: buffer))
    }
}
