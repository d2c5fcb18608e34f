import Foundation
import GatewayCore

/// The routing part of the configuration file (docs/routing.md):
///
/// ```yaml
/// routing:
///   default: [twilio, firebase]          # when no route matches
///   channels: {voice: [twilio]}          # per channel, when no route matches
///   routes:                              # first match wins
///     - name: uk
///       match: {channels: [sms], countries: [GB], api_keys: [backend]}
///       providers: [twilio]              # or: experiment: NAME, or adaptive: {…}
///       fallbacks: [firebase]
///       failover_on_timeout: false
///     - name: sms-adaptive
///       match: {channels: [sms]}
///       adaptive: {providers: [twilio, sinch, vonage], objective: conversions_per_cost, per: [country, channel],
///                  min_share: 0.05, window: 24h}
/// experiments:
///   - name: twilio-vs-firebase
///     salt: "2026-11"
///     arms:
///       - {name: twilio, provider: twilio, weight: 50, control: true}
///       - {name: firebase, provider: firebase, weight: 50}
/// ```
extension GatewayConfiguration {
    /// A provider id named somewhere in the routing, to check against the configured providers.
    struct NamedProvider {
        var place: String
        var id: String
        var position: SourcePosition?
    }

    mutating func readRouting(_ top: ConfigMap, knownProviders: Set<String>, sources: inout ConfigSources) {
        var table = RoutingTable(defaultOrder: providers.map(\.id))
        var named: [NamedProvider] = []
        sources.routingSection = top.keyPosition("routing")
        if let routing = top.map("routing") {
            routing.rejectUnknown(["default", "channels", "routes"])
            if let ids = providerIDs(routing.value("default"), "routing.default", "routing.default", &named) {
                table.defaultOrder = ids
                sources.routingLabels.append(("routing: default order", routing.position(of: "default")))
            }
            if let channels = routing.map(
                "channels", message: "routing.channels must be a mapping of channel to provider ids")
            {
                for member in channels.node.members ?? [] {
                    guard let channel = Channel(rawValue: member.key) else {
                        routing.log.problem("routing.channels: unknown channel `\(member.key)`", at: member.keyPosition)
                        continue
                    }
                    let value = ConfigValue(
                        node: member.value, name: "routing.channels.\(member.key)", log: routing.log)
                    guard let ids = providerIDs(value, value.name, value.name, &named) else { continue }
                    table.routes[channel] = ids
                    sources.channelRoutes[channel] = value.position ?? member.keyPosition
                    sources.routingLabels.append(("routing: route for \(channel.rawValue)", value.position))
                }
            }
            for item in routing.list("routes", message: "routing.routes must be a list") ?? [] {
                if let route = readRoute(item, named: &named) {
                    table.rules.append(route)
                    sources.routingLabels.append(("routing: route `\(route.name)`", item.position))
                }
            }
        }
        if let value = top.value("risk") { policy.risk = readRisk(value, label: "risk", named: &named) }
        for item in top.list("experiments") ?? [] {
            guard let experiment = readExperiment(item, named: &named) else { continue }
            if table.experiments[experiment.name] != nil {
                item.problem("experiments: `\(experiment.name)` is defined twice")
            }
            table.experiments[experiment.name] = experiment
            sources.routingLabels.append(("routing: experiment `\(experiment.name)`", item.position))
        }
        // `route `uk`` must not take the problems of `route `uk-north``: the longest label that fits wins.
        sources.routingLabels.sort { $0.label.count > $1.label.count }
        guard top.has("routing") || top.has("experiments") else {
            for name in named where !knownProviders.contains(name.id) {
                top.log.problem("\(name.place): unknown provider `\(name.id)`", at: name.position)
            }
            return
        }
        routing = table
        // What needs no provider is reported with the reading's problems, so they all come at once.
        for problem in table.structuralProblems() {
            top.log.problem(problem, at: sources.position(ofRoutingProblem: problem))
        }
        for name in named where !knownProviders.contains(name.id) {
            top.log.problem("\(name.place): unknown provider `\(name.id)`", at: name.position)
        }
    }

    /// A list of provider ids, each remembered with where it is.
    private func providerIDs(
        _ value: ConfigValue?, _ what: String, _ place: String, _ named: inout [NamedProvider]
    ) -> [String]? {
        guard let value, let ids = value.stringList(message: "\(what) must be a list of provider ids") else {
            return nil
        }
        let items = value.node.items ?? []
        named += zip(ids, items).map { NamedProvider(place: place, id: $0, position: $1.position) }
        return ids
    }

    private func readRoute(_ item: ConfigValue, named: inout [NamedProvider]) -> Route? {
        guard let entry = item.map() else { return nil }
        entry.rejectUnknown([
            "name", "match", "providers", "experiment", "adaptive", "fallbacks", "failover_on_timeout", "delivery",
            "risk",
        ])
        guard let name = entry.string("name", nonEmpty: true, message: "\(entry.path): `name` is required") else {
            if !entry.has("name") { entry.problem("\(entry.path): `name` is required") }
            return nil
        }
        let label = "route `\(name)`"
        var route = Route(name: name, target: .providers([]))
        if let match = entry.map("match", message: "\(label): `match` must be a mapping") {
            for member in match.node.members ?? [] where !["channels", "countries", "api_keys"].contains(member.key) {
                match.log.problem("\(label): unknown match key `\(member.key)`", at: member.keyPosition)
            }
            if let channels = match.value("channels") {
                route.channels = Set(
                    names(channels, "\(label): `match.channels` must be a list", Channel.init(rawValue:)) {
                        "\(label): unknown channel `\($0)`"
                    } ?? [])
            }
            if let countries = match.value("countries") {
                route.countries = Set(
                    names(countries, "\(label): `match.countries` must be a list of region codes") {
                        PhoneRegion.named($0)?.code
                    } unknown: {
                        "\(label): `\($0)` is not a region code"
                    } ?? [])
            }
            if let keys = match.stringList(
                "api_keys", message: "\(label): `match.api_keys` must be a list of API key names")
            {
                route.apiKeys = Set(keys)
            }
        }
        let targets = ["providers", "experiment", "adaptive"].filter { entry.has($0) }
        switch targets.first {
        case _ where targets.count > 1:
            entry.problem("\(label): give one of `providers`, `experiment` or `adaptive`, not \(targets.count)")
        case "providers":
            route.target = .providers(
                providerIDs(entry.value("providers"), "\(label): `providers`", label, &named) ?? [])
        case "experiment":
            route.target = .experiment(
                entry.string("experiment", message: "\(label): `experiment` must be an experiment's name") ?? "")
        case "adaptive":
            if let policy = readAdaptive(entry.value("adaptive"), label: label, named: &named) {
                route.target = .adaptive(policy)
            }
        default:
            entry.problem("\(label): give `providers`, `experiment` or `adaptive`")
        }
        route.fallbacks =
            providerIDs(entry.value("fallbacks"), "\(label): `fallbacks`", "\(label) fallbacks", &named) ?? []
        route.failoverOnTimeout =
            entry.bool("failover_on_timeout", message: "\(label): `failover_on_timeout` must be true or false") ?? false
        if let value = entry.value("delivery") { route.delivery = readDelivery(value, label: label) }
        if let value = entry.value("risk") { route.risk = readRisk(value, label: label, named: &named) }
        return route
    }

    /// A route's delivery settings (docs/routing.md, "Delivery failover"): `{deliver_within: 20s, failover: true}`,
    /// both optional; nil after logging why not.
    private func readDelivery(_ value: ConfigValue, label: String) -> DeliveryPolicy? {
        guard let fields = value.map(message: "\(label): `delivery` must be a mapping") else { return nil }
        fields.rejectUnknown(["deliver_within", "failover"])
        var policy = DeliveryPolicy()
        if let within = fields.value("deliver_within") {
            if let seconds = Self.duration(within.node), (1...3600).contains(seconds) {
                policy.deliverWithin = seconds
            } else {
                within.problem("\(label): `delivery.deliver_within` must be a duration from 1s to 1h, such as 20s")
            }
        }
        policy.failover =
            fields.bool("failover", message: "\(label): `delivery.failover` must be true or false") ?? true
        return policy
    }

    /// An adaptive route's settings (docs/routing.md §3a); nil after logging why not. The problems of the
    /// values together (`min_share` against the number of providers) come with the table's structural ones.
    private func readAdaptive(_ value: ConfigValue?, label: String, named: inout [NamedProvider]) -> AdaptivePolicy? {
        guard let value, let fields = value.map(message: "\(label): `adaptive` must be a mapping") else { return nil }
        fields.rejectUnknown(["providers", "objective", "per", "min_share", "window", "settle_after"])
        var policy = AdaptivePolicy(providers: [])
        if let list = fields.value("providers") {
            policy.providers = providerIDs(list, "\(label): `adaptive.providers`", label, &named) ?? []
        } else {
            fields.problem("\(label): `adaptive.providers` is required")
        }
        if let objective = fields.value("objective") {
            policy.objective =
                objective.choice(
                    AdaptivePolicy.Objective.self,
                    message:
                        "\(label): `adaptive.objective` must be conversions, conversions_per_cost, deliveries or "
                        + "deliveries_per_cost")
                ?? .conversions
        }
        if let per = fields.value("per") {
            policy.dimensions = Set(
                names(per, "\(label): `adaptive.per` must be a list of country, channel") {
                    AdaptivePolicy.Dimension(rawValue: $0)
                } unknown: {
                    "\(label): `adaptive.per`: `\($0)` is not one of country, channel"
                } ?? [])
        }
        if let share = fields.value("min_share") {
            policy.minShare =
                share.number(in: 0...1, message: "\(label): `adaptive.min_share` must be a number from 0 to 1") ?? 0
        }
        if let window = fields.value("window") {
            if let seconds = Self.duration(window.node) {
                policy.window = seconds
            } else {
                window.problem("\(label): `adaptive.window` must be a duration such as 90s, 30m, 24h or 7d")
            }
        }
        if let settle = fields.value("settle_after") {
            if let seconds = Self.duration(settle.node) {
                policy.settleAfter = seconds
            } else {
                settle.problem("\(label): `adaptive.settle_after` must be a duration such as 90s or 2m")
            }
        }
        return policy
    }

    /// A duration: a number of seconds, or a number followed by `s`, `m`, `h` or `d` (`24h`, `1.5d`).
    static func duration(_ node: ConfigNode) -> TimeInterval? {
        if let number = node.number { return number > 0 ? number : nil }
        guard let text = node.string?.trimmingCharacters(in: .whitespaces), let unit = text.last else { return nil }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let scale = units[unit], let amount = Double(text.dropLast()), amount > 0, amount.isFinite else {
            return nil
        }
        return amount * scale
    }

    /// Names read from a list, each read by `parse`; a name it refuses is logged where it is (`unknown`
    /// words the problem) and left out.
    private func names<T>(
        _ value: ConfigValue, _ message: String, _ parse: (String) -> T?, unknown: (String) -> String
    ) -> [T]? {
        guard let names = value.stringList(message: message) else { return nil }
        var parsed: [T] = []
        for (name, item) in zip(names, value.node.items ?? []) {
            if let element = parse(name) {
                parsed.append(element)
            } else {
                value.log.problem(unknown(name), at: item.position)
            }
        }
        return parsed
    }

    private func readExperiment(_ item: ConfigValue, named: inout [NamedProvider]) -> Experiment? {
        guard let entry = item.map() else { return nil }
        entry.rejectUnknown(["name", "salt", "arms"])
        guard let name = entry.string("name", nonEmpty: true, message: "\(entry.path): `name` is required") else {
            if !entry.has("name") { entry.problem("\(entry.path): `name` is required") }
            return nil
        }
        let label = "experiment `\(name)`"
        var experiment = Experiment(name: name, arms: [])
        if let salt = entry.value("salt") {
            // `salt: 2026` is the text 2026, as the number a YAML reader makes of it.
            if let text = salt.node.string ?? salt.node.number.flatMap({ _ in salt.node.scalarText }) {
                experiment.salt = text
            } else {
                salt.problem("\(label): `salt` must be a string")
            }
        }
        guard let arms = entry.list("arms", message: "\(label): `arms` must be a list") else {
            if !entry.has("arms") { entry.problem("\(label): `arms` must be a list") }
            return experiment
        }
        for (index, item) in arms.enumerated() {
            let at = "\(label): arms[\(index)]"
            guard let arm = item.map(message: "\(at) must be a mapping") else { continue }
            for member in arm.node.members ?? [] where !["name", "provider", "weight", "control"].contains(member.key) {
                arm.log.problem("\(at): unknown key `\(member.key)`", at: member.keyPosition)
            }
            guard let provider = arm.string("provider", message: "\(at): `provider` is required") else {
                if !arm.has("provider") { arm.problem("\(at): `provider` is required") }
                continue
            }
            named.append(NamedProvider(place: label, id: provider, position: arm.position(of: "provider")))
            let armName = arm.value("name")?.node.string ?? provider
            let weightMessage = "\(label): arm `\(armName)`: `weight` must be a whole number"
            let weight = arm.value("weight")?.int(in: Int.min...Int.max, message: weightMessage)
            if !arm.has("weight") { arm.problem(weightMessage) }
            let control = arm.bool("control", message: "\(label): arm `\(armName)`: `control` must be true or false")
            experiment.arms.append(
                Experiment.Arm(name: armName, providerID: provider, weight: weight ?? 0, isControl: control ?? false))
        }
        return experiment
    }
}
