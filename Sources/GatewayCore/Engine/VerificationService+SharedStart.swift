import Foundation

/// A shared start runs under a claim on its target (``SharedStart/key``), a row of the store's idempotency
/// claims: the store's insert-or-read makes one start its holder (SQLite in its write transaction, PostgreSQL
/// by the key's unique constraint). The holder does what a start alone does (resends the pending verification,
/// or starts one) and then ends the claim's lease, keeping the verification's id in it. A start that found
/// the claim held waits for it and then answers that verification, as it stands, without sending again: one
/// tap, one send. A start that comes after the claim ended does what a sequential repeat does (a resend); a
/// holder whose start failed releases the claim, so a waiting start or a retry tries on its own (one whose
/// resend failed ends it, keeping the claim for the verification still pending). A holder that died leaves
/// its lease to lapse (at once when its instance is known dead). With ``SharedStart/claimsAhead``, the first
/// start of a key takes the claim inside its start, in the write that records its vendor call, and reads
/// nothing: a new claim means nothing of that key can be pending.
extension VerificationService {
    /// A shared start, one at a time per claim key: resends the pending verification, starts one, or (having
    /// waited for a start that held the claim) answers the verification that one left.
    public func startShared(_ shared: SharedStart) async throws -> VerificationRecord {
        guard shared.claimsAhead else {
            return try await startShared(
                shared, claim: IdempotentStart(key: shared.key, endsAtInsert: true), found: nil)
        }
        // A key's first start: the start takes the claim itself, in the write that records its vendor call,
        // and no read looks for a pending verification (see ``firstSharedStart(_:_:)``).
        let first = IdempotentStart(key: shared.key, endsAtInsert: true, claimsAhead: shared.fingerprint)
        do {
            return try await firstSharedStart(first, shared)
        } catch {
            guard let answer = first.claimFoundTaken else { throw error }
            // Not the first: nothing was counted or sent. The claim, if taken over, is `first`'s now.
            return try await startShared(shared, claim: first, found: answer)
        }
    }

    /// A shared start whose claim is not new (`found`, the answer of its first claim; `nil`: claim now): it
    /// waits for a holder, takes over a lapsed claim, and resends a pending verification or starts one.
    private func startShared(
        _ shared: SharedStart, claim: IdempotentStart, found: IdempotencyClaim?
    ) async throws -> VerificationRecord {
        var found = found
        let lease = policy.idempotencyLease
        let waitLimit = clock.instant.advanced(by: .milliseconds(Int64(lease * 1000)))
        var pause = Duration.milliseconds(2)
        var waited = false
        // The wait limit passed after the last claim was read: the holder's lease may have ended meanwhile.
        var lastLook = false
        // The instance of a claim found held, once it is known dead: the next claim takes it over at once.
        var deadOwner: String?
        while true {
            let answer: IdempotencyClaim
            if let first = found {
                answer = first
                found = nil
            } else {
                answer = try await store.claimIdempotencyKey(
                    shared.key, fingerprint: shared.fingerprint, token: claim.token,
                    owner: leaseOwners?.instanceID, at: clock.now, lease: lease, deadOwner: deadOwner)
            }
            switch answer {
            case .claimed:
                return try await sharedClaimed(claim, shared)
            case .takenOver(let progress):
                if waited, let left = try await leftByHolder(progress, shared) {
                    // The start this one waited for left a pending verification: that is the answer. (Should
                    // this write fail, the claim lapses with its lease, the verification's id still in it.)
                    try? await endClaim(claim, verificationID: left.id)
                    return left
                }
                if progress.stage == .vendorCallBegun {
                    // Its holder died during a vendor call: that vendor may have sent. Ask it, as a retried
                    // `Idempotency-Key` does, rather than send again.
                    return try await recoverShared(claim, shared, progress: progress)
                }
                return try await sharedClaimed(claim, shared)
            case .inProgress(let owner):
                waited = true
                if deadOwner == nil, await isDeadOwner(owner) {
                    // Its instance died during the start: the claim is this one's now, not when the lease lapses.
                    deadOwner = owner
                    continue
                }
                guard clock.instant < waitLimit else {
                    // One more read of the claim before giving up: the wait is as long as the holder's lease, so
                    // when it ends the lease may have just lapsed, after the read that found it held.
                    if !lastLook {
                        lastLook = true
                        continue
                    }
                    throw GatewayError(
                        .concurrentVerification,
                        "Another request is starting a verification to this destination; try again.")
                }
                try await clock.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(25))
            case .replay, .mismatch:
                // Only shared starts take this claim, and they never complete it or use another fingerprint.
                throw GatewayError(.internal, "The create claim of this destination is not a create's.")
            }
        }
    }

    /// A shared start that took over the claim of one that died during its vendor call
    /// (``recoverStart(_:progress:apiKeyID:)``, docs/architecture.md §9.2): the verification that vendor has
    /// (stored now, sending nothing), a start anew when the vendor has none and the dead call can no longer
    /// reach it, and otherwise `concurrent_verification` with the claim left for the next start to take over at
    /// once and ask again: while the dead call may still arrive, and at a vendor that cannot be asked until the
    /// dead call's lease has passed (then a start sends, as a repeat does).
    private func recoverShared(
        _ claim: IdempotentStart, _ shared: SharedStart, progress: IdempotencyProgress
    ) async throws -> VerificationRecord {
        let recovery: StartRecovery
        do {
            recovery = try await recoverStart(shared.request, progress: progress, apiKeyID: shared.caller.apiKeyID)
        } catch {
            try? await store.abandonIdempotencyKey(claim.key, token: claim.token, at: clock.now)
            throw error
        }
        switch recovery {
        case .verification(let record):
            try? await endClaim(claim, verificationID: record.id)
            return record
        case .startAnew(let id):
            return try await sharedClaimed(
                IdempotentStart(key: claim.key, token: claim.token, resumingID: id, endsAtInsert: true), shared)
        case .notYet:
            try? await store.abandonIdempotencyKey(claim.key, token: claim.token, at: clock.now)
            throw GatewayError(
                .concurrentVerification,
                "An earlier create to this destination stopped while its vendor call may still arrive; try again shortly."
            )
        case .unknown:
            // A vendor that cannot be asked (or did not answer the question). Within the dead call's lease a
            // start is refused: it is most likely the same tap retried. After it, a start is the user asking
            // again, and sends, as a repeat create does at Twilio; refusing for good would lock the number out of
            // this target until the claim is pruned.
            let recent = progress.callBegunAt.map { clock.now.timeIntervalSince($0) < policy.idempotencyLease }
            guard recent == true else { return try await sharedClaimed(claim, shared) }
            try? await store.abandonIdempotencyKey(claim.key, token: claim.token, at: clock.now)
            throw GatewayError(
                .concurrentVerification,
                "An earlier create to this destination stopped after asking a vendor that cannot tell whether it sent; "
                    + "try again shortly.")
        }
    }

    /// The first start of a key since the store last pruned its claim (a day after its last start): a start
    /// that takes the claim itself just before its vendor call, in the write that records the call
    /// (``IdempotentStart/claimsAhead``). A claim that is not new stops the start before anything is counted or
    /// sent, and the caller goes on as a repeat (``IdempotentStart/claimFoundTaken``).
    private func firstSharedStart(_ claim: IdempotentStart, _ shared: SharedStart) async throws -> VerificationRecord {
        do {
            return try await start(shared.request, caller: shared.caller, idempotency: claim)
        } catch {
            guard claim.claimFoundTaken == nil else { throw error }
            if claim.tookClaimAhead {
                try? await store.releaseIdempotencyKey(claim.key, token: claim.token)
            }
            throw Self.sharedStartFailure(error)
        }
    }

    /// A start's error as a shared start answers it: a claim taken over before the vendor call means another
    /// start is answering for this target, and this one sent nothing.
    static func sharedStartFailure(_ error: any Error) -> any Error {
        guard let refusal = error as? GatewayError, refusal.code == .idempotencyConflict else { return error }
        return GatewayError(
            .concurrentVerification,
            "Another request took over starting a verification to this destination; this one sent nothing.")
    }

    /// The start itself, by the claim's holder, as a start alone does it. The claim ends keeping the
    /// verification for starts that waited (a start ends it in the commit that stores the verification,
    /// ``IdempotentStart/endsAtInsert``); a failure releases it, so the next start tries on its own.
    private func sharedClaimed(_ claim: IdempotentStart, _ shared: SharedStart) async throws -> VerificationRecord {
        let open: VerificationRecord?
        do {
            open = try await shared.resendable()
        } catch {
            try? await store.releaseIdempotencyKey(claim.key, token: claim.token)
            throw error
        }
        if let open {
            let record: VerificationRecord
            do {
                record = try await resend(
                    id: open.id, request: ResendRequest(clientContext: shared.request.clientContext),
                    owner: shared.owner)
            } catch {
                // The verification stays pending, so the claim stays too (ended, naming no verification, so a
                // start that waited tries the resend itself): a released claim would be new again, and the
                // next start would start a verification rather than resend this one.
                try? await endClaim(claim, verificationID: nil)
                throw error
            }
            // Answered even if this write fails: the claim then lapses with its lease, the id in it.
            try? await endClaim(claim, verificationID: record.id)
            return record
        }
        do {
            // Under the claim: before each vendor call the start renews it, and stops (sending nothing) if
            // another start took it over meanwhile.
            return try await start(shared.request, caller: shared.caller, idempotency: claim)
        } catch {
            try? await store.releaseIdempotencyKey(claim.key, token: claim.token)
            throw Self.sharedStartFailure(error)
        }
    }

    /// Ends the claim's lease now, keeping `verificationID` for the starts that waited on it (one write).
    private func endClaim(_ claim: IdempotentStart, verificationID: String?) async throws(GatewayError) {
        _ = try await store.recordIdempotencyProgress(
            claim.key, token: claim.token,
            progress: IdempotencyProgress(stage: .claimed, verificationID: verificationID), until: clock.now)
    }

    /// The verification a claim's last holder left, when it is still pending and answers this start.
    private func leftByHolder(
        _ progress: IdempotencyProgress, _ shared: SharedStart
    ) async throws(GatewayError) -> VerificationRecord? {
        guard let id = progress.verificationID, Self.isWellFormedID(id), let record = try await store.record(id: id),
            record.effectiveStatus(at: clock.now) == .pending, shared.answers(record)
        else { return nil }
        return record
    }
}
