import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// Refuses with `415` a request body that is not declared `application/json`.
///
/// The rule (also in the OpenAPI description): on `POST`, `PUT` and `PATCH`, a `Content-Type` that is
/// present must be `application/json` (parameters such as `charset=utf-8` are fine); without one, the
/// body must be empty. So an empty-bodied resend, cancel or provider action needs no header, while a
/// form-encoded or untyped body never gets read as JSON by accident. Mounted on the API groups only:
/// the emulators under `/sandbox/<plugin>/` and the vendor callbacks under `/callbacks/` take what the
/// vendors send (form-encoded bodies).
struct JSONBodyMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard [.post, .put, .patch].contains(request.method) else { return try await next(request, context) }
        if let contentType = request.headers[.contentType] {
            guard Self.isJSON(contentType) else { throw Self.unsupported() }
            return try await next(request, context)
        }
        if let length = request.headers[.contentLength], length.allSatisfy(\.isNumber), Int(length) == 0 {
            return try await next(request, context)
        }
        // No type and no length of zero: read what came (bounded) to see whether there is a body at all.
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: context.maxUploadSize)
        } catch {
            throw Self.unsupported()
        }
        guard body.readableBytes == 0 else { throw Self.unsupported() }
        return try await next(request, context)
    }

    /// `application/json`, any case, with or without parameters.
    /// Read as bytes: the media type is ASCII, and this runs on every API request with a body (Foundation's
    /// `trimmingCharacters` and a lowercased copy cost more; BENCHMARKS.md has the figure).
    static func isJSON(_ contentType: String) -> Bool {
        let expected = "application/json".utf8
        var utf8 = contentType.utf8[...]
        if let semicolon = utf8.firstIndex(of: UInt8(ascii: ";")) { utf8 = utf8[..<semicolon] }
        let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        while let first = utf8.first, isBlank(first) { utf8 = utf8.dropFirst() }
        while let last = utf8.last, isBlank(last) { utf8 = utf8.dropLast() }
        guard utf8.count == expected.count else { return false }
        // ASCII letters lowercased by setting 0x20; the other bytes of the expected type ('/') must match exactly.
        return zip(utf8, expected).allSatisfy { byte, want in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == want : byte == want
        }
    }

    static func unsupported() -> APIError {
        APIError(
            GatewayError(
                .invalidRequest, "Send the request body as JSON with `Content-Type: application/json`."),
            status: .unsupportedMediaType)
    }
}
