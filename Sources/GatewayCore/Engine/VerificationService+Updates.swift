import Foundation

extension VerificationService {
    // MARK: resend, cancel

    /// Sends the verification again through the provider that started it, or through the one `request` names
    /// when both send the gateway's own codes (the verification then moves to it, with its code). Without
    /// `provider`, an own-code verification moves by itself to the next messaging provider of its route that
    /// has not failed it (``nextMessagingProvider(_:current:)``), and back to its own should that one fail before
    /// sending.
    ///
    /// With no channel named, a provider that does not run workflows itself moves to the next of the
    /// request's `fallback_channels`, if any are left. Like a check, a resend holds the verification's
    /// lease while it is at the vendor.
    public func resend(id: String, request: ResendRequest = ResendRequest(), owner: String? = nil)
        async throws(GatewayError) -> VerificationRecord
    {
        try await resend(id: id, request: request, owner: owner, failover: nil)
    }

    /// ``resend(id:request:owner:)``; `failover`, for a delivery failover's send: why (`sinch undelivered 402`),
    /// recorded on the `resent` event as `delivery_failover`, and the send count it follows, which must still be
    /// the verification's when the lease is taken (else `invalid_state`, and nothing is sent).
    func resend(id: String, request: ResendRequest, owner: String?, failover: (reason: String, sends: Int)?)
        async throws(GatewayError) -> VerificationRecord
    {
        let maxSends = policy.maxSends
        let named = try request.provider.map { name throws(GatewayError) in try handoverTarget(name) }
        let service = self
        let (record, provider) = try await acquireLease(id, owner: owner) { (record, provider) throws(GatewayError) in
            if let failover, record.sends != failover.sends {
                throw GatewayError(.invalidState, "The verification was sent again since; no failover is due.")
            }
            if failover == nil, service.resendFallsBack(record, provider: provider, request: request) { return }
            let sender = try Self.resendingProvider(record, current: provider, named: named)
            _ = try Self.resendChannel(record, provider: sender, request: request, maxSends: maxSends)
        }
        if failover == nil, resendFallsBack(record, provider: provider, request: request) {
            // "Send me a code instead" during a silent step the engine falls back from: its fallback, now, under
            // the lease just taken.
            return try await fallBack(record, from: provider, reason: "resend")
        }
        // The record the lease took is the one validated, so this answers as the validation did; should it
        // ever not, the lease goes back before the refusal.
        var senders: [any VerificationProvider]
        do {
            senders = [try Self.resendingProvider(record, current: provider, named: named)]
            _ = try Self.resendChannel(record, provider: senders[0], request: request, maxSends: maxSends)
        } catch {
            _ = try? await finishCheck(id) { _ in }
            throw error
        }
        if named == nil, let next = await nextMessagingProvider(record, current: provider),
            (try? Self.resendChannel(record, provider: next, request: request, maxSends: maxSends)) != nil
        {
            senders.insert(next, at: 0)
        }
        var sent:
            (
                result: ProviderStartResult, sender: any VerificationProvider, channel: Channel?, usesFallback: Bool
            )?
        for (index, sender) in senders.enumerated() {
            // Validated above for each sender, on this very record.
            guard
                case (let resender, let channel, let usesFallback)? = try? Self.resendChannel(
                    record, provider: sender, request: request, maxSends: maxSends)
            else { continue }
            let began = clock.instant
            do {
                var vendorRequest = request
                vendorRequest.channel = channel
                let result = try await resender.resend(
                    ProviderVerification(record, clientContext: request.clientContext), request: vendorRequest)
                // Provisional, as the lease: ``finishCheck`` commits (synced) after it on every path.
                try? await store.append(
                    contentsOf: [
                        callEvent(
                            record.id, sender.id, "resend", outcome: "accepted", since: began,
                            segments: result.billedSegments)
                    ],
                    durability: .provisional)
                sent = (result, sender, channel, usesFallback)
                break
            } catch {
                try? await store.append(
                    contentsOf: [callEvent(record.id, sender.id, "resend", outcome: error.code.rawValue, since: began)],
                    durability: .provisional)
                let vendorFailed = error.errorClass == .providerTransient || error.errorClass == .providerPermanent
                if index < senders.count - 1, vendorFailed, !error.sendMayHaveHappened {
                    // The provider the resend moved to failed before sending: the verification's own sends it.
                    logger.warning(
                        "resend through the next provider failed; resending through the verification's own",
                        metadata: [
                            "verification.id": "\(id)", "provider.id": "\(sender.id)",
                            "error.code": "\(error.code.rawValue)",
                        ])
                    continue
                }
                let forgot = error.code == .expired || error.code == .notFound
                let settled = try await finishCheck(id) { record in
                    if forgot {
                        record.status = .expired
                        record.nextAction = nil
                    }
                }
                if let truth = settled.finalStateError, !forgot || settled.status != .expired { throw truth }
                throw error
            }
        }
        guard case (let result, let sender, let channel, let usesFallback)? = sent else {
            _ = try? await finishCheck(id) { _ in }
            throw GatewayError.internal()
        }
        let newChannel = result.channel ?? channel ?? record.channel
        var detail = [
            "channel": newChannel.rawValue, "sends": String(record.sends + (result.sentNothing ? 0 : 1)),
            "sent": result.sentNothing ? "false" : "true",
        ]
        if newChannel != record.channel { detail["previous_channel"] = record.channel.rawValue }
        if sender.id != record.providerID {
            detail["provider"] = sender.id
            detail["previous_provider"] = record.providerID
        }
        if let failover { detail["delivery_failover"] = failover.reason }
        // Written with the change, in one transaction (the webhook queue reads the event log).
        let resent = VerificationEvent(verificationID: id, kind: .resent, at: clock.now, detail: detail)
        let settled = try await finishCheck(id, known: record, events: [resent]) { record in
            // A vendor that only re-armed a code still valid (Firebase's reentrant start) sent nothing.
            if !result.sentNothing { record.sends += 1 }
            if usesFallback || newChannel != record.channel {
                record.fallbackChannels.removeAll { $0 == newChannel }
            }
            record.channel = newChannel
            record.providerID = sender.id
            if let reference = result.reference { record.providerReference = reference }
            if !result.state.isEmpty { record.providerState = result.state }
            if let expiresAt = result.expiresAt { record.expiresAt = expiresAt }
            if let language = result.contentLanguage { record.contentLanguage = language }
            record.nextAction = result.nextAction
        }
        if let error = settled.finalStateError { throw error }
        if !result.sentNothing { await scheduleDeliveryDeadline(settled) }
        return settled
    }

    /// Whether a resend of `record` is its silent step's fallback: no provider named, no channel or the first
    /// fallback channel, at a silent step the engine falls back from.
    func resendFallsBack(_ record: VerificationRecord, provider: any VerificationProvider, request: ResendRequest)
        -> Bool
    {
        request.provider == nil && fallsBackInEngine(record, provider: provider)
            && (request.channel == nil || request.channel == record.fallbackChannels.first)
    }

    /// The provider a resend's `provider` names, when it can take a verification over: one that sends the
    /// gateway's own codes.
    private func handoverTarget(_ name: String) throws(GatewayError) -> any VerificationProvider {
        guard let target = registry.provider(name) else {
            throw GatewayError(.invalidRequest, "`provider` names no configured provider.")
        }
        return target
    }

    /// Who sends a resend: the verification's provider, or the one the request named, which must, as the
    /// verification's own, send the gateway's own codes (a Verify vendor's code exists only at that vendor),
    /// and serve the destination's country.
    static func resendingProvider(
        _ record: VerificationRecord, current: any VerificationProvider, named: (any VerificationProvider)?
    ) throws(GatewayError) -> any VerificationProvider {
        guard let named, named.id != current.id else { return current }
        guard current is OwnCodeProvider, let target = named as? OwnCodeProvider else {
            throw GatewayError(
                .invalidRequest,
                "Only a code the gateway issued itself can be resent through another provider; provider "
                    + "\(current.id)'s code exists only at its vendor. Resend without `provider`.")
        }
        if let region = record.destination.phoneNumber?.policyRegion, !target.capabilities.serves(region: region) {
            throw GatewayError(.unsupportedDestination, "Provider \(target.id) does not send to \(region).")
        }
        return target
    }

    /// The channel a resend goes over (`nil`: the verification's own) and whether it is the next fallback
    /// channel, or the refusal; decided from the record alone, so it holds for the record the lease took.
    static func resendChannel(
        _ record: VerificationRecord, provider: any VerificationProvider, request: ResendRequest, maxSends: Int
    ) throws(GatewayError) -> (resender: any ResendingProvider, channel: Channel?, usesFallback: Bool) {
        if case .solveChallenge = record.nextAction {
            throw GatewayError(
                .invalidState,
                record.sends == 0
                    ? "Nothing was sent yet: answer the challenge at /v1/verifications/\(record.id)/challenge first."
                    : "A resend's challenge is open: answer it at /v1/verifications/\(record.id)/challenge to send "
                        + "the new code; the code already sent stays valid until then.")
        }
        let capabilities = provider.capabilities
        guard let resender = provider.resending else {
            throw GatewayError(.invalidRequest, "Provider \(provider.id) cannot resend; start a new verification.")
        }
        var channel = request.channel
        var usesFallback = false
        if channel == nil, !capabilities.nativeWorkflows, let next = record.fallbackChannels.first {
            channel = next
            usesFallback = true
        }
        if let channel, channel != record.channel {
            guard capabilities.resendCanChangeChannel, capabilities.channels.contains(channel),
                channel.needsPhoneNumber == record.channel.needsPhoneNumber
            else {
                throw GatewayError(
                    .unsupportedChannel, "This verification cannot be resent over \(channel.rawValue).")
            }
        }
        if record.sends >= maxSends {
            throw GatewayError(.maxSendsReached, "The code was sent too many times; wait for it to expire.")
        }
        return (resender, channel, usesFallback)
    }

    /// Cancels a pending verification. Canceling a canceled one returns it unchanged. Like a check, a cancel
    /// holds the verification's lease while it is at the vendor, so a check and a cancel at once end one
    /// way: the check approved and the cancel answers `already_approved`, or the cancel won and the check
    /// answers `canceled`.
    public func cancel(id: String, owner: String? = nil) async throws(GatewayError) -> VerificationRecord {
        let record: VerificationRecord
        let provider: any VerificationProvider
        do {
            (record, provider) = try await acquireLease(id, owner: owner) { _, _ in }
        } catch  where error.code == .canceled {
            let stored = try await current(id, owner: owner)
            if stored.status == .canceled { return stored }
            throw error
        }
        if let canceling = provider.canceling, record.sends > 0 {
            let began = clock.instant
            do {
                try await canceling.cancel(ProviderVerification(record))
                // Provisional, as the lease: ``finishCheck`` commits (synced) after it on every path.
                try? await store.append(
                    contentsOf: [callEvent(record.id, provider.id, "cancel", outcome: "canceled", since: began)],
                    durability: .provisional)
            } catch {
                try? await store.append(
                    contentsOf: [
                        callEvent(record.id, provider.id, "cancel", outcome: error.code.rawValue, since: began)
                    ],
                    durability: .provisional)
                // A vendor that already forgot the verification leaves nothing to cancel.
                if error.code != .notFound && error.code != .expired {
                    let released = try await finishCheck(id) { _ in }
                    if let truth = released.finalStateError { throw truth }
                    throw error
                }
            }
        }
        let settled = try await finishCheck(id) { record in
            record.status = .canceled
            record.nextAction = nil
        }
        // An approval that won the race stays approved, and the caller hears so.
        guard settled.status == .canceled else { throw settled.finalStateError ?? .internal() }
        try await store.append(
            VerificationEvent(verificationID: id, kind: .canceled, at: clock.now, detail: ["status": "canceled"]))
        return settled
    }

    // MARK: read and refresh

    /// The current record; a pending verification past its expiry is marked expired.
    public func get(id: String, owner: String? = nil) async throws(GatewayError) -> VerificationRecord {
        try await current(id, owner: owner)
    }

    /// The verification's timeline, oldest event first. Reads no owner: callers read the record with its owner first.
    public func events(id: String) async throws(GatewayError) -> [VerificationEvent] {
        try await store.events(verificationID: id)
    }

    /// The current record, asking the vendor first when `refresh` is set. The first read after an approval
    /// that arrived outside a check (callback or refresh) carries the gateway's token, once.
    public func read(id: String, refresh: Bool = false, owner: String? = nil) async throws(GatewayError)
        -> CheckOutcome
    {
        let record = refresh ? try await self.refresh(id: id, owner: owner) : try await current(id, owner: owner)
        return try await claimToken(record) ?? CheckOutcome(record: record, carriesToken: false)
    }

    /// Asks the vendor for the verification's state and applies what changed. Never spends an attempt.
    /// A provider with no status call, and a verification that is final or has sent nothing yet, are
    /// answered from the store.
    public func refresh(id: String, owner: String? = nil) async throws(GatewayError) -> VerificationRecord {
        let record = try await current(id, owner: owner)
        guard record.status == .pending, record.sends > 0 else { return record }
        let provider = try provider(for: record)
        guard let reporting = provider.statusReporting else { return record }
        let began = clock.instant
        let change: VerificationChange
        do {
            change = try await reporting.status(ProviderVerification(record))
            try await store.append(
                callEvent(record.id, provider.id, "status", outcome: change.status?.rawValue ?? "pending", since: began)
            )
        } catch {
            try await store.append(
                callEvent(record.id, provider.id, "status", outcome: error.code.rawValue, since: began))
            if error.code == .expired || error.code == .notFound {
                return try await settle(record, status: .expired, event: .statusChanged)
            }
            throw error
        }
        return try await apply(change, to: record.id, source: "refresh")
    }

    /// Hands out a pending approval token: the compare-and-set makes sure only one reader gets it.
    func claimToken(_ record: VerificationRecord) async throws(GatewayError) -> CheckOutcome? {
        var record = record
        while record.status == .approved, record.tokenPending {
            var next = record
            next.tokenPending = false
            next.pendingTokens = [:]
            next.checkLeaseUntil = nil
            next.checkLeaseOwner = nil
            next.checkLeaseHoldsAttempt = false
            next.updatedAt = clock.now
            next.version += 1
            if try await store.update(next) {
                try await store.append(
                    VerificationEvent(verificationID: next.id, kind: .tokenIssued, at: next.updatedAt))
                return CheckOutcome(record: next, providerTokens: record.pendingTokens, carriesToken: true)
            }
            guard let reloaded = try await store.record(id: record.id) else { throw GatewayError.notFound() }
            record = reloaded
        }
        return nil
    }

    // MARK: changes reported by the vendor

    /// Applies a change the vendor reported (callback or refresh). A final verification never moves: an
    /// approval stays approved whatever arrives after it.
    @discardableResult
    public func apply(_ change: VerificationChange, to id: String, source: String) async throws(GatewayError)
        -> VerificationRecord
    {
        while true {
            let record = try await current(id)
            guard record.status == .pending else {
                if let status = change.status, status != record.status {
                    try await store.append(
                        VerificationEvent(
                            verificationID: id, kind: .providerUpdate, at: clock.now,
                            detail: ["source": source, "status": status.rawValue, "ignored": "final"]))
                }
                return record
            }
            var next = record
            if let channel = change.channel, channel != record.channel {
                next.channel = channel
                next.fallbackChannels.removeAll { $0 == channel }
            }
            switch change.nextAction {
            case .keep: break
            case .clear: next.nextAction = nil
            case .set(let action): next.nextAction = action
            }
            if let state = change.state { next.providerState = state }
            if let language = change.contentLanguage { next.contentLanguage = language }
            if let expiresAt = change.expiresAt { next.expiresAt = expiresAt }
            if let reason = change.reason { next.statusReason = String(reason.prefix(64)) }
            if let status = change.status, status != .pending {
                next.status = status
                next.nextAction = nil
                if status == .approved {
                    next.tokenPending = true
                    next.pendingTokens = change.tokens
                }
            }
            if next == record { return record }
            next.updatedAt = clock.now
            next.version += 1
            var detail = ["source": source, "status": next.status.rawValue, "channel": next.channel.rawValue]
            if let reason = change.reason { detail["reason"] = String(reason.prefix(64)) }
            if let action = next.nextAction { detail["next_action"] = action.type }
            // The vendor moved to another channel by itself (Vonage's workflow): status webhooks say so.
            if next.channel != record.channel { detail["previous_channel"] = record.channel.rawValue }
            var events = [
                VerificationEvent(verificationID: id, kind: .providerUpdate, at: next.updatedAt, detail: detail)
            ]
            if next.status != record.status {
                events.append(
                    VerificationEvent(
                        verificationID: id, kind: .statusChanged, at: next.updatedAt,
                        detail: ["status": next.status.rawValue]))
            }
            // The change and its events in one write: the webhook queue is read from the event log.
            guard try await store.update(next, events: events) else { continue }
            if next.status != record.status {
                metrics.finished(next)
                if next.status == .approved { await countConversion(next) }
                await countAdaptiveOutcome(from: record, to: next)
            }
            if next.channel != record.channel {
                logger.info(
                    "vendor changed the channel",
                    metadata: [
                        "verification.id": "\(id)", "channel": "\(next.channel.rawValue)", "source": "\(source)",
                    ])
            }
            return next
        }
    }

    /// Hands a vendor's callback to the plugin of `providerID`, which verifies its signature, then applies
    /// the updates it found and records the delivery receipts (``recordDeliveries(_:providerID:)``). A callback for a verification the gateway does not hold is answered and
    /// otherwise ignored, so the vendor does not retry it forever.
    public func handleCallback(providerID: String, _ callback: VendorCallback) async throws(GatewayError)
        -> CallbackReply
    {
        guard let provider = registry.provider(providerID) else {
            throw GatewayError(.notFound, "No provider named `\(providerID)` is configured.")
        }
        guard let receiving = provider.callbackReceiving else {
            throw GatewayError(.notFound, "Provider `\(providerID)` takes no callbacks.")
        }
        let countries = policy.countries
        let lookup = VerificationLookup(
            { (target) throws(GatewayError) in
                try await self.record(for: target, providerID: providerID).map { ProviderVerification($0) }
            },
            permits: { destination in destination.phoneNumber.map { countries.permits($0.policyRegion) } ?? true })
        let reply = try await receiving.handleCallback(callback, lookup: lookup)
        for update in reply.updates {
            guard let record = try await record(for: update.target, providerID: providerID) else {
                logger.notice("callback for an unknown verification", metadata: ["provider.id": "\(providerID)"])
                continue
            }
            if let status = update.change.status, status.isFinal, status != .approved, record.status == .pending,
                fallsBackInEngine(record, provider: provider)
            {
                // A failed silent step moves to the code channel instead of ending the verification.
                let reason = update.change.reason ?? status.rawValue
                do {
                    try await fallBackFromSilentStep(
                        id: record.id, reason: reason, from: providerID, sends: record.sends)
                    continue
                } catch  where error.code == .invalidState {
                    // The step already ended (the deadline moved it on): the change is recorded as it is.
                }
            }
            try await apply(update.change, to: record.id, source: "callback")
        }
        try await recordDeliveries(reply.receipts, providerID: providerID)
        return reply
    }

    private func record(for target: ProviderUpdate.Target, providerID: String) async throws(GatewayError)
        -> VerificationRecord?
    {
        switch target {
        case .reference(let reference):
            return try await store.record(providerID: providerID, reference: reference)
        case .verificationID(let id):
            guard Self.isWellFormedID(id), let record = try await store.record(id: id), record.providerID == providerID
            else { return nil }
            return record
        }
    }

    // MARK: challenges

    /// The app's answer to a `solve_challenge` next action. A right answer sends the code (what a start
    /// does); a wrong one throws `app_verification_failed` carrying a fresh challenge, and nothing is sent.
    public func submitChallenge(id: String, answer: ChallengeAnswer, owner: String? = nil) async throws(GatewayError)
        -> VerificationRecord
    {
        // Take the challenge with compare-and-set, so two answers at once never send twice.
        var record: VerificationRecord
        let challenge: NextAction
        let challenging: any ChallengingProvider
        while true {
            record = try await current(id, owner: owner)
            if let error = record.finalStateError { throw error }
            guard let action = record.nextAction, case .solveChallenge = action else {
                throw GatewayError(.invalidState, "This verification has no challenge to answer.")
            }
            guard let answering = try provider(for: record).challenging else {
                throw GatewayError(.invalidState, "Provider \(record.providerID) sets no challenge to answer.")
            }
            guard record.challengeAttempts < policy.maxChallengeAttempts else {
                _ = try await settle(record, status: .maxAttemptsReached, event: .statusChanged)
                throw GatewayError(
                    .maxAttemptsReached, "Too many answers to this verification's challenge; start a new one.",
                    attemptsRemaining: 0)
            }
            var taken = record
            taken.challengeAttempts += 1
            taken.nextAction = nil
            taken.updatedAt = clock.now
            taken.version += 1
            if try await store.update(taken) {
                record = taken
                challenge = action
                challenging = answering
                break
            }
        }
        let began = clock.instant
        let result: ProviderStartResult
        do {
            result = try await challenging.submitChallenge(
                ProviderVerification(record, clientContext: answer.clientContext), answer: answer)
        } catch {
            try await store.append(
                callEvent(id, challenging.id, "challenge", outcome: error.code.rawValue, since: began))
            // The challenge stays open for another answer.
            _ = try? await finishCheck(id) { record in
                if record.nextAction == nil { record.nextAction = challenge }
            }
            throw error
        }
        let solved: Bool
        if case .solveChallenge = result.nextAction { solved = false } else { solved = true }
        try await store.append(
            callEvent(id, challenging.id, "challenge", outcome: solved ? "accepted" : "rejected", since: began))
        let settled = try await finishCheck(id) { record in
            record.nextAction = result.nextAction
            if !result.state.isEmpty { record.providerState = result.state }
            if let reference = result.reference { record.providerReference = reference }
            guard solved else { return }
            if !result.sentNothing { record.sends += 1 }
            if let channel = result.channel { record.channel = channel }
            if let language = result.contentLanguage { record.contentLanguage = language }
            record.expiresAt =
                result.expiresAt ?? max(record.expiresAt, clock.now.addingTimeInterval(policy.codeValidity))
        }
        try await store.append(
            VerificationEvent(
                verificationID: id, kind: .challenge, at: clock.now,
                detail: ["outcome": solved ? "accepted" : "rejected", "attempt": String(record.challengeAttempts)]))
        if let error = settled.finalStateError { throw error }
        guard solved else {
            throw GatewayError(
                .appVerificationFailed, "The challenge was not solved; a new challenge is in `next_action`.",
                retryable: true, nextAction: settled.nextAction)
        }
        return settled
    }
}
