import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// `/console`: the operator console, a page and its script and style served from the binary
/// (``ConsoleAssets``), and `/console/session`, signing in and out with an `admin` or `read` API key. The
/// page reads the admin API with the session cookie (``APIKeyMiddleware`` takes it on `/v1/admin`, and on
/// `/v1` for reading only). docs/console.md has the pages, the rules and what is not shown.
struct ConsoleController: Sendable {
    let sessions: ConsoleSessions

    /// Every console response: no script, style, image or connection but the gateway's own files, no
    /// framing, no type sniffing, no referrer.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    static func securityHeaders(contentType: String, cache: String = "no-store") -> HTTPFields {
        [
            .contentType: contentType, .contentSecurityPolicy: contentSecurityPolicy, .xFrameOptions: "DENY",
            .xContentTypeOptions: "nosniff", .referrerPolicy: "no-referrer", .cacheControl: cache,
            .crossOriginOpenerPolicy: "same-origin",
        ]
    }

    func addRoutes(to router: some RouterMethods<GatewayRequestContext>) {
        router.get("console") { _, _ in Self.asset(ConsoleAssets.html, type: "text/html; charset=utf-8") }
        router.get("console/console.js") { _, _ in
            Self.asset(ConsoleAssets.script, type: "text/javascript; charset=utf-8", cache: "no-cache")
        }
        router.get("console/console.css") { _, _ in
            Self.asset(ConsoleAssets.style, type: "text/css; charset=utf-8", cache: "no-cache")
        }
        router.get("console/icon.svg") { _, _ in
            Self.asset(ConsoleAssets.icon, type: "image/svg+xml", cache: "no-cache")
        }
        router.get("console/session", use: current)
        router.post("console/session", use: signIn)
        router.delete("console/session", use: signOut)
    }

    static func asset(_ bytes: [UInt8], type: String, cache: String = "no-store") -> Response {
        Response(
            status: .ok, headers: securityHeaders(contentType: type, cache: cache),
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `POST /console/session` `{"key": "<api key>"}`: a new session for an `admin` or `read` key, in an
    /// `HttpOnly`, `SameSite=Strict` cookie (`Secure` over HTTPS); the answer carries the CSRF token.
    @Sendable func signIn(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let type = request.headers[.contentType], JSONBodyMiddleware.isJSON(type) else {
            throw JSONBodyMiddleware.unsupported()
        }
        var request = request
        let reader = try JSONObjectReader(data: try await VerificationsController.body(of: &request, upTo: 4096))
        try reader.rejectUnknown(allowing: ["key"])
        guard let secret = try reader.string("key", required: true, maxLength: 256), !secret.isEmpty else {
            throw GatewayError.invalidRequest("`key` must be an API key (a non-empty string).")
        }
        let (cookie, resolved) = try await sessions.signIn(secret: secret)
        var headers = Self.securityHeaders(contentType: "application/json; charset=utf-8")
        headers[.setCookie] = sessions.setCookie(cookie)
        return Response(
            status: .created, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(data: JSONResponse.encode(Self.json(resolved)))))
    }

    /// `GET /console/session`: `signed_in`, and when signed in the key (id, name, scopes), the expiry and
    /// the CSRF token. Not signed in is a `200` too: the page asks on every load, and a refusal would be an
    /// error in the browser's console.
    @Sendable func current(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var body: JSONValue = ["signed_in": .bool(false)]
        if let secret = ConsoleSessions.cookieSecret(request.headers[values: .cookie]),
            let resolved = try await sessions.resolve(cookieSecret: secret)
        {
            body = Self.json(resolved)
        }
        return Response(
            status: .ok, headers: Self.securityHeaders(contentType: "application/json; charset=utf-8"),
            body: ResponseBody(byteBuffer: ByteBuffer(data: JSONResponse.encode(body))))
    }

    /// `DELETE /console/session` with the CSRF token: ends the session and clears the cookie.
    @Sendable func signOut(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let resolved = try await resolve(request)
        try ConsoleSessions.checkCSRF(request, resolved)
        try await sessions.signOut(resolved)
        var headers = Self.securityHeaders(contentType: "application/json; charset=utf-8")
        headers[.setCookie] = sessions.clearCookie()
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(data: JSONResponse.encode(["signed_out": .bool(true)]))))
    }

    private func resolve(_ request: Request) async throws -> ConsoleSessions.Resolved {
        guard let secret = ConsoleSessions.cookieSecret(request.headers[values: .cookie]),
            let resolved = try await sessions.resolve(cookieSecret: secret)
        else { throw GatewayError(.unauthorized, "Not signed in to the console, or the session has ended.") }
        return resolved
    }

    static func json(_ resolved: ConsoleSessions.Resolved) -> JSONValue {
        [
            "signed_in": .bool(true),
            "key": [
                "id": .string(resolved.key.id), "name": .string(resolved.key.name),
                "scopes": .array(resolved.key.scopes.map(\.rawValue).sorted().map(JSONValue.string)),
            ],
            "expires_at": .string(VerificationsController.timestamp(resolved.session.expiresAt)),
            "csrf_token": .string(resolved.csrfToken),
        ]
    }
}

extension HTTPField.Name {
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    static let crossOriginOpenerPolicy = HTTPField.Name("Cross-Origin-Opener-Policy")!
}
