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
    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return mediaType.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }

    static func unsupported() -> APIError {
        APIError(
            GatewayError(
                .invalidRequest, "Send the request body as JSON with `Content-Type: application/json`."),
            status: .unsupportedMediaType)
    }
}
