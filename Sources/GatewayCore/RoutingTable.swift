/// The first routing step: an ordered list of providers per channel, tried one at a time.
///
/// Weighted experiments, country matches and circuit breakers come later (DESIGN.md §6); this table
/// already gives the router its candidates and the reasons some were skipped.
public struct RoutingTable: Sendable, Equatable {
    /// Provider ids per channel, most preferred first.
    public var routes: [Channel: [String]]
    /// Used for channels with no route of their own.
    public var defaultOrder: [String]

    public init(routes: [Channel: [String]] = [:], defaultOrder: [String]) {
        self.routes = routes
        self.defaultOrder = defaultOrder
    }

    /// Every problem with this table against a registry: unknown providers, providers that cannot
    /// serve the channel they are routed for.
    public func problems(against registry: ProviderRegistry) -> [String] {
        var problems: [String] = []
        for id in defaultOrder where registry.provider(id) == nil {
            problems.append("routing: default order names unknown provider `\(id)`")
        }
        for channel in Channel.allCases {
            guard let ids = routes[channel] else { continue }
            if ids.isEmpty { problems.append("routing: route for \(channel.rawValue) lists no provider") }
            for id in ids {
                guard let provider = registry.provider(id) else {
                    problems.append("routing: route for \(channel.rawValue) names unknown provider `\(id)`")
                    continue
                }
                if !provider.capabilities.channels.contains(channel) {
                    problems.append("routing: provider `\(id)` cannot send \(channel.rawValue)")
                }
            }
        }
        return problems
    }

    /// Why a provider was not tried.
    public struct Skip: Sendable, Equatable {
        public var providerID: String
        public var reason: String

        public init(providerID: String, reason: String) {
            self.providerID = providerID
            self.reason = reason
        }
    }

    /// The providers to try for `request`, in order, and the ones passed over with the reason.
    public func candidates(
        for request: StartVerification, registry: ProviderRegistry
    ) -> (candidates: [any VerificationProvider], skipped: [Skip]) {
        let ids: [String]
        if let forced = request.forcedProvider {
            ids = [forced]
        } else {
            ids = routes[request.channel] ?? defaultOrder
        }
        var candidates: [any VerificationProvider] = []
        var skipped: [Skip] = []
        for id in ids {
            guard let provider = registry.provider(id) else {
                skipped.append(Skip(providerID: id, reason: "unknown_provider"))
                continue
            }
            if !provider.capabilities.channels.contains(request.channel) {
                skipped.append(Skip(providerID: id, reason: "channel_not_supported"))
                continue
            }
            candidates.append(provider)
        }
        return (candidates, skipped)
    }
}
