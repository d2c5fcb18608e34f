import Foundation

/// Adaptive routes in the engine (docs/routing.md §3a): which candidates the bandit may choose from, the
/// choice put first, and each verification's outcome counted back into its context.
extension VerificationService {
    /// On an adaptive route, reorders `candidates`: the bandit's choice first, then the other eligible
    /// providers of the route by their sampled score, then the rest (ineligible ones, which the start passes
    /// over with their reason, and the fallbacks) in their order. Eligible: a provider of the route that
    /// routing did not drop (unknown, channel, excluded or unserved country), that the request's app
    /// verification satisfies, and whose breaker would let a call through. Nil when the route is not
    /// adaptive or nothing is eligible.
    func chooseAdaptive(
        _ request: StartVerification, decision: RoutingTable.Decision, candidates: inout [any VerificationProvider]
    ) async -> AdaptiveChoice? {
        guard let route = decision.adaptive, let adaptive else { return nil }
        let eligible = candidates.filter { provider in
            guard route.policy.providers.contains(provider.id) else { return false }
            if (try? Self.checkAppVerification(request, for: provider)) == nil { return false }
            return breakers.wouldAllow(provider.id, country: decision.country)
        }
        .map(\.id)
        guard !eligible.isEmpty else { return nil }
        var sticky: String?
        do {
            sticky = try await store.openProvider(
                destination: request.destination.value, route: decision.route, at: clock.now)
        } catch {
            logger.warning(
                "open verification not looked up for an adaptive start", metadata: ["route": "\(decision.route)"])
        }
        let choice = await adaptive.choose(
            route: decision.route, adaptive: route, country: decision.country, eligible: eligible, sticky: sticky)
        let first = choice.order.compactMap { id in candidates.first { $0.id == id } }
        candidates = first + candidates.filter { !choice.order.contains($0.id) }
        return choice
    }

    /// Counts, in its adaptive context, a verification that this write moved from pending to final, for the
    /// provider its start was counted for (an own-code verification's first sender, which a delivery failover
    /// or a resend through another provider does not change). On a route that learns from deliveries only an
    /// approval counts, as the first message's delivery, when every message went through that provider and no
    /// receipt was counted first (``countAdaptiveDelivery(_:providerID:delivered:)``).
    func countAdaptiveOutcome(from previous: VerificationRecord, to next: VerificationRecord) async {
        guard let adaptive, next.adaptiveContext != nil, previous.status != next.status else { return }
        let sends =
            registry.provider(next.providerID) is OwnCodeProvider
            ? next.providerState.ownCodeState?.sends ?? [] : []
        if let route = next.route, adaptive.policies[route]?.objective.countsDeliveries == true {
            guard previous.status == .pending, next.status == .approved, let first = sends.first,
                sends.allSatisfy({ $0.provider == first.provider })
            else { return }
            await countAdaptiveDelivery(next, providerID: first.provider, delivered: true)
            return
        }
        await adaptive.countOutcome(previous: previous.status, next, providerID: sends.first?.provider)
    }

    /// On a route that learns from deliveries: counts whether the start's first message was delivered, once
    /// per verification (a claim in the store settles a receipt and an approval arriving together, on one
    /// instance or two).
    func countAdaptiveDelivery(_ record: VerificationRecord, providerID: String, delivered: Bool) async {
        guard let adaptive, let context = record.adaptiveContext, let route = record.route,
            adaptive.policies[route]?.objective.countsDeliveries == true
        else { return }
        let key = IdempotencyKey(scope: "adaptive-delivery", key: record.id)
        let token = UUID().uuidString
        do {
            switch try await store.claimIdempotencyKey(
                key, fingerprint: "delivery", token: token, at: clock.now, lease: 60)
            {
            case .claimed, .takenOver: break
            case .replay, .inProgress, .mismatch: return
            }
        } catch {
            logger.warning(
                "adaptive delivery not counted",
                metadata: ["verification.id": "\(record.id)", "error.code": "\(error.code.rawValue)"])
            return
        }
        await adaptive.countResult(
            route: route, context: context, providerID: providerID, startedAt: record.createdAt, success: delivered)
        _ = try? await store.completeIdempotencyKey(
            key, token: token, response: StoredResponse(status: 200, body: Data()))
    }
}
