import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Turns a request to `/callbacks/{provider id}/…` into a ``VendorCallback`` for the provider's plugin,
/// and the plugin's reply into the answer the vendor gets. Shared by the HTTP route and the sandbox's
/// in-process callbacks (``SandboxInProcessTransport``).
struct CallbackReceiver: Sendable {
    static let prefix = "/callbacks/"

    let service: VerificationService
    /// The gateway's public base URL, so a plugin can check a signature over the URL the vendor called.
    let publicBaseURL: URL

    func receive(
        method: HTTPRequest.Method, path: String, query: String?, headerFields: HTTPFields, body: Data
    ) async throws -> TransportResponse {
        let rest = path.dropFirst(Self.prefix.count)
        let providerID = String(rest.prefix { $0 != "/" })
        guard !providerID.isEmpty, let provider = service.registry.provider(providerID) else {
            throw GatewayError(.notFound, "No provider takes callbacks at \(Self.prefix)\(providerID).")
        }
        // A user's browser arriving by redirect (CAMARA's authorization answer) comes with GET; other providers
        // take no GET at all: for them no such resource exists.
        let redirects = provider is any RedirectReceivingProvider
        if method == .get, !redirects {
            throw GatewayError(
                .notFound, "Provider `\(providerID)` takes no browser redirects; its callbacks are POST requests.")
        }
        guard method == .post || method == .get else {
            var error = APIError(
                GatewayError(
                    .invalidRequest, redirects ? "Callbacks are GET or POST requests." : "Callbacks are POST requests."),
                status: .methodNotAllowed)
            error.headers = [.allow: redirects ? "GET, POST" : "POST"]
            throw error
        }
        let subpath = String(rest.dropFirst(providerID.count))
        var url = publicBaseURL.appending(path: String(path.dropFirst()), directoryHint: .notDirectory)
        if let query, !query.isEmpty, let withQuery = URL(string: url.absoluteString + "?" + query) {
            url = withQuery
        }
        let callback = VendorCallback(
            method: method, url: url, subpath: subpath.isEmpty ? "/" : subpath, query: query,
            headerFields: headerFields, body: body)
        return try await service.handleCallback(providerID: providerID, callback).response
    }
}

/// The HTTP route of ``CallbackReceiver``: outside API-key auth, any sub-path.
struct CallbacksMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let receiver: CallbackReceiver

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        guard path.hasPrefix(CallbackReceiver.prefix) else { return try await next(request, context) }
        var request = request
        let body =
            request.method == .post ? try await VerificationsController.body(of: &request, context: context) : Data()
        let reply = try await receiver.receive(
            method: request.method, path: path, query: request.uri.query, headerFields: request.headers, body: body)
        return Response(
            status: reply.status, headers: reply.headerFields,
            body: ResponseBody(byteBuffer: ByteBuffer(data: reply.body)))
    }
}
