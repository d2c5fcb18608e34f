import Foundation
import GatewayCore

/// A create runs under a claim on its (API key, service, `To`, channel), so that creates of one user at the
/// same instant (a double-tapped submit, two app servers retrying), on one instance or on several sharing the
/// store, start one verification and send once (docs/twilio-compat.md, "Creates at the same instant").
///
/// The claim is a row of the store's idempotency claims (``IdempotencyStore``), under a scope no
/// `Idempotency-Key` has: the store's insert-or-read makes one create its holder (SQLite in its write
/// transaction, PostgreSQL by the key's unique constraint). The holder does what a create does alone (resends
/// the pending verification, or starts one) and then ends the claim's lease, keeping the verification's id
/// in it. A create that found the claim held waits for it and then answers that verification, as it stands,
/// without sending again: one tap, one send. A create that comes after the claim ended does what a sequential
/// repeat does (a resend); a holder whose start failed releases the claim, so a waiting create or a retry
/// tries on its own (one whose resend failed ends it, keeping the claim for the verification still pending).
/// A holder that died leaves its lease to lapse (at once when its instance is known dead). The first create
/// of a claim key takes the claim inside its start, in the write that records its vendor call, and reads
/// nothing: a new claim means no verification of that key, service, `To` and channel can be pending.
extension TwilioCompatController {
    /// One fingerprint for every create of a claim: a repeated create may differ in its other parameters.
    static let createClaimFingerprint = "twilio_compat.create"

    /// The claim of creates by `apiKeyID` in `serviceSID` to `destination` (E.164 or an address) on `channel`.
    /// Its scope cannot be an API key id, so no `Idempotency-Key` of the native API meets it.
    static func createClaimKey(serviceSID: String, channel: Channel, destination: String, apiKeyID: String?)
        -> IdempotencyKey
    {
        IdempotencyKey(
            scope: "twilio_compat.create:" + (apiKeyID ?? "-"), key: "\(serviceSID) \(channel.rawValue) \(destination)")
    }

    /// A create, one at a time per claim key: resends the pending verification, starts one, or (having
    /// waited for a create that held the claim) answers the verification that one left.
    func createOnce(
        _ start: StartVerification, service verifyService: TwilioCompatSettings.Service,
        context: GatewayRequestContext, clientIP: String?
    ) async throws -> VerificationRecord {
        let key = Self.createClaimKey(
            serviceSID: verifyService.sid, channel: start.channel, destination: start.destination.value,
            apiKeyID: context.apiKey?.id)
        if VerificationsController.owner(context) != nil {
            // A key's first create in a day: the start takes the claim itself, in the write that records its
            // vendor call, and no read looks for a pending verification (see ``firstCreate``).
            let first = IdempotentStart(key: key, endsAtInsert: true, claimsAhead: Self.createClaimFingerprint)
            do {
                return try await firstCreate(first, start, context: context, clientIP: clientIP)
            } catch {
                guard let answer = first.claimFoundTaken else { throw error }
                // Not the first: nothing was counted or sent. The claim, if taken over, is `first`'s now.
                return try await createOnce(
                    start, service: verifyService, context: context, clientIP: clientIP, claim: first, found: answer)
            }
        }
        return try await createOnce(
            start, service: verifyService, context: context, clientIP: clientIP,
            claim: IdempotentStart(key: key, endsAtInsert: true), found: nil)
    }

    /// A create whose claim is not new (`found`, the answer of its first claim; `nil`: claim now): it waits
    /// for a holder, takes over a lapsed claim, and resends a pending verification or starts one.
    private func createOnce(
        _ start: StartVerification, service verifyService: TwilioCompatSettings.Service,
        context: GatewayRequestContext, clientIP: String?, claim: IdempotentStart, found: IdempotencyClaim?
    ) async throws -> VerificationRecord {
        let key = claim.key
        var found = found
        let instance = service.leaseOwners?.instanceID
        let lease = service.policy.idempotencyLease
        let waitLimit = ContinuousClock.now.advanced(by: .milliseconds(Int64(lease * 1000)))
        var pause = Duration.milliseconds(2)
        var waited = false
        // The instance of a claim found held, once it is known dead: the next claim takes it over at once.
        var deadOwner: String?
        while true {
            let answer: IdempotencyClaim
            if let first = found {
                answer = first
                found = nil
            } else {
                answer = try await service.store.claimIdempotencyKey(
                    key, fingerprint: Self.createClaimFingerprint, token: claim.token, owner: instance,
                    at: service.clock.now, lease: lease, deadOwner: deadOwner)
            }
            switch answer {
            case .claimed:
                return try await createClaimed(
                    claim, start, service: verifyService, context: context, clientIP: clientIP)
            case .takenOver(let progress):
                if waited, let id = progress.verificationID,
                    let shared = try await sharedVerification(
                        id, channel: start.channel, service: verifyService, context: context)
                {
                    // The create this one waited for left a pending verification: that is the answer. (Should
                    // this write fail, the claim lapses with its lease, the verification's id still in it.)
                    try? await endClaim(claim, verificationID: shared.id)
                    return shared
                }
                if progress.stage == .vendorCallBegun {
                    // Its holder died during a vendor call: that vendor may have sent. Ask it, as a retried
                    // `Idempotency-Key` does, rather than send again.
                    return try await recoverCreate(
                        claim, start, progress: progress, service: verifyService, context: context,
                        clientIP: clientIP)
                }
                return try await createClaimed(
                    claim, start, service: verifyService, context: context, clientIP: clientIP)
            case .inProgress(let owner):
                waited = true
                if deadOwner == nil, let owner, owner != instance, let leaseOwners = service.leaseOwners,
                    await leaseOwners.isDead(owner)
                {
                    // Its instance died during the create: the claim is this one's now, not when the lease lapses.
                    deadOwner = owner
                    continue
                }
                guard ContinuousClock.now < waitLimit else {
                    throw GatewayError(
                        .concurrentVerification,
                        "Another request is starting a verification to this destination; try again.")
                }
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(25))
            case .replay, .mismatch:
                // Only creates take this claim, and they never complete it or use another fingerprint.
                throw GatewayError(.internal, "The create claim of this destination is not a create's.")
            }
        }
    }

    /// A create that took over the claim of a create that died during its vendor call
    /// (``VerificationService/recoverStart(_:progress:apiKeyID:)``, docs/architecture.md §9.2): the verification
    /// that vendor has (stored now, sending nothing), a start anew when the vendor has none and the dead call can
    /// no longer reach it, and otherwise `60212` (too many concurrent requests) with the claim left for the next
    /// create to take over at once and ask again: while the dead call may still arrive, and at a vendor that
    /// cannot be asked until the dead call's lease has passed (then a create sends, as a repeat does).
    private func recoverCreate(
        _ claim: IdempotentStart, _ start: StartVerification, progress: IdempotencyProgress,
        service verifyService: TwilioCompatSettings.Service, context: GatewayRequestContext, clientIP: String?
    ) async throws -> VerificationRecord {
        let recovery: VerificationService.StartRecovery
        do {
            recovery = try await service.recoverStart(start, progress: progress, apiKeyID: context.apiKey?.id)
        } catch {
            try? await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            throw error
        }
        switch recovery {
        case .verification(let record):
            try? await endClaim(claim, verificationID: record.id)
            return record
        case .startAnew(let id):
            return try await createClaimed(
                IdempotentStart(key: claim.key, token: claim.token, resumingID: id, endsAtInsert: true), start,
                service: verifyService, context: context, clientIP: clientIP)
        case .notYet:
            try? await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            throw GatewayError(
                .concurrentVerification,
                "An earlier create to this destination stopped while its vendor call may still arrive; try again shortly."
            )
        case .unknown:
            // A vendor that cannot be asked (or did not answer the question). Within the dead call's lease a
            // create is refused: it is most likely the same tap retried. After it, a create is the user asking
            // again, and sends, as a repeat create does at Twilio; refusing for good would lock the number out of
            // this service until the claim is pruned.
            let recent = progress.callBegunAt.map {
                service.clock.now.timeIntervalSince($0) < service.policy.idempotencyLease
            }
            guard recent == true else {
                return try await createClaimed(
                    claim, start, service: verifyService, context: context, clientIP: clientIP)
            }
            try? await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            throw GatewayError(
                .concurrentVerification,
                "An earlier create to this destination stopped after asking a vendor that cannot tell whether it sent; "
                    + "try again shortly.")
        }
    }

    /// The first create of a key, service, `To` and channel since the store last pruned their claim (a day
    /// after its last create): a start that takes the claim itself just before its vendor call, in the write
    /// that records the call (``IdempotentStart/claimsAhead``). A new claim means no create left a verification
    /// that could still be pending (every create's verification is kept in its claim, which outlives it), so
    /// there is nothing to resend and no read looks. A claim that is not new stops the start before anything
    /// is counted or sent, and the caller goes on as a repeat create (``IdempotentStart/claimFoundTaken``).
    private func firstCreate(
        _ claim: IdempotentStart, _ start: StartVerification, context: GatewayRequestContext, clientIP: String?
    ) async throws -> VerificationRecord {
        do {
            return try await startUnder(claim, start, context: context, clientIP: clientIP)
        } catch {
            guard claim.claimFoundTaken == nil else { throw error }
            if claim.tookClaimAhead {
                try? await service.store.releaseIdempotencyKey(claim.key, token: claim.token)
            }
            throw Self.createFailure(error)
        }
    }

    /// The engine's start, as the caller's API key may make it, under `claim`.
    private func startUnder(
        _ claim: IdempotentStart, _ start: StartVerification, context: GatewayRequestContext, clientIP: String?
    ) async throws(GatewayError) -> VerificationRecord {
        try await service.start(
            start, apiKeyID: context.apiKey?.id, apiKeyName: context.apiKey?.name, clientIP: clientIP,
            keyCountries: context.apiKey?.countries,
            keyLimit: context.apiKey?.startsPerHour.map { RateLimit(limit: $0, window: 3600) }, idempotency: claim)
    }

    /// A start's error as a create answers it: a claim taken over before the vendor call means another create
    /// is answering for this destination, and this one sent nothing.
    static func createFailure(_ error: any Error) -> any Error {
        guard let refusal = error as? GatewayError, refusal.code == .idempotencyConflict else { return error }
        return GatewayError(
            .concurrentVerification,
            "Another request took over starting a verification to this destination; this one sent nothing.")
    }

    /// The create itself, by the claim's holder: as a create alone does it. The claim ends keeping the
    /// verification for creates that waited (a start ends it in the commit that stores the verification,
    /// ``IdempotentStart/endsAtInsert``); a failure releases it, so the next create tries on its own.
    private func createClaimed(
        _ claim: IdempotentStart, _ start: StartVerification, service verifyService: TwilioCompatSettings.Service,
        context: GatewayRequestContext, clientIP: String?
    ) async throws -> VerificationRecord {
        let open: VerificationRecord?
        do {
            // As Twilio: a create to a number that has a pending verification of this service on the same
            // channel sends that one again (same `sid`, one more `send_code_attempts`) rather than starting
            // another.
            open = try await openVerification(
                to: start.destination.value, service: verifyService, context: context, channel: start.channel)
        } catch {
            try? await service.store.releaseIdempotencyKey(claim.key, token: claim.token)
            throw error
        }
        if let open, resendable(open) {
            let record: VerificationRecord
            do {
                record = try await service.resend(
                    id: open.id, request: ResendRequest(clientContext: start.clientContext),
                    owner: VerificationsController.owner(context))
            } catch {
                // The verification stays pending, so the claim stays too (ended, naming no verification, so a
                // create that waited tries the resend itself): a released claim would be new again, and the
                // next create would start a verification rather than resend this one.
                try? await endClaim(claim, verificationID: nil)
                throw error
            }
            // Answered even if this write fails: the claim then lapses with its lease, the id in it.
            try? await endClaim(claim, verificationID: record.id)
            return record
        }
        do {
            // Under the claim: before each vendor call the start renews it, and stops (sending nothing) if
            // another create took it over meanwhile.
            return try await startUnder(claim, start, context: context, clientIP: clientIP)
        } catch {
            try? await service.store.releaseIdempotencyKey(claim.key, token: claim.token)
            throw Self.createFailure(error)
        }
    }

    /// Ends the claim's lease now, keeping `verificationID` for the creates that waited on it (one write).
    private func endClaim(_ claim: IdempotentStart, verificationID: String?) async throws(GatewayError) {
        _ = try await service.store.recordIdempotencyProgress(
            claim.key, token: claim.token,
            progress: IdempotencyProgress(stage: .claimed, verificationID: verificationID),
            until: service.clock.now)
    }

    /// The verification a claim's last holder left, when it is still pending, of this service, channel and
    /// caller: what a create that waited for that holder answers.
    private func sharedVerification(
        _ id: String, channel: Channel, service verifyService: TwilioCompatSettings.Service,
        context: GatewayRequestContext
    ) async throws(GatewayError) -> VerificationRecord? {
        guard VerificationService.isWellFormedID(id), let record = try await service.store.record(id: id) else {
            return nil
        }
        let owner = VerificationsController.owner(context)
        guard record.metadata[Self.serviceMetadataKey] == verifyService.sid, record.channel == channel,
            owner == nil || record.apiKeyID == owner, record.effectiveStatus(at: service.clock.now) == .pending
        else { return nil }
        return record
    }
}
