import Foundation

/// Who is starting: the API key and the client, as the rate limits, geo permissions and the record need them.
public struct StartCaller: Sendable {
    /// The API key's id (the verification's owner), or `nil` for a start made by the gateway itself.
    public var apiKeyID: String?
    /// The API key's name, for the record and the logs.
    public var apiKeyName: String?
    /// The client's address, for the per-IP limits.
    public var clientIP: String?
    /// The countries the key may start to; `nil`: every country.
    public var keyCountries: Set<String>?
    /// The key's own limit on starts; `nil`: none beyond the gateway's.
    public var keyLimit: RateLimit?

    /// A caller as the HTTP layer knows it.
    public init(
        apiKeyID: String? = nil, apiKeyName: String? = nil, clientIP: String? = nil,
        keyCountries: Set<String>? = nil, keyLimit: RateLimit? = nil
    ) {
        self.apiKeyID = apiKeyID
        self.apiKeyName = apiKeyName
        self.clientIP = clientIP
        self.keyCountries = keyCountries
        self.keyLimit = keyLimit
    }
}

/// What a start under an `Idempotency-Key` answers: this request's start, rendered, or the answer an earlier
/// request with the key left (its verification, its refusal, or the verification a taken-over start's vendor
/// has), to replay as it was kept.
public enum KeyedStartAnswer<Rendered: Sendable>: Sendable {
    /// This request started the verification; its rendering is kept for the key's replays.
    case started(Rendered)
    /// An earlier request's answer (or the recovered verification's, rendered and kept now).
    case replayed(StoredResponse)
}

/// A start the Twilio front door's create makes: at most one at a time per claim key (its API key, service,
/// `To` and channel), so that creates of one user at the same instant, on one instance or several, start one
/// verification and send once (docs/twilio-compat.md, "Creates at the same instant").
public struct SharedStart: Sendable {
    /// The claim every start of the same target shares (under a scope no `Idempotency-Key` has).
    public var key: IdempotencyKey
    /// The one fingerprint every start of the claim records: a repeated start may differ in its other
    /// parameters, so the front door names a constant of its own.
    public var fingerprint: String
    /// The start to make when there is nothing to resend.
    public var request: StartVerification
    /// Who is starting.
    public var caller: StartCaller
    /// The owner a resend is checked against (``VerificationService/resend(id:request:owner:)``).
    public var owner: String?
    /// Whether a claim never held before lets the start take it in the very write that records its vendor
    /// call (``IdempotentStart/claimsAhead``): true when every verification this key could resend was made
    /// under the claim, so a new claim means nothing is pending and no read needs to look.
    public var claimsAhead: Bool
    /// The pending verification a start for this key sends again rather than starting another (as Twilio
    /// does), or `nil` to start one; read by the claim's holder only.
    public var resendable: @Sendable () async throws -> VerificationRecord?
    /// Whether a pending verification the claim's last holder left answers this start (same target, same
    /// owner): what a start that waited for that holder answers, sending nothing.
    public var answers: @Sendable (VerificationRecord) -> Bool

    /// A shared start; see each property.
    public init(
        key: IdempotencyKey, fingerprint: String, request: StartVerification, caller: StartCaller, owner: String?,
        claimsAhead: Bool, resendable: @escaping @Sendable () async throws -> VerificationRecord?,
        answers: @escaping @Sendable (VerificationRecord) -> Bool
    ) {
        self.key = key
        self.fingerprint = fingerprint
        self.request = request
        self.caller = caller
        self.owner = owner
        self.claimsAhead = claimsAhead
        self.resendable = resendable
        self.answers = answers
    }
}

/// The idempotent start, once for both front doors: the claim, a dead owner's claim taken over at once, the
/// dead start's vendor asked what it did, and the claim completed, released or abandoned as the start ends
/// (docs/architecture.md §9.2). The native API's `Idempotency-Key` keeps its answer for replays
/// (``startKeyed(_:key:fingerprint:caller:render:keep:refusal:)``); the Twilio front door's create claim keeps
/// the verification for the creates that wait on it (``startShared(_:)``).
extension VerificationService {
    /// A start under an `Idempotency-Key` (`fingerprint`: the request body's hash). `parse` reads the request
    /// (a refusal is kept, as any caller error, so a replay gets it without a send); `render` is the answer
    /// this request gives, `keep` what of it replays get, `refusal` how a caller's error is kept.
    public func startKeyed<Rendered: Sendable>(
        _ parse: () throws -> StartVerification, key: IdempotencyKey, fingerprint: String, caller: StartCaller,
        render: (VerificationRecord) -> Rendered, keep: (Rendered) -> StoredResponse,
        refusal: (GatewayError) -> StoredResponse
    ) async throws -> KeyedStartAnswer<Rendered> {
        let claim = IdempotentStart(key: key)
        let instance = leaseOwners?.instanceID
        // The instance of a claim found running, once it is known dead: the next claim takes it over at once.
        var deadOwner: String?
        while true {
            switch try await store.claimIdempotencyKey(
                key, fingerprint: fingerprint, token: claim.token, owner: instance, at: clock.now,
                lease: policy.idempotencyLease, deadOwner: deadOwner)
            {
            case .replay(let stored):
                return .replayed(stored)
            case .inProgress(let owner):
                if deadOwner == nil, await isDeadOwner(owner) {
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
                return .started(
                    try await startKeyedClaimed(
                        claim, parse, caller: caller, render: render, keep: keep, refusal: refusal))
            case .takenOver(let progress):
                return try await answerKeyedTakeover(
                    claim, progress: progress, deadOwner: deadOwner, parse, caller: caller, render: render,
                    keep: keep, refusal: refusal)
            }
        }
    }

    /// Whether the instance holding a claim is another one, known dead (its claim is then taken over at once).
    func isDeadOwner(_ owner: String?) async -> Bool {
        guard let owner, let leaseOwners, owner != leaseOwners.instanceID else { return false }
        return await leaseOwners.isDead(owner)
    }

    /// A keyed start under a claim this request holds: its answer is kept for replays, or the claim is given
    /// up so a retry may try again, or (when a vendor may have sent) left for a retry to take over at once and
    /// learn what is known.
    private func startKeyedClaimed<Rendered: Sendable>(
        _ claim: IdempotentStart, _ parse: () throws -> StartVerification, caller: StartCaller,
        render: (VerificationRecord) -> Rendered, keep: (Rendered) -> StoredResponse,
        refusal: (GatewayError) -> StoredResponse
    ) async throws -> Rendered {
        do {
            let record = try await start(try parse(), caller: caller, idempotency: claim)
            let rendered = render(record)
            try await store.completeIdempotencyKey(claim.key, token: claim.token, response: keep(rendered))
            return rendered
        } catch let error as GatewayError where error.errorClass == .caller || error.errorClass == .blocked {
            // The same body will fail the same way: keep the answer so a replay gets it without a send. (A
            // claim taken over meanwhile keeps nothing of this request: the write needs the claim's token.)
            try await store.completeIdempotencyKey(claim.key, token: claim.token, response: refusal(error))
            throw error
        } catch {
            if claim.sendMayHaveHappened {
                // A vendor may have sent: a retry must not send again blindly. It takes the claim over at once
                // and answers the verification if it was stored, else `idempotency_outcome_unknown`.
                try? await store.abandonIdempotencyKey(claim.key, token: claim.token, at: clock.now)
            } else {
                // Nothing was sent and a retry may succeed (vendor down, state changed): free the key.
                try? await store.releaseIdempotencyKey(claim.key, token: claim.token)
            }
            throw error
        }
    }

    /// What a request that took over a dead start's claim answers from how far that start got: the
    /// verification it stored or its vendor has (replayed), a start anew when no vendor was called or the
    /// vendor has nothing and can no longer get the dead call, `idempotency_conflict` while it still may, and
    /// `idempotency_outcome_unknown` when nobody can tell (docs/architecture.md §9.2).
    private func answerKeyedTakeover<Rendered: Sendable>(
        _ claim: IdempotentStart, progress: IdempotencyProgress, deadOwner: String?,
        _ parse: () throws -> StartVerification, caller: StartCaller, render: (VerificationRecord) -> Rendered,
        keep: (Rendered) -> StoredResponse, refusal: (GatewayError) -> StoredResponse
    ) async throws -> KeyedStartAnswer<Rendered> {
        logTakeover(progress, deadOwner: deadOwner)
        // A body that does not parse never reached a vendor: the start anew answers (and keeps) the refusal.
        guard let request = try? parse() else {
            return .started(
                try await startKeyedClaimed(claim, parse, caller: caller, render: render, keep: keep, refusal: refusal))
        }
        switch try await recover(claim, request, progress: progress, apiKeyID: caller.apiKeyID) {
        case .verification(let record):
            let stored = keep(render(record))
            try await store.completeIdempotencyKey(claim.key, token: claim.token, response: stored)
            return .replayed(stored)
        case .startAnew(let id):
            let resumed = IdempotentStart(key: claim.key, token: claim.token, resumingID: id)
            return .started(
                try await startKeyedClaimed(
                    resumed, { request }, caller: caller, render: render, keep: keep, refusal: refusal))
        case .notYet:
            try await store.abandonIdempotencyKey(claim.key, token: claim.token, at: clock.now)
            throw GatewayError(
                .idempotencyConflict,
                "An earlier request with this Idempotency-Key stopped while its vendor call may still arrive; "
                    + "retry shortly with the same key to learn its outcome.")
        case .unknown:
            // Left for the next retry to take over at once: the verification may still turn up.
            try await store.abandonIdempotencyKey(claim.key, token: claim.token, at: clock.now)
            throw GatewayError(
                .idempotencyOutcomeUnknown,
                "An earlier request with this Idempotency-Key stopped after asking a vendor to send and before its "
                    + "outcome was stored: a code may have reached the user. Do not start again at once: ask the user "
                    + "whether a code arrived; to send one, start with a new Idempotency-Key.")
        }
    }

    /// The dead start's outcome (``recoverStart(_:progress:apiKeyID:)``); when the question itself fails, the
    /// claim is left for the next request to take over at once and ask again.
    private func recover(
        _ claim: IdempotentStart, _ request: StartVerification, progress: IdempotencyProgress, apiKeyID: String?
    ) async throws(GatewayError) -> StartRecovery {
        do {
            return try await recoverStart(request, progress: progress, apiKeyID: apiKeyID)
        } catch {
            try? await store.abandonIdempotencyKey(claim.key, token: claim.token, at: clock.now)
            throw error
        }
    }

    private func logTakeover(_ progress: IdempotencyProgress, deadOwner: String?) {
        logger.notice(
            "idempotency claim taken over",
            metadata: [
                "idempotency.stage": "\(progress.stage)", "verification.id": "\(progress.verificationID ?? "-")",
                "provider.id": "\(progress.providerID ?? "-")", "instance.dead": "\(deadOwner ?? "-")",
            ])
    }

    /// The engine's start for `caller`, under `idempotency`.
    func start(
        _ request: StartVerification, caller: StartCaller, idempotency: IdempotentStart
    ) async throws(GatewayError) -> VerificationRecord {
        try await start(
            request, apiKeyID: caller.apiKeyID, apiKeyName: caller.apiKeyName, clientIP: caller.clientIP,
            keyCountries: caller.keyCountries, keyLimit: caller.keyLimit, idempotency: idempotency)
    }
}
