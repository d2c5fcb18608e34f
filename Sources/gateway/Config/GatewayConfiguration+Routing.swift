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
///       providers: [twilio]              # or: experiment: NAME
///       fallbacks: [firebase]
///       failover_on_timeout: false
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
        guard top.has("routing") || top.has("experiments") else { return }
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
        entry.rejectUnknown(["name", "match", "providers", "experiment", "fallbacks", "failover_on_timeout"])
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
        switch (entry.value("providers"), entry.value("experiment")) {
        case (let list?, nil):
            route.target = .providers(providerIDs(list, "\(label): `providers`", label, &named) ?? [])
        case (nil, let experiment?):
            route.target = .experiment(
                experiment.string(message: "\(label): `experiment` must be an experiment's name") ?? "")
        case (_?, _?):
            entry.problem("\(label): give `providers` or `experiment`, not both")
        case (nil, nil):
            entry.problem("\(label): give `providers` or `experiment`")
        }
        route.fallbacks =
            providerIDs(entry.value("fallbacks"), "\(label): `fallbacks`", "\(label) fallbacks", &named) ?? []
        route.failoverOnTimeout =
            entry.bool("failover_on_timeout", message: "\(label): `failover_on_timeout` must be true or false") ?? false
        return route
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
