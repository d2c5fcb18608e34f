import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id and turns every error, from any layer, into the one error shape.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    /// The routes the router serves, to tell a wrong method (`405` with `Allow`) from a wrong path (`404`).
    var routes = RouteTable()
    /// Whether the Twilio-compatible front door is served: then a path under `/twilio` that no route serves
    /// is answered in Twilio's error shape (docs/twilio-compat.md).
    var twilioCompat = false

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let incoming = request.headers[.requestID]
        context.requestID =
            incoming.flatMap {
                $0.count <= 64 && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
                    ? $0 : nil
            }
            ?? Self.newRequestID()
        context.logger[metadataKey: "request.id"] = .string(context.requestID)
        let requestID = context.requestID
        let began = ContinuousClock.now
        // Longer URIs than the decoder's field limit never get here (HTTPParseErrorHandler answers them).
        if request.uri.description.utf8.count > HTTPParseErrorHandler.maxRequestLineLength {
            return HTTPParseErrorHandler.uriTooLong.render(requestID: requestID)
        }
        do {
            var response = try await RequestScope.$requestID.withValue(requestID) { try await next(request, context) }
            response.headers[.requestID] = requestID
            context.logger.info(
                "request",
                metadata: [
                    "http.method": "\(request.method)", "http.path": "\(Self.routeForLog(request.uri.path))",
                    "http.status": "\(response.status.code)", "duration_ms": "\(Self.milliseconds(since: began))",
                ])
            return response
        } catch let error as APIError {
            log(error.error, request: request, context: context)
            return error.render(requestID: requestID)
        } catch let error as GatewayError {
            log(error, request: request, context: context)
            return APIError(error).render(requestID: requestID)
        } catch let error as HTTPError {
            if twilioCompat, TwilioCompatRoutes.owns(request.uri.path),
                let twilio = TwilioCompatError.from(error, request: request, routes: routes)
            {
                log(twilio.error, request: request, context: context)
                return twilio.response(requestID: requestID)
            }
            let apiError: APIError
            switch error.status {
            case .notFound:
                if let allow = routes.allowHeader(forPath: request.uri.path) {
                    var notAllowed = APIError(
                        GatewayError(.invalidRequest, "Method \(request.method) is not allowed here; use \(allow)."),
                        status: .methodNotAllowed)
                    notAllowed.headers[.allow] = allow
                    apiError = notAllowed
                } else {
                    apiError = APIError(
                        GatewayError(.notFound, "No such endpoint: \(request.method) \(request.uri.path)."))
                }
            case .methodNotAllowed:
                apiError = APIError(
                    GatewayError(.invalidRequest, "Method \(request.method) is not allowed here."),
                    status: .methodNotAllowed)
            case .contentTooLarge:
                apiError = APIError(
                    GatewayError(.invalidRequest, "The request body is too large."), status: .contentTooLarge)
            case .unauthorized:
                apiError = APIError(GatewayError(.unauthorized, "Missing or invalid API key."))
            default:
                let code: GatewayError.Code = error.status.code >= 500 ? .internal : .invalidRequest
                apiError = APIError(GatewayError(code, "The request could not be handled."), status: error.status)
            }
            log(apiError.error, request: request, context: context)
            return apiError.render(requestID: requestID)
        } catch {
            context.logger.error("unhandled error", metadata: ["error.type": "\(String(reflecting: type(of: error)))"])
            return APIError(GatewayError.internal()).render(requestID: requestID)
        }
    }

    private func log(_ error: GatewayError, request: Request, context: Context) {
        let level: Logger.Level = error.code == .internal ? .error : .info
        context.logger.log(
            level: level, "request failed",
            metadata: [
                "http.method": "\(request.method)", "http.path": "\(Self.routeForLog(request.uri.path))",
                "error.code": "\(error.code.rawValue)", "vendor.code": "\(error.vendor?.code ?? "-")",
            ])
    }

    /// Paths carry verification ids, not personal data, except the phone-number lookup.
    static func routeForLog(_ path: String) -> String {
        path.hasPrefix("/v1/phone-numbers/") ? "/v1/phone-numbers/{number}" : path
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int64 {
        let elapsed = ContinuousClock.now - start
        return elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }

    static func newRequestID() -> String {
        var generator = SystemRandomNumberGenerator()
        return "req_" + String(generator.next() as UInt64, radix: 16)
    }
}

/// Requires `Authorization: Bearer <api key>` with the given scope, or, on the app-side steps of one
/// verification, that verification's client secret (``ClientSecrets``), or, where the group takes them, the
/// operator console's session cookie (``ConsoleSessions``): its key's scopes apply, and a request that is not
/// a `GET` or `HEAD` must carry the session's `X-CSRF-Token`.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let keyring: APIKeyring
    let scope: APIKey.Scope
    /// Keys made with `gateway keys create`, looked up when the configuration's keys do not match.
    var store: (any APIKeyStore)? = nil
    /// Where a client secret's verification is read; `nil`: client secrets are refused (`403`).
    var verifications: VerificationService? = nil
    /// The header the client's address is read from behind a trusted proxy (`rate_limits.trusted_proxy_header`),
    /// for the per-IP limit of client-secret requests.
    var trustedProxyHeader: HTTPField.Name? = nil
    /// Console sessions this group accepts when no `Authorization` header is sent.
    var sessions: ConsoleSessions? = nil
    /// Whether a console session may only read (`GET`, `HEAD`) in this group.
    var sessionsOnlyRead = false
    /// Whether a `read` key may `GET` where the group needs `admin` (the admin API: yes; `/metrics`: no).
    var readKeysReadAdmin = false

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            if let sessions, let secret = ConsoleSessions.cookieSecret(request.headers[values: .cookie]) {
                let key = try await sessionKey(sessions, secret: secret, request: request)
                return try await next(request, authorized(key, request: request, context: context))
            }
            throw APIError(GatewayError(.unauthorized, "Send your API key as `Authorization: Bearer <key>`."))
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw APIError(GatewayError(.unauthorized, "Missing or invalid API key."))
        }
        let secret = String(parts[1])
        if secret.hasPrefix(ClientSecrets.prefix) {
            // Every request that presents a client secret counts against its IP's limit, refused ones too.
            try await verifications?.countClientSecretRequest(
                clientIP: VerificationsController.clientIP(
                    request, context: context, trustedProxyHeader: trustedProxyHeader))
            let grant = try await ClientSecrets.authorize(
                secret, request: request, scope: scope, service: verifications)
            var context = context
            context.clientSecret = grant
            context.logger[metadataKey: "client_secret.verification"] = .string(grant.verificationID)
            return try await next(request, context)
        }
        var found = keyring.key(forSecret: secret)
        if found == nil, let store { found = try await store.apiKey(hash: APIKeyring.hash(secret)) }
        guard let key = found else {
            throw APIError(GatewayError(.unauthorized, "Missing or invalid API key."))
        }
        return try await next(request, authorized(key, request: request, context: context))
    }

    /// The context with `key`, when its scopes allow the request.
    private func authorized(_ key: APIKey, request: Request, context: Context) throws -> Context {
        // A `read` key may read wherever the group needs `verify`, and the admin API; `admin` may do everything.
        let readOnly =
            request.method == .get && key.scopes.contains(.read) && (scope == .verify || readKeysReadAdmin)
        guard key.scopes.contains(scope) || key.scopes.contains(.admin) || readOnly else {
            throw APIError(GatewayError(.forbidden, "This API key lacks the `\(scope.rawValue)` scope."))
        }
        var context = context
        context.apiKey = key
        context.logger[metadataKey: "api_key.id"] = .string(key.id)
        return context
    }

    /// The key of the console session `secret` names; what changes state must also carry its CSRF token.
    private func sessionKey(_ sessions: ConsoleSessions, secret: String, request: Request) async throws -> APIKey {
        guard let resolved = try await sessions.resolve(cookieSecret: secret) else {
            throw APIError(GatewayError(.unauthorized, "The console session has ended; sign in again."))
        }
        if request.method != .get && request.method != .head {
            if sessionsOnlyRead {
                throw APIError(GatewayError(.forbidden, "A console session may only read here."))
            }
            try ConsoleSessions.checkCSRF(request, resolved)
        }
        return resolved.key
    }
}
