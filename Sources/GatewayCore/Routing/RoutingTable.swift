/// Where starts go: routing rules (channel, country, API key → providers or an experiment, plus
/// fallbacks), then an ordered provider list per channel, then the default order (docs/design.md §6,
/// docs/routing.md).
public struct RoutingTable: Sendable, Equatable {
    /// Provider ids per channel, most preferred first, for requests no rule matches.
    public var routes: [Channel: [String]]
    /// Used when no rule and no channel route matches.
    public var defaultOrder: [String]
    /// Tried in order before `routes`; the first match wins.
    public var rules: [Route]
    /// The experiments rules may name, by name.
    public var experiments: [String: Experiment]

    /// A table with the given rules and routes; `defaultOrder` takes what nothing else does.
    public init(
        routes: [Channel: [String]] = [:], defaultOrder: [String], rules: [Route] = [],
        experiments: [String: Experiment] = [:]
    ) {
        self.routes = routes
        self.defaultOrder = defaultOrder
        self.rules = rules
        self.experiments = experiments
    }

    /// Every problem with this table against a registry: unknown providers, providers that cannot
    /// serve the channel they are routed for, rules no request can reach, experiments that make no sense.
    public func problems(against registry: ProviderRegistry) -> [String] {
        structuralProblems() + providerProblems(against: registry)
    }

    /// The problems that need no provider: unreachable rules, duplicate names, experiments whose weights
    /// or control make no sense, rules naming experiments that do not exist.
    public func structuralProblems() -> [String] {
        var problems: [String] = []
        for (index, rule) in rules.enumerated() {
            let label = "routing: route `\(rule.name)`"
            if rules[..<index].contains(where: { $0.name == rule.name }) {
                problems.append("\(label): the name is used twice")
            }
            if let earlier = rules[..<index].first(where: { rule.isShadowed(by: $0) }) {
                problems.append(
                    "\(label) is unreachable: route `\(earlier.name)` before it matches every request it matches")
            }
            if rule.channels?.isEmpty == true || rule.countries?.isEmpty == true || rule.apiKeys?.isEmpty == true {
                problems.append("\(label): an empty match list matches nothing")
            }
            if case .experiment(let name) = rule.target, experiments[name] == nil {
                problems.append("\(label): names unknown experiment `\(name)`")
            }
            if case .adaptive(let policy) = rule.target { problems += policy.problems(route: rule.name) }
        }
        for experiment in experiments.values.sorted(by: { $0.name < $1.name }) {
            problems += experiment.problems(knownProviders: nil).map { "routing: " + $0 }
        }
        return problems
    }

    /// The problems against the configured providers: unknown ids, channels a provider cannot send.
    public func providerProblems(against registry: ProviderRegistry) -> [String] {
        var problems: [String] = []
        let known = Set(registry.providerIDs)
        for rule in rules {
            let label = "routing: route `\(rule.name)`"
            var ids = rule.fallbacks
            switch rule.target {
            case .providers(let list):
                if list.isEmpty { problems.append("\(label): lists no provider") }
                ids += list
            case .experiment(let name):
                ids += experiments[name]?.arms.map(\.providerID) ?? []
            case .adaptive(let policy):
                ids += policy.providers
            }
            for id in ids {
                guard let provider = registry.provider(id) else {
                    problems.append("\(label): names unknown provider `\(id)`")
                    continue
                }
                for channel in (rule.channels ?? []).sorted(by: { $0.rawValue < $1.rawValue })
                where !provider.capabilities.channels.contains(channel) {
                    problems.append("\(label): provider `\(id)` cannot send \(channel.rawValue)")
                }
            }
            if case .adaptive(let policy) = rule.target, policy.objective.countsDeliveries {
                for id in policy.providers where registry.provider(id).map({ !($0 is OwnCodeProvider) }) == true {
                    problems.append(
                        "\(label): `adaptive.objective: \(policy.objective.rawValue)` learns from delivery receipts, "
                            + "which provider `\(id)` does not send (it is not a messaging provider)")
                }
            }
            if let delivery = rule.delivery, delivery.failover {
                if case .experiment = rule.target {
                    problems.append("\(label): `delivery.failover` needs `providers` or `adaptive`, not an experiment")
                } else if Set(ids).filter({ registry.provider($0) is OwnCodeProvider }).count < 2 {
                    problems.append(
                        "\(label): `delivery.failover` needs at least two providers that send the gateway's own codes")
                }
            }
        }
        for experiment in experiments.values.sorted(by: { $0.name < $1.name }) {
            for arm in experiment.arms where !known.contains(arm.providerID) {
                problems.append(
                    "routing: experiment `\(experiment.name)`: arm `\(arm.name)` names unknown provider `\(arm.providerID)`"
                )
            }
        }
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
        /// The provider passed over.
        public var providerID: String
        /// Why, as a stable code (`unknown_provider`, `channel_not_supported`, `breaker_open`).
        public var reason: String

        /// A skip of `providerID` for `reason`.
        public init(providerID: String, reason: String) {
            self.providerID = providerID
            self.reason = reason
        }

        /// The provider does not run the request's multi-factor step (``StartVerification/multiFactor``).
        public static let multiFactorNotSupported = "multi_factor_not_supported"
        /// The start brings its own code (``StartVerification/customCode``) and the provider's vendor makes its own.
        public static let customCodeNotSupported = "custom_code_not_supported"
    }

    /// Where a start goes and why.
    public struct Decision: Sendable {
        /// The rule that matched: its name, `channel:<channel>`, `default`, or `forced`.
        public var route: String
        /// The experiment the matched rule assigns an arm of, if any.
        public var experiment: String?
        /// The arm the destination fell in, on an experiment rule.
        public var arm: String?
        /// The providers to try, in order.
        public var candidates: [any VerificationProvider]
        /// Providers passed over, with the reason.
        public var skipped: [Skip]
        /// Whether the matched rule fails over even after a timeout that may have sent the code.
        public var failoverOnTimeout: Bool
        /// The destination's country (region of the number), when it has one.
        public var country: String?
        /// Set when an adaptive route matched: the service lets its bandit order the candidates.
        public var adaptive: Adaptive? = nil

        /// What an adaptive route needs to choose: its settings and the context of this start.
        public struct Adaptive: Sendable, Equatable {
            /// The route's settings.
            public var policy: AdaptivePolicy
            /// ``AdaptivePolicy/context(country:channel:)`` of the start.
            public var context: String

            /// What an adaptive route needs for one start.
            public init(policy: AdaptivePolicy, context: String) {
                self.policy = policy
                self.context = context
            }
        }
    }

    /// Decides where `request` goes. Circuit breakers are not consulted here: the service asks them
    /// just before each call, so a half-open probe is only taken by a call that happens.
    public func decide(
        _ request: StartVerification, apiKey: String? = nil, registry: ProviderRegistry
    ) -> Decision {
        let country = request.destination.phoneNumber?.region
        var ids: [String]
        var route: String
        var experimentName: String?
        var armName: String?
        var adaptive: Decision.Adaptive?
        var failoverOnTimeout = false
        if let forced = request.forcedProvider {
            ids = [forced]
            route = "forced"
        } else if let rule = request.route
            ?? rules.first(where: { $0.matches(channel: request.channel, country: country, apiKey: apiKey) })
        {
            route = rule.name
            failoverOnTimeout = rule.failoverOnTimeout
            switch rule.target {
            case .providers(let list):
                ids = list
            case .experiment(let name):
                experimentName = name
                // The E.164 form for phone numbers, so every way of typing a number lands in one arm.
                let arm = experiments[name]?.assign(request.destination.value)
                armName = arm?.name
                ids = arm.map { [$0.providerID] } ?? []
            case .adaptive(let policy):
                // In the configured order here; the service's bandit puts its choice first.
                ids = policy.providers
                adaptive = Decision.Adaptive(
                    policy: policy, context: policy.context(country: country, channel: request.channel))
            }
            for id in rule.fallbacks where !ids.contains(id) { ids.append(id) }
        } else if let list = routes[request.channel] {
            ids = list
            route = "channel:\(request.channel.rawValue)"
        } else {
            ids = defaultOrder
            route = "default"
        }
        var candidates: [any VerificationProvider] = []
        var skipped: [Skip] = []
        for id in ids {
            guard let provider = registry.provider(id) else {
                skipped.append(Skip(providerID: id, reason: "unknown_provider"))
                continue
            }
            if let step = request.multiFactor, !provider.capabilities.multiFactorKinds.contains(step.kind) {
                // The request continues (or enrolls) a user's second factor at a vendor that runs it.
                skipped.append(Skip(providerID: id, reason: Skip.multiFactorNotSupported))
                continue
            }
            if request.customCode != nil, !provider.capabilities.takesCustomCode {
                skipped.append(Skip(providerID: id, reason: Skip.customCodeNotSupported))
                continue
            }
            if !provider.capabilities.channels.contains(request.channel) {
                skipped.append(Skip(providerID: id, reason: "channel_not_supported"))
                continue
            }
            if let country, provider.capabilities.excludedRegions.contains(country) {
                skipped.append(Skip(providerID: id, reason: "country_excluded"))
                continue
            }
            if let country, !provider.capabilities.serves(region: country) {
                skipped.append(Skip(providerID: id, reason: "country_not_served"))
                continue
            }
            if !request.fallbackChannels.isEmpty {
                // Fallback channels run at the vendor (native workflows) or on resend (a channel change).
                let capabilities = provider.capabilities
                let canFallBack = capabilities.nativeWorkflows || capabilities.resendCanChangeChannel
                // A silent step at a provider that cannot send codes: the engine moves to the fallback channels
                // through their own route's providers (``VerificationService/fallsBackInEngine(_:provider:)``).
                let engineFallsBack =
                    request.channel == .silentAuth
                    && VerificationService.fallsBackInEngine(capabilities, fallbackChannels: request.fallbackChannels)
                if !engineFallsBack,
                    !canFallBack || !request.fallbackChannels.allSatisfy(capabilities.channels.contains)
                {
                    skipped.append(Skip(providerID: id, reason: "fallback_channels_not_supported"))
                    continue
                }
            }
            candidates.append(provider)
        }
        return Decision(
            route: route, experiment: experimentName, arm: armName, candidates: candidates, skipped: skipped,
            failoverOnTimeout: failoverOnTimeout, country: country, adaptive: adaptive)
    }

    /// The providers of the route a verification recorded (``Decision/route``), in the route's order with its
    /// fallbacks: what a resend may move along. `nil` for a route that names no fixed list: an experiment (its
    /// arm must stay its arm's), a forced provider, a test number, or a route this table does not hold (a front
    /// door's own).
    public func providerIDs(ofRoute name: String, channel: Channel) -> [String]? {
        if let rule = rules.first(where: { $0.name == name }) {
            var ids: [String]
            switch rule.target {
            case .providers(let list): ids = list
            case .adaptive(let policy): ids = policy.providers
            case .experiment: return nil
            }
            for id in rule.fallbacks where !ids.contains(id) { ids.append(id) }
            return ids
        }
        if name == "channel:\(channel.rawValue)" { return routes[channel] }
        return name == "default" ? defaultOrder : nil
    }

    /// The delivery policy of the route named `name`, when it has one (``Route/delivery``).
    public func delivery(ofRoute name: String) -> DeliveryPolicy? {
        rules.first { $0.name == name }?.delivery
    }

    /// The risk step of the route named `name`, when it has its own (``Route/risk``).
    public func risk(ofRoute name: String) -> RiskPolicy? {
        rules.first { $0.name == name }?.risk
    }

    /// The providers to try for `request`, in order, and the ones passed over with the reason.
    public func candidates(
        for request: StartVerification, registry: ProviderRegistry
    ) -> (candidates: [any VerificationProvider], skipped: [Skip]) {
        let decision = decide(request, registry: registry)
        return (decision.candidates, decision.skipped)
    }
}
