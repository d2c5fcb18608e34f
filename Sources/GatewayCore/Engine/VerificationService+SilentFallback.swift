import Foundation

extension VerificationService {
    // MARK: silent first, code as fallback (docs/network-signals.md, "Silent first")

    /// The marker of a silent step's deadline among the delivery deadlines.
    static let silentStepMarker = "silent_auth"

    /// Whether the engine, not the vendor, moves `record` on from its silent step: a `silent_auth`
    /// verification at a provider that completes it without a code and runs no workflow of its own (CAMARA
    /// Number Verification, Sinch seamless; Vonage's workflow moves by itself), with fallback channels left.
    func fallsBackInEngine(_ record: VerificationRecord, provider: any VerificationProvider) -> Bool {
        record.channel == .silentAuth && !record.fallbackChannels.isEmpty
            && Self.fallsBackInEngine(provider.capabilities, fallbackChannels: record.fallbackChannels)
    }

    /// Whether a silent step at a provider with `capabilities` needs the engine for `fallbackChannels`.
    static func fallsBackInEngine(_ capabilities: ProviderCapabilities, fallbackChannels: [Channel]) -> Bool {
        capabilities.completesWithoutCode.contains(.silentAuth) && !capabilities.nativeWorkflows
    }

    /// After a start that opened a silent step the engine falls back from: the time by which it must have
    /// ended, kept with the delivery deadlines (best effort, as they are).
    func scheduleSilentDeadline(_ record: VerificationRecord, provider: any VerificationProvider) async {
        guard record.status == .pending, fallsBackInEngine(record, provider: provider),
            let deadlines = deliveryDeadlines
        else { return }
        // Before the step's own expiry, which would end the verification instead.
        let due = min(
            clock.now.addingTimeInterval(policy.silentAuthTimeout), record.expiresAt.addingTimeInterval(-2))
        do {
            try await deadlines.scheduleDeliveryDeadline(
                DeliveryDeadline(
                    verificationID: record.id, send: record.sends, providerID: provider.id,
                    messageID: Self.silentStepMarker, dueAt: due))
        } catch {
            logger.warning(
                "silent step deadline not kept; only a failed silent step will fall back",
                metadata: ["verification.id": "\(record.id)", "error.code": "\(error.code.rawValue)"])
        }
    }

    /// A due silent-step deadline: the step is still open, so the verification moves to its fallback channel.
    func actOnSilentDeadline(_ deadline: DeliveryDeadline, store deadlines: any DeliveryDeadlineStore) async {
        let id = deadline.verificationID
        do {
            _ = try await fallBackFromSilentStep(
                id: id, reason: "timeout", from: deadline.providerID, sends: deadline.send)
        } catch {
            if error.code == .concurrentVerification || error.code == .storeUnavailable {
                var retry = deadline
                retry.dueAt = clock.now.addingTimeInterval(2)
                _ = try? await deadlines.scheduleDeliveryDeadline(retry)
                return
            }
        }
        _ = try? await deadlines.removeDeliveryDeadline(verificationID: id, send: deadline.send)
    }

    /// Moves a verification whose silent step failed (`reason`: the operator's answer) or timed out to its first
    /// fallback channel, through the providers routing gives that channel for the destination, as a start would
    /// (breakers, failover before a send). Holds the verification's lease meanwhile, so a callback and the
    /// deadline never both send. `from` and `sends`: the silent step this is about, which must still be the
    /// verification's (else `invalid_state` and nothing is sent). With no provider able to send, the
    /// verification fails.
    @discardableResult
    func fallBackFromSilentStep(id: String, reason: String, from providerID: String, sends: Int)
        async throws(GatewayError) -> VerificationRecord
    {
        let service = self
        let (record, silent) = try await acquireLease(id) { (record, provider) throws(GatewayError) in
            guard record.channel == .silentAuth, record.providerID == providerID, record.sends == sends,
                service.fallsBackInEngine(record, provider: provider)
            else { throw GatewayError(.invalidState, "The verification's silent step is over.") }
        }
        return try await fallBack(record, from: silent, reason: reason)
    }

    /// The move itself, for `record` as its lease was taken (``fallsBackInEngine(_:provider:)`` held for it):
    /// the first fallback channel sent by the silent provider itself when it can resend over that channel
    /// (Sinch), else (or should it fail before sending) started through the channel's route's providers; the
    /// record moved to the one that took it, the lease given back in the same write.
    func fallBack(_ record: VerificationRecord, from silent: any VerificationProvider, reason: String)
        async throws(GatewayError) -> VerificationRecord
    {
        let id = record.id
        let channel = record.fallbackChannels[0]
        let request = StartVerification(
            destination: record.destination, channel: channel, locales: record.locales,
            clientReference: record.clientReference, metadata: record.metadata,
            fallbackChannels: Array(record.fallbackChannels.dropFirst()), verificationID: record.id)
        let decision = routing.decide(request, apiKey: nil, registry: registry)
        var calls: [VerificationEvent] = []
        var started: (result: ProviderStartResult, provider: any VerificationProvider)?
        if silent.capabilities.resendCanChangeChannel, silent.capabilities.channels.contains(channel),
            let resending = silent.resending
        {
            let began = clock.instant
            do {
                let result = try await resending.resend(
                    ProviderVerification(record), request: ResendRequest(channel: channel))
                calls.append(
                    callEvent(
                        id, silent.id, "resend", outcome: "accepted", since: began, segments: result.billedSegments))
                started = (result, silent)
            } catch {
                calls.append(callEvent(id, silent.id, "resend", outcome: error.code.rawValue, since: began))
                let vendorFailed = error.errorClass == .providerTransient || error.errorClass == .providerPermanent
                // After a failure that may have sent, another vendor would send a second code.
                if !vendorFailed || error.sendMayHaveHappened {
                    return try await failFallBack(record, reason: reason, calls: calls)
                }
            }
        }
        for provider in decision.candidates where started == nil && provider.id != silent.id {
            // The app has no proof to give for a provider that needs one (Firebase): such a provider is passed over.
            guard !provider.requiresAppVerification(for: request),
                breakers.allow(provider.id, country: decision.country)
            else { continue }
            let began = clock.instant
            do {
                // A challenge to solve first (IDaaS) is the verification's next action, as after a start.
                let result = try await Self.startOrChallenge(provider, request)
                calls.append(
                    callEvent(
                        id, provider.id, "start", outcome: "accepted", since: began, segments: result.billedSegments))
                breakers.record(provider.id, country: decision.country, failure: false)
                started = (result, provider)
                break
            } catch {
                calls.append(callEvent(id, provider.id, "start", outcome: error.code.rawValue, since: began))
                let vendorFailed = error.errorClass == .providerTransient || error.errorClass == .providerPermanent
                breakers.record(provider.id, country: decision.country, failure: vendorFailed)
                logger.warning(
                    "silent fallback: provider start failed",
                    metadata: [
                        "verification.id": "\(id)", "provider.id": "\(provider.id)",
                        "error.code": "\(error.code.rawValue)",
                    ])
                guard vendorFailed, !error.sendMayHaveHappened else { break }
            }
        }
        let now = clock.now
        guard let (result, provider) = started else {
            return try await failFallBack(record, reason: reason, calls: calls)
        }
        let newChannel = result.channel ?? channel
        let moved = provider.id != record.providerID
        var detail = [
            "channel": newChannel.rawValue, "previous_channel": record.channel.rawValue,
            "silent_auth": String(reason.prefix(64)),
            "sends": String(record.sends + (result.sentNothing ? 0 : 1)), "sent": result.sentNothing ? "false" : "true",
        ]
        if moved {
            detail["provider"] = provider.id
            detail["previous_provider"] = record.providerID
        }
        let resent = VerificationEvent(verificationID: id, kind: .resent, at: now, detail: detail)
        let maxAttempts = min(policy.maxAttempts, provider.capabilities.vendorMaxAttempts ?? Int.max)
        let codeValidity = policy.codeValidity
        let settled = try await finishCheck(id, known: record, events: calls + [resent]) { record in
            if !result.sentNothing { record.sends += 1 }
            record.fallbackChannels.removeAll { $0 == newChannel }
            record.channel = newChannel
            record.providerID = provider.id
            // A resend at the same vendor may keep its reference and state; a new vendor's are its own.
            if moved || result.reference != nil { record.providerReference = result.reference }
            if moved || !result.state.isEmpty { record.providerState = result.state }
            record.expiresAt = result.expiresAt ?? now.addingTimeInterval(codeValidity)
            if let language = result.contentLanguage { record.contentLanguage = language }
            record.nextAction = result.nextAction
            record.maxAttempts = maxAttempts
        }
        logger.info(
            "silent step fell back",
            metadata: [
                "verification.id": "\(id)", "provider.id": "\(provider.id)", "channel": "\(newChannel.rawValue)",
                "reason": "\(reason)",
            ])
        if let error = settled.finalStateError { throw error }
        if settled.sends > record.sends { await scheduleDeliveryDeadline(settled) }
        return settled
    }

    /// No provider sent the code: the verification fails, the reason kept on its timeline.
    private func failFallBack(_ record: VerificationRecord, reason: String, calls: [VerificationEvent])
        async throws(GatewayError) -> VerificationRecord
    {
        logger.notice(
            "silent fallback: no provider sent the code",
            metadata: ["verification.id": "\(record.id)", "reason": "\(reason)"])
        let failed = VerificationEvent(
            verificationID: record.id, kind: .providerUpdate, at: clock.now,
            detail: ["source": "silent_fallback", "status": "failed", "silent_auth": String(reason.prefix(64))])
        return try await finishCheck(record.id, known: record, events: calls + [failed]) { record in
            record.status = .failed
            record.nextAction = nil
            record.statusReason = "silent_fallback_failed"
        }
    }
}
