import Foundation

extension VerificationService {
    // MARK: check

    /// Checks a code. A wrong code throws `incorrect_code` with the attempts left; the last wrong code
    /// throws `max_attempts_reached`.
    ///
    /// Checks of one verification are settled one at a time: a check takes a lease on the record (with
    /// compare-and-set, so it holds across gateway instances sharing a store) before it calls the vendor,
    /// and a concurrent check waits for it. So a double-submitted right code approves once and the other
    /// submission answers `already_approved`, whatever the vendor says to the second call.
    ///
    /// `owner`: the API key id the caller authenticated with, when it may see only its own verifications.
    public func check(_ request: CheckVerification, owner: String? = nil, apiKeyID: String? = nil)
        async throws(GatewayError) -> CheckOutcome
    {
        try await countCheck(apiKeyID: apiKeyID ?? owner)
        let (record, provider) = try await acquireCheck(request.verificationID, owner: owner)
        do {
            let outcome = try await checkLeased(request, record: record, provider: provider)
            metrics.checked(record, outcome: outcome.record.status.rawValue)
            return outcome
        } catch {
            metrics.checked(record, outcome: error.code.rawValue)
            throw error
        }
    }

    /// The check itself, once the lease is held.
    private func checkLeased(
        _ request: CheckVerification, record: VerificationRecord, provider: any VerificationProvider
    ) async throws(GatewayError) -> CheckOutcome {
        let began = clock.instant
        let result: ProviderCheckResult
        do {
            result = try await traced("provider.check") { (span) throws(GatewayError) in
                span?.set("verification.id", record.id)
                span?.set("verification.provider", provider.id)
                do throws(GatewayError) {
                    let result = try await provider.check(
                        ProviderVerification(record, clientContext: request.clientContext), code: request.code)
                    span?.set("verification.check.status", result.status.rawValue)
                    return result
                } catch {
                    span?.fail(error.code)
                    throw error
                }
            }
        } catch {
            // Provisional: the commit that settles the check (and syncs this one with it) follows.
            try? await store.append(
                contentsOf: [callEvent(record.id, provider.id, "check", outcome: error.code.rawValue, since: began)],
                durability: .provisional)
            throw await finishFailedCheck(error, record: record)
        }
        // Written with the check's outcome, in the same transaction.
        let events = [
            callEvent(record.id, provider.id, "check", outcome: result.status.rawValue, since: began),
            VerificationEvent(
                verificationID: record.id, kind: .checked, at: clock.now,
                detail: ["outcome": result.status.rawValue, "attempt": String(record.attempts)]),
        ]
        switch result.status {
        case .approved:
            let settled = try await finishCheck(record.id, known: record, events: events) { record in
                record.status = .approved
                record.nextAction = nil
                if let state = result.state { record.providerState = state }
            }
            // A cancel that won the race leaves the record canceled: never report success for it. An approval
            // that arrived by callback meanwhile is this check's approval too: its token is handed out here.
            guard settled.status == .approved else { throw settled.finalStateError ?? .internal() }
            await countConversion(settled)
            if settled.tokenPending {
                return try await claimToken(settled) ?? CheckOutcome(record: settled, carriesToken: true)
            }
            return CheckOutcome(record: settled, providerTokens: result.tokens, carriesToken: true)
        case .pending:
            if let action = result.nextAction {
                // The vendor wants another step before it approves (IDaaS MFA): not a wrong code.
                let settled = try await finishCheck(record.id, known: record, events: events) { record in
                    record.nextAction = action
                    if let state = result.state { record.providerState = state }
                }
                if let error = settled.finalStateError { throw error }
                return CheckOutcome(record: settled, carriesToken: false)
            }
            var remaining = 0
            let settled = try await finishCheck(record.id, known: record, events: events) { record in
                // The vendor may rotate its state on a wrong code; later calls need the new one.
                if let state = result.state { record.providerState = state }
                remaining = min(record.attemptsRemaining, result.attemptsRemaining ?? Int.max)
                if remaining <= 0 { record.status = .maxAttemptsReached }
            }
            if settled.status == .maxAttemptsReached {
                throw GatewayError(
                    .maxAttemptsReached, "Wrong code, and no attempts are left; start a new verification.",
                    attemptsRemaining: 0)
            }
            if let error = settled.finalStateError { throw error }
            throw GatewayError(.incorrectCode, "The code is not correct.", attemptsRemaining: remaining)
        default:
            let settled = try await finishCheck(record.id, known: record, events: events) { record in
                record.status = result.status
                record.nextAction = nil
            }
            throw settled.finalStateError ?? .internal()
        }
    }

    /// Waits until no other check holds the verification, then reserves an attempt and takes the lease.
    private func acquireCheck(_ id: String, owner: String?) async throws(GatewayError)
        -> (VerificationRecord, any VerificationProvider)
    {
        let clock = self.clock
        return try await acquireLease(id, owner: owner) { (record, provider) throws(GatewayError) in
            // A challenge opened by a resend leaves the code already sent valid until a new one is sent; only
            // a challenge before the first send means there is nothing to check.
            if case .solveChallenge = record.nextAction, record.sends == 0 {
                throw GatewayError(
                    .invalidState,
                    "Nothing was sent yet: answer the challenge at /v1/verifications/\(id)/challenge first.")
            }
            if provider.capabilities.completesWithoutCode.contains(record.channel) {
                throw GatewayError(
                    .invalidState,
                    "A \(record.channel.rawValue) verification completes without a code; read it with ?refresh=true.")
            }
            // While another check holds the last attempt, wait for its answer: it may give the attempt back
            // (a vendor failure) or end the verification (a wrong code, a lockout), and this check then
            // answers what the record says.
            let held = record.checkLeaseUntil.map { $0 > clock.now } ?? false
            if record.attempts >= record.maxAttempts, !held {
                throw GatewayError(
                    .maxAttemptsReached, "Too many wrong codes for this verification; start a new one.",
                    attemptsRemaining: 0)
            }
        } reserve: { record in
            record.attempts += 1
            record.checkLeaseHoldsAttempt = true
        }
    }

    /// Takes the verification's lease for one vendor operation (check, resend, cancel), so operations on one
    /// verification are settled one at a time across instances: waits while another holds it, then takes
    /// it with compare-and-set. `validate` runs on each fresh read (a final status or a refusal ends the
    /// wait at once); `reserve` changes the record in the same write that takes the lease.
    ///
    /// The usual case, a pending record that nobody holds, is read and leased in one store call
    /// (``VerificationStore/modify(id:durability:_:)``); whatever that call leaves (a final or expired
    /// record, a refusal, a lease held by another) is decided below from the record it read, as before.
    func acquireLease(
        _ id: String, owner: String? = nil,
        validate: @escaping @Sendable (VerificationRecord, any VerificationProvider) throws(GatewayError) -> Void,
        reserve: @escaping @Sendable (inout VerificationRecord) -> Void = { _ in }
    ) async throws(GatewayError) -> (VerificationRecord, any VerificationProvider) {
        guard Self.isWellFormedID(id) else { throw GatewayError.notFound() }
        let waitLimit = clock.instant.advanced(by: .milliseconds(Int64(policy.checkLease * 1000)))
        var pause = Duration.milliseconds(1)
        let holder = leaseOwners?.instanceID
        // Instances found dead while their lease held this verification: their leases are taken over.
        var dead: Set<String> = []
        while true {
            let now = clock.now
            let leaseUntil = now.addingTimeInterval(policy.checkLease)
            let service = self
            let deadOwners = dead
            // Provisional: nothing is answered from the lease itself; the operation always ends with a
            // commit that gives it back (``finishCheck``), synced, and a power loss before that commit
            // undoes the lease and its reservation together with everything else of an unanswered request.
            let attempt = try await store.modify(id: id, durability: .provisional) { stored in
                let record = Self.reclaimingDeadLease(stored, deadOwners: deadOwners)
                guard owner == nil || record.apiKeyID == owner, record.effectiveStatus(at: now) == .pending,
                    record.checkLeaseUntil.map({ $0 <= now }) ?? true,
                    let provider = try? service.provider(for: record), (try? validate(record, provider)) != nil
                else { return nil }
                var reserved = record
                reserved.checkLeaseHoldsAttempt = false
                reserve(&reserved)
                reserved.checkLeaseUntil = leaseUntil
                reserved.checkLeaseOwner = holder
                reserved.updatedAt = now
                reserved.version += 1
                return reserved
            }
            if let reserved = attempt.written {
                if let read = attempt.read, let lost = read.checkLeaseOwner, deadOwners.contains(lost),
                    read.checkLeaseUntil != nil
                {
                    logger.notice(
                        "lease of a dead instance taken over",
                        metadata: [
                            "verification.id": "\(id)", "instance.dead": "\(lost)",
                            "attempt.returned": "\(read.checkLeaseHoldsAttempt)",
                        ])
                }
                return (reserved, try provider(for: reserved))
            }
            guard var record = attempt.read.map({ Self.reclaimingDeadLease($0, deadOwners: deadOwners) }),
                owner == nil || record.apiKeyID == owner
            else {
                throw GatewayError.notFound()
            }
            if let lease = record.checkLeaseUntil, lease > clock.now, let leaseOwner = record.checkLeaseOwner,
                leaseOwner != holder, !dead.contains(leaseOwner), let leaseOwners, await leaseOwners.isDead(leaseOwner)
            {
                // Its instance died at the vendor: no answer of that operation was stored. Take the lease over
                // now, before judging the record: the attempt that lease holds comes back with it.
                dead.insert(leaseOwner)
                continue
            }
            if record.effectiveStatus(at: clock.now) == .expired, record.status == .pending {
                record = try await settle(record, status: .expired, event: .statusChanged)
            }
            if let error = record.finalStateError { throw error }
            let provider = try provider(for: record)
            try validate(record, provider)
            if let lease = record.checkLeaseUntil, lease > clock.now {
                // Another operation is at the vendor; its answer decides what this one finds.
                guard clock.instant < waitLimit else {
                    throw GatewayError(
                        .concurrentVerification, "Another request on this verification is running; try again.")
                }
                try? await clock.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(20))
            }
            // Otherwise the record was free but not taken: its lease ran out after `now`, or another writer
            // won the compare-and-set. Read and try again.
        }
    }

    /// `record` with the lease of an instance in `deadOwners` given back, and the attempt that lease's
    /// check reserved with it (the check never stored an answer; the vendor keeps its own count). Any other
    /// record is returned as it is.
    static func reclaimingDeadLease(_ record: VerificationRecord, deadOwners: Set<String>) -> VerificationRecord {
        guard record.checkLeaseUntil != nil, let owner = record.checkLeaseOwner, deadOwners.contains(owner) else {
            return record
        }
        var reclaimed = record
        if record.checkLeaseHoldsAttempt, reclaimed.attempts > 0 { reclaimed.attempts -= 1 }
        reclaimed.checkLeaseUntil = nil
        reclaimed.checkLeaseOwner = nil
        reclaimed.checkLeaseHoldsAttempt = false
        return reclaimed
    }

    /// Applies a check's result and gives the lease back, in one compare-and-set. `apply` runs only while
    /// the record is still pending: a cancel, a callback or an expiry that got there first stays.
    @discardableResult
    ///
    /// `known` is the record as the lease-holder last wrote it: tried first, since nobody else usually
    /// wrote meanwhile; read again only when the compare-and-set says otherwise. `events` are written in
    /// the same transaction as the change.
    func finishCheck(
        _ id: String, known: VerificationRecord? = nil, events: [VerificationEvent] = [],
        _ apply: (inout VerificationRecord) -> Void
    ) async throws(GatewayError) -> VerificationRecord {
        var candidate = known
        while true {
            let record: VerificationRecord
            if let candidate {
                record = candidate
            } else {
                guard let stored = try await store.record(id: id) else { throw GatewayError.notFound() }
                record = stored
            }
            candidate = nil
            var next = record
            if record.status == .pending { apply(&next) }
            next.checkLeaseUntil = nil
            next.checkLeaseOwner = nil
            next.checkLeaseHoldsAttempt = false
            if next == record {
                if !events.isEmpty { try await store.append(contentsOf: events) }
                return record
            }
            next.updatedAt = clock.now
            next.version += 1
            var written = events
            if next.status != record.status {
                written.append(
                    VerificationEvent(
                        verificationID: id, kind: .statusChanged, at: next.updatedAt,
                        detail: ["status": next.status.rawValue]))
            }
            if try await store.update(next, events: written) {
                if next.status != record.status {
                    metrics.finished(next)
                    await countAdaptiveOutcome(from: record, to: next)
                }
                return next
            }
        }
    }

    /// A vendor error during a check: verification-class errors change the record's state; a vendor lockout
    /// (`account_locked`) ends the verification as `denied` with reason `account_locked`, so no later check
    /// calls the vendor; a wrong code keeps its attempt (the last one ends the verification); anything else
    /// gives the attempt back. The answer is always true to the stored record: a verification that another
    /// request approved or canceled meanwhile says so, never the vendor's "already used".
    private func finishFailedCheck(_ error: GatewayError, record: VerificationRecord) async -> GatewayError {
        var error = error
        let target: VerificationStatus?
        let wrongCode = error.code == .incorrectCode
        switch error.code {
        case .maxAttemptsReached: target = .maxAttemptsReached
        case .expired, .notFound:
            // The vendor no longer knows a verification we hold: for the caller it has expired.
            target = .expired
            error.code = .expired
            error.message = "This verification has expired; start a new one."
        case .alreadyApproved: target = .approved
        case .canceled: target = .canceled
        case .denied: target = .denied
        case .destinationBlocked: target = .blocked
        case .accountLocked: target = .denied
        default: target = nil
        }
        let settled: VerificationRecord
        do {
            settled = try await finishCheck(record.id) { record in
                if let target {
                    record.status = target
                    record.nextAction = nil
                    if error.code == .accountLocked { record.statusReason = VerificationRecord.accountLockedReason }
                } else if wrongCode {
                    // The vendor judged the code: the attempt stays spent.
                    if record.attemptsRemaining <= 0 {
                        record.status = .maxAttemptsReached
                        record.nextAction = nil
                    }
                } else if record.attempts > 0 {
                    // The check never reached a verdict: give the attempt back.
                    record.attempts -= 1
                }
            }
        } catch let storeError {
            return storeError
        }
        if let target, settled.status != target, let truth = settled.finalStateError { return truth }
        if target == nil, let truth = settled.finalStateError { return truth }
        if target == .maxAttemptsReached { error.attemptsRemaining = 0 }
        if wrongCode { error.attemptsRemaining = min(error.attemptsRemaining ?? Int.max, settled.attemptsRemaining) }
        if target != nil { error.retryable = false }
        return error
    }
}
