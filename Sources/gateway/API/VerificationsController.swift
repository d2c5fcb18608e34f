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
        let fingerprint = Hex.lowercase(SHA256.hash(data: body))
        let claim = IdempotentStart(key: idempotencyKey)
        let instance = service.leaseOwners?.instanceID
        // The instance of a claim found running, once it is known dead: the next claim takes it over at once.
        var deadOwner: String?
        while true {
            switch try await service.store.claimIdempotencyKey(
                idempotencyKey, fingerprint: fingerprint, token: claim.token, owner: instance, at: service.clock.now,
                lease: service.policy.idempotencyLease, deadOwner: deadOwner)
            {
            case .replay(let stored):
                return replay(stored)
            case .inProgress(let owner):
                if deadOwner == nil, let owner, owner != instance, let leaseOwners = service.leaseOwners,
                    await leaseOwners.isDead(owner)
                {
                    // Its instance died during the start: the claim is this request's to take, now rather than
                    // when its lease lapses (the same rule as a check's lease, docs/architecture.md §9.3).
                    deadOwner = owner
                    continue
                }
                throw GatewayError(
                    .idempotencyConflict, "A request with this Idempotency-Key is still being processed; retry shortly."
                )
            case .mismatch:
                throw GatewayError(
                    .idempotencyConflict, "This Idempotency-Key was already used with a different request body.")
            case .claimed:
                return try await startClaimed(claim, body: body, clientIP: clientIP, context: context)
            case .takenOver(let progress):
                return try await answerTakeover(
                    claim, progress: progress, deadOwner: deadOwner, body: body, clientIP: clientIP, context: context)
            }
        }
    }

    /// A start under an idempotency claim this request holds: its answer is kept for replays, or the claim
    /// is given up so a retry may try again, or (when a vendor may have sent) left for a retry to take over
    /// at once and learn what is known.
    private func startClaimed(
        _ claim: IdempotentStart, body: Data, clientIP: String?, context: GatewayRequestContext
    ) async throws -> Response {
        do {
            let started = try await startBody(body: body, clientIP: clientIP, context: context, idempotency: claim)
            // Kept without the client secret: a replay derives it again (``replay(_:)``).
            try await service.store.completeIdempotencyKey(
                claim.key, token: claim.token, response: StoredResponse(status: 201, body: JSONResponse.encode(started))
            )
            return JSONResponse.response(withClientSecret(started), status: .created)
        } catch let error as GatewayError where error.errorClass == .caller || error.errorClass == .blocked {
            // The same body will fail the same way: keep the answer so a replay gets it without a send. (A
            // claim taken over meanwhile keeps nothing of this request: the write needs the claim's token.)
            let apiError = APIError(error)
            try await service.store.completeIdempotencyKey(
                claim.key, token: claim.token,
                response: StoredResponse(
                    status: Int(apiError.status.code), body: apiError.body(requestID: context.requestID)))
            throw error
        } catch {
            if claim.sendMayHaveHappened {
                // A vendor may have sent: a retry must not send again blindly. It takes the claim over at once
                // and answers the verification if it was stored, else `idempotency_outcome_unknown`.
                try? await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            } else {
                // Nothing was sent and a retry may succeed (vendor down, state changed): free the key.
                try? await service.store.releaseIdempotencyKey(claim.key, token: claim.token)
            }
            throw error
        }
    }

    /// What a request that took over a dead start's claim answers from how far that start got: the
    /// verification it stored or its vendor has (`201`, replayed), a start anew when no vendor was called
    /// or the vendor has nothing and can no longer get the dead call, `idempotency_conflict` while it still
    /// may, and `idempotency_outcome_unknown` when nobody can tell (docs/architecture.md §9.2).
    private func answerTakeover(
        _ claim: IdempotentStart, progress: IdempotencyProgress, deadOwner: String?, body: Data, clientIP: String?,
        context: GatewayRequestContext
    ) async throws -> Response {
        service.logger.notice(
            "idempotency claim taken over",
            metadata: [
                "idempotency.stage": "\(progress.stage)", "verification.id": "\(progress.verificationID ?? "-")",
                "provider.id": "\(progress.providerID ?? "-")", "instance.dead": "\(deadOwner ?? "-")",
            ])
        // A body that does not parse never reached a vendor: the start anew answers (and keeps) the refusal.
        guard let request = try? Self.parseStart(body) else {
            return try await startClaimed(claim, body: body, clientIP: clientIP, context: context)
        }
        let recovery: VerificationService.StartRecovery
        do {
            recovery = try await service.recoverStart(request, progress: progress, apiKeyID: context.apiKey?.id)
        } catch {
            // Left for the next retry to take over at once and ask again.
            try? await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            throw error
        }
        switch recovery {
        case .verification(let record):
            let data = JSONResponse.encode(Self.render(record, now: service.clock.now))
            let stored = StoredResponse(status: 201, body: data)
            try await service.store.completeIdempotencyKey(claim.key, token: claim.token, response: stored)
            return replay(stored)
        case .startAnew(let id):
            let resumed = IdempotentStart(key: claim.key, token: claim.token, resumingID: id)
            return try await startClaimed(resumed, body: body, clientIP: clientIP, context: context)
        case .notYet:
            try await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            throw GatewayError(
                .idempotencyConflict,
                "An earlier request with this Idempotency-Key stopped while its vendor call may still arrive; "
                    + "retry shortly with the same key to learn its outcome.")
        case .unknown:
            // Left for the next retry to take over at once: the verification may still turn up.
            try await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            throw GatewayError(
                .idempotencyOutcomeUnknown,
                "An earlier request with this Idempotency-Key stopped after asking a vendor to send and before its "
                    + "outcome was stored: a code may have reached the user. Do not start again at once: ask the user "
                    + "whether a code arrived; to send one, start with a new Idempotency-Key.")
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

    private func startBody(
        body: Data, clientIP: String?, context: GatewayRequestContext, idempotency: IdempotentStart? = nil
    ) async throws -> JSONValue {
        let start = try Self.parseStart(body)
        let record = try await service.start(
            start, apiKeyID: context.apiKey?.id, apiKeyName: context.apiKey?.name, clientIP: clientIP,
            keyCountries: context.apiKey?.countries,
            keyLimit: context.apiKey?.startsPerHour.map { RateLimit(limit: $0, window: 3600) },
            idempotency: idempotency)
        return Self.render(record, now: service.clock.now)
    }
}
