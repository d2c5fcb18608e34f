import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

import struct NIOCore.NIOTooManyBytesError

/// `/v1/verifications`: start, check, resend, cancel, get (docs/design.md §4).
struct VerificationsController: Sendable {
    let service: VerificationService
    let signer: VerificationTokenSigner
    /// Mints the `client_secret` a start answers (its hash is in the record); `nil`: starts answer none.
    var clientSecrets: ClientSecrets? = nil
    /// A header a trusted proxy sets to the client's address (`X-Forwarded-For`); without one, the
    /// connection's own peer address is the client IP for per-IP limits.
    var trustedProxyHeader: HTTPField.Name? = nil

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("verifications", use: start)
        group.get("verifications/{id}", use: get)
        group.post("verifications/{id}/check", use: check)
        group.post("verifications/{id}/resend", use: resend)
        group.post("verifications/{id}/cancel", use: cancel)
        group.post("verifications/{id}/challenge", use: challenge)
        group.post("providers/{provider}/actions/{action}", use: action)
    }

    // MARK: start

    static let startFields: Set<String> = [
        "to", "channel", "locales", "app_verification", "code_length", "client_ref", "metadata", "provider",
        "region", "fallback_channels", "client_context", "channel_options", "multi_factor",
    ]

    @Sendable func start(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let body = try await Self.body(of: &request, context: context)
        let clientIP = clientIP(request, context: context)
        let idempotencyKey = try Self.idempotencyKey(request, context: context)
        guard let idempotencyKey else {
            return JSONResponse.response(
                withClientSecret(try await startBody(body: body, clientIP: clientIP, context: context)),
                status: .created)
        }
        let answer = try await service.startKeyed(
            { try Self.parseStart(body) }, key: idempotencyKey, fingerprint: Hex.lowercase(SHA256.hash(data: body)),
            caller: caller(context, clientIP: clientIP), render: { Self.render($0, now: service.clock.now) },
            // Kept without the client secret: a replay derives it again (``replay(_:)``).
            keep: { StoredResponse(status: 201, body: JSONResponse.encode($0)) },
            refusal: { error in
                let apiError = APIError(error)
                return StoredResponse(
                    status: Int(apiError.status.code), body: apiError.body(requestID: context.requestID))
            })
        switch answer {
        case .started(let started): return JSONResponse.response(withClientSecret(started), status: .created)
        case .replayed(let stored): return replay(stored)
        }
    }

    /// A stored answer, replayed; a started verification's with its client secret, derived again from its id.
    private func replay(_ stored: StoredResponse) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        headers[.idempotentReplayed] = "true"
        var body = stored.body
        if stored.status == 201, let started = JSONValue.parse(stored.body) {
            body = JSONResponse.encode(withClientSecret(started))
        }
        return Response(
            status: HTTPResponse.Status(code: stored.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(data: body)))
    }

    /// A start's answer with the verification's `client_secret`, for the app's steps (shown to the API key's
    /// holder only: the record keeps its hash, the idempotency key's stored answer nothing of it).
    private func withClientSecret(_ started: JSONValue) -> JSONValue {
        guard let clientSecrets, case .object(var fields) = started, case .string(let id)? = fields["id"] else {
            return started
        }
        fields["client_secret"] = .string(clientSecrets.secret(for: id))
        return .object(fields)
    }

    /// A start without an `Idempotency-Key`: parsed, started, rendered.
    private func startBody(body: Data, clientIP: String?, context: GatewayRequestContext) async throws -> JSONValue {
        let start = try Self.parseStart(body)
        let caller = caller(context, clientIP: clientIP)
        let record = try await service.start(
            start, apiKeyID: caller.apiKeyID, apiKeyName: caller.apiKeyName, clientIP: caller.clientIP,
            keyCountries: caller.keyCountries, keyLimit: caller.keyLimit)
        return Self.render(record, now: service.clock.now)
    }

    /// The starting API key and client, as the engine's limits and the record need them.
    private func caller(_ context: GatewayRequestContext, clientIP: String?) -> StartCaller {
        StartCaller(
            apiKeyID: context.apiKey?.id, apiKeyName: context.apiKey?.name, clientIP: clientIP,
            keyCountries: context.apiKey?.countries,
            keyLimit: context.apiKey?.startsPerHour.map { RateLimit(limit: $0, window: 3600) })
    }
}
