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

    /// Counts, in its adaptive context, a verification that this write moved from pending to final.
    func countAdaptiveOutcome(from previous: VerificationRecord, to next: VerificationRecord) async {
        guard let adaptive, next.adaptiveContext != nil, previous.status != next.status else { return }
        await adaptive.countOutcome(previous: previous.status, next)
    }
}
