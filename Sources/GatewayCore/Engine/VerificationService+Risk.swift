import Foundation

extension VerificationService {
    // MARK: risk step (docs/network-signals.md)

    /// What the risk step found: the marks the verification carries and the signal calls for its timeline.
    struct RiskOutcome {
        var marks: [String: String] = [:]
        var events: [VerificationEvent] = []
    }

    /// The risk step of `route` (its own, or the policy's), asked before any vendor is called: a recent SIM
    /// change refuses the start (`recent_sim_swap`, a blocked record kept with its timeline), marks it
    /// (`step_up`), or only goes on its timeline (`flag`). A signal that cannot be had follows
    /// ``RiskPolicy/onSignalUnavailable``.
    func assessRisk(_ request: StartVerification, route: String, id: String, apiKeyID: String?)
        async throws(GatewayError) -> RiskOutcome
    {
        guard let risk = routing.risk(ofRoute: route) ?? policy.risk, let rule = risk.simSwap,
            let number = request.destination.phoneNumber
        else { return RiskOutcome() }
        var outcome = RiskOutcome()
        let key = "\(rule.providerID)|\(rule.maxAgeHours)|\(number.e164)"
        let now = clock.now
        let swapped: Bool
        if let cached = signalCache.answer(key, maxAge: risk.cacheFor, now: now) {
            swapped = cached
            outcome.events.append(
                VerificationEvent(
                    verificationID: id, kind: .providerCall, at: now,
                    detail: [
                        "provider": rule.providerID, "operation": "sim_swap",
                        // No latency: nothing was called, and the provider's latency figures stay its calls'.
                        "outcome": swapped ? "swapped" : "not_swapped", "cached": "true",
                        "max_age_hours": String(rule.maxAgeHours),
                    ]))
        } else {
            let began = clock.instant
            do throws(GatewayError) {
                guard let signal = registry.provider(rule.providerID) as? any SimSwapSignalProvider else {
                    throw GatewayError(.providerUnavailable, "Provider \(rule.providerID) gives no SIM swap signal.")
                }
                swapped = try await signal.simSwapped(number, withinHours: rule.maxAgeHours)
                signalCache.keep(swapped, for: key, at: clock.now)
                var event = callEvent(
                    id, rule.providerID, "sim_swap", outcome: swapped ? "swapped" : "not_swapped", since: began)
                event.detail["max_age_hours"] = String(rule.maxAgeHours)
                outcome.events.append(event)
            } catch {
                var event = callEvent(id, rule.providerID, "sim_swap", outcome: error.code.rawValue, since: began)
                event.detail["unavailable"] = risk.onSignalUnavailable.rawValue
                metrics.riskSignal(
                    provider: rule.providerID, answer: "unavailable", action: risk.onSignalUnavailable.rawValue)
                logger.warning(
                    "sim swap signal unavailable",
                    metadata: [
                        "verification.id": "\(id)", "provider.id": "\(rule.providerID)",
                        "error.code": "\(error.code.rawValue)",
                        "on_unavailable": "\(risk.onSignalUnavailable.rawValue)",
                    ])
                guard risk.onSignalUnavailable == .allow else {
                    throw GatewayError(
                        .providerUnavailable,
                        "The SIM swap signal for this number is unavailable and this route refuses starts without "
                            + "it; try again later.", vendor: error.vendor, retryable: true)
                }
                outcome.events.append(event)
                return outcome
            }
        }
        guard swapped else {
            metrics.riskSignal(provider: rule.providerID, answer: "not_swapped", action: "none")
            return outcome
        }
        metrics.riskSignal(provider: rule.providerID, answer: "swapped", action: rule.onRecentSwap.rawValue)
        switch rule.onRecentSwap {
        case .stepUp:
            outcome.marks["sim_swap"] = "recent"
        case .flag:
            break
        case .refuse:
            try await refuseForRecentSwap(request, id: id, apiKeyID: apiKeyID, rule: rule, events: outcome.events)
        }
        return outcome
    }

    /// Keeps the refused start as a `blocked` verification with its signal call on the timeline, then throws
    /// `recent_sim_swap`. Nothing was sent.
    private func refuseForRecentSwap(
        _ request: StartVerification, id: String, apiKeyID: String?, rule: RiskPolicy.SimSwap,
        events: [VerificationEvent]
    ) async throws(GatewayError) -> Never {
        let now = clock.now
        let record = VerificationRecord(
            id: id, destination: request.destination, channel: request.channel, providerID: "-",
            providerReference: nil, status: .blocked, maxAttempts: 0, sends: 0, createdAt: now, updatedAt: now,
            expiresAt: now, locales: request.locales, route: "risk", clientReference: request.clientReference,
            metadata: request.metadata, apiKeyID: apiKeyID, statusReason: "recent_sim_swap")
        let refused = VerificationEvent(
            verificationID: id, kind: .statusChanged, at: now,
            detail: [
                "status": "blocked", "reason": "recent_sim_swap", "provider": rule.providerID,
                "max_age_hours": String(rule.maxAgeHours),
            ])
        try await store.insert(record, events: events + [refused])
        await countRefusal?("risk:sim_swap", now)
        metrics.finished(record)
        logger.notice(
            "start refused: recent sim swap",
            metadata: ["verification.id": "\(id)", "to": "\(request.destination.masked)"])
        throw GatewayError(
            .recentSimSwap,
            "The SIM behind this number changed within the last \(rule.maxAgeHours) hours; nothing was sent. "
                + "Verify the user another way.")
    }
}
