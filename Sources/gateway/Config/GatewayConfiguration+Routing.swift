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
/// breakers: {consecutive_failures: 5, failure_rate: 0.5, window_seconds: 60, min_requests: 10,
///            cooldown_seconds: 30, max_cooldown_seconds: 600}
/// test_numbers: {"+15005550006": "424242"}
/// prices: {twilio: {default: 0.05, GB: 0.04}, firebase: {default: 0.01}}
/// ```
extension GatewayConfiguration {
    mutating func parseRouting(_ top: [String: JSONValue], knownProviders: Set<String>, problems: inout [String]) {
        var table = RoutingTable(defaultOrder: providers.map(\.id))
        if let value = top["routing"] {
            if case .object(let routing) = value {
                for key in routing.keys.sorted() where !["default", "channels", "routes"].contains(key) {
                    problems.append("routing: unknown key `\(key)`")
                }
                if let list = routing["default"] {
                    if let ids = list.stringList {
                        table.defaultOrder = ids
                    } else {
                        problems.append("routing.default must be a list of provider ids")
                    }
                }
                if case .object(let channels)? = routing["channels"] {
                    for (name, list) in channels.sorted(by: { $0.key < $1.key }) {
                        guard let channel = Channel(rawValue: name) else {
                            problems.append("routing.channels: unknown channel `\(name)`")
                            continue
                        }
                        guard let ids = list.stringList else {
                            problems.append("routing.channels.\(name) must be a list of provider ids")
                            continue
                        }
                        table.routes[channel] = ids
                    }
                } else if routing["channels"] != nil {
                    problems.append("routing.channels must be a mapping of channel to provider ids")
                }
                if let raw = routing["routes"] {
                    if case .array(let items) = raw {
                        for (index, item) in items.enumerated() {
                            if let route = Self.parseRoute(item, index: index, problems: &problems) {
                                table.rules.append(route)
                            }
                        }
                    } else {
                        problems.append("routing.routes must be a list")
                    }
                }
            } else {
                problems.append("`routing` must be a mapping")
            }
        }
        if let raw = top["experiments"] {
            if case .array(let items) = raw {
                for (index, item) in items.enumerated() {
                    guard let experiment = Self.parseExperiment(item, index: index, problems: &problems) else {
                        continue
                    }
                    if table.experiments[experiment.name] != nil {
                        problems.append("experiments: `\(experiment.name)` is defined twice")
                    }
                    table.experiments[experiment.name] = experiment
                }
            } else {
                problems.append("`experiments` must be a list")
            }
        }
        if top["routing"] != nil || top["experiments"] != nil {
            routing = table
            // What needs no provider is reported with the parse problems, so they all come at once.
            problems += table.structuralProblems()
            var named: [(String, String)] = table.defaultOrder.map { ("routing.default", $0) }
            for (channel, ids) in table.routes { named += ids.map { ("routing.channels.\(channel.rawValue)", $0) } }
            for rule in table.rules {
                if case .providers(let ids) = rule.target { named += ids.map { ("route `\(rule.name)`", $0) } }
                named += rule.fallbacks.map { ("route `\(rule.name)` fallbacks", $0) }
            }
            for experiment in table.experiments.values {
                named += experiment.arms.map { ("experiment `\(experiment.name)`", $0.providerID) }
            }
            for (place, id) in named.sorted(by: { $0.0 + $0.1 < $1.0 + $1.1 }) where !knownProviders.contains(id) {
                problems.append("\(place): unknown provider `\(id)`")
            }
        }

        if let raw = top["breakers"] {
            if case .object(let fields) = raw {
                for key in fields.keys.sorted()
                where ![
                    "consecutive_failures", "failure_rate", "window_seconds", "min_requests", "cooldown_seconds",
                    "max_cooldown_seconds",
                ].contains(key) {
                    problems.append("breakers: unknown key `\(key)`")
                }
                func number(_ key: String, _ range: ClosedRange<Double>) -> Double? {
                    guard let value = fields[key] else { return nil }
                    guard case .number(let number) = value, range.contains(number) else {
                        problems.append(
                            "breakers.\(key) must be a number from \(range.lowerBound) to \(range.upperBound)")
                        return nil
                    }
                    return number
                }
                if let value = number("consecutive_failures", 1...1000) { breakers.consecutiveFailures = Int(value) }
                if let value = number("failure_rate", 0.01...1) { breakers.failureRate = value }
                if let value = number("window_seconds", 1...86_400) { breakers.window = value }
                if let value = number("min_requests", 1...100_000) { breakers.minimumRequests = Int(value) }
                if let value = number("cooldown_seconds", 1...86_400) { breakers.cooldown = value }
                if let value = number("max_cooldown_seconds", 1...86_400) { breakers.maximumCooldown = value }
                if breakers.maximumCooldown < breakers.cooldown {
                    problems.append("breakers.max_cooldown_seconds must not be less than cooldown_seconds")
                }
            } else {
                problems.append("`breakers` must be a mapping")
            }
        }

        if let raw = top["test_numbers"] {
            if case .object(let entries) = raw {
                for (number, code) in entries.sorted(by: { $0.key < $1.key }) {
                    guard let parsed = try? PhoneNumber(parsing: number), parsed.e164 == number else {
                        problems.append("test_numbers: `\(number)` must be a phone number in E.164 (`+15005550006`)")
                        continue
                    }
                    guard case .string(let text) = code, (4...10).contains(text.count), text.allSatisfy(\.isASCII),
                        text.allSatisfy(\.isNumber)
                    else {
                        problems.append(
                            "test_numbers: the code for \(number) must be a quoted string of 4 to 10 digits")
                        continue
                    }
                    policy.testNumbers[number] = text
                }
            } else {
                problems.append("`test_numbers` must be a mapping of E.164 number to code")
            }
        }

        if let raw = top["prices"] {
            if case .object(let byProvider) = raw {
                for (provider, table) in byProvider.sorted(by: { $0.key < $1.key }) {
                    guard case .object(let byCountry) = table else {
                        problems.append("prices.\(provider) must be a mapping of country (or `default`) to price")
                        continue
                    }
                    for (country, price) in byCountry.sorted(by: { $0.key < $1.key }) {
                        guard case .number(let amount) = price, amount >= 0 else {
                            problems.append("prices.\(provider).\(country) must be a number not below 0")
                            continue
                        }
                        if country != "default" && PhoneRegion.named(country) == nil {
                            problems.append("prices.\(provider): `\(country)` is not a region code")
                            continue
                        }
                        prices.set(
                            amount, provider: provider, country: country == "default" ? nil : country.uppercased())
                    }
                }
            } else {
                problems.append("`prices` must be a mapping of provider to prices")
            }
        }
    }

    static func parseRoute(_ item: JSONValue, index: Int, problems: inout [String]) -> Route? {
        guard case .object(let entry) = item else {
            problems.append("routing.routes[\(index)] must be a mapping")
            return nil
        }
        var label = "routing.routes[\(index)]"
        for key in entry.keys.sorted()
        where !["name", "match", "providers", "experiment", "fallbacks", "failover_on_timeout"].contains(key) {
            problems.append("\(label): unknown key `\(key)`")
        }
        guard case .string(let name)? = entry["name"], !name.isEmpty else {
            problems.append("\(label): `name` is required")
            return nil
        }
        label = "route `\(name)`"
        var route = Route(name: name, target: .providers([]))
        if let raw = entry["match"] {
            guard case .object(let match) = raw else {
                problems.append("\(label): `match` must be a mapping")
                return nil
            }
            for key in match.keys.sorted() where !["channels", "countries", "api_keys"].contains(key) {
                problems.append("\(label): unknown match key `\(key)`")
            }
            if let raw = match["channels"] {
                if let names = raw.stringList {
                    var channels = Set<Channel>()
                    for name in names {
                        if let channel = Channel(rawValue: name) {
                            channels.insert(channel)
                        } else {
                            problems.append("\(label): unknown channel `\(name)`")
                        }
                    }
                    route.channels = channels
                } else {
                    problems.append("\(label): `match.channels` must be a list")
                }
            }
            if let raw = match["countries"] {
                if let codes = raw.stringList {
                    var countries = Set<String>()
                    for code in codes {
                        if let region = PhoneRegion.named(code) {
                            countries.insert(region.code)
                        } else {
                            problems.append("\(label): `\(code)` is not a region code")
                        }
                    }
                    route.countries = countries
                } else {
                    problems.append("\(label): `match.countries` must be a list of region codes")
                }
            }
            if let raw = match["api_keys"] {
                if let names = raw.stringList {
                    route.apiKeys = Set(names)
                } else {
                    problems.append("\(label): `match.api_keys` must be a list of API key names")
                }
            }
        }
        switch (entry["providers"], entry["experiment"]) {
        case (let list?, nil):
            if let ids = list.stringList {
                route.target = .providers(ids)
            } else {
                problems.append("\(label): `providers` must be a list of provider ids")
            }
        case (nil, .string(let experiment)?):
            route.target = .experiment(experiment)
        case (nil, _?):
            problems.append("\(label): `experiment` must be an experiment's name")
        case (_?, _?):
            problems.append("\(label): give `providers` or `experiment`, not both")
        case (nil, nil):
            problems.append("\(label): give `providers` or `experiment`")
        }
        if let raw = entry["fallbacks"] {
            if let ids = raw.stringList {
                route.fallbacks = ids
            } else {
                problems.append("\(label): `fallbacks` must be a list of provider ids")
            }
        }
        if let raw = entry["failover_on_timeout"] {
            if case .bool(let flag) = raw {
                route.failoverOnTimeout = flag
            } else {
                problems.append("\(label): `failover_on_timeout` must be true or false")
            }
        }
        return route
    }

    static func parseExperiment(_ item: JSONValue, index: Int, problems: inout [String]) -> Experiment? {
        guard case .object(let entry) = item else {
            problems.append("experiments[\(index)] must be a mapping")
            return nil
        }
        for key in entry.keys.sorted() where !["name", "salt", "arms"].contains(key) {
            problems.append("experiments[\(index)]: unknown key `\(key)`")
        }
        guard case .string(let name)? = entry["name"], !name.isEmpty else {
            problems.append("experiments[\(index)]: `name` is required")
            return nil
        }
        var experiment = Experiment(name: name, arms: [])
        if let raw = entry["salt"] {
            switch raw {
            case .string(let salt): experiment.salt = salt
            case .number(let number): experiment.salt = String(Int64(number))
            default: problems.append("experiment `\(name)`: `salt` must be a string")
            }
        }
        guard case .array(let arms)? = entry["arms"] else {
            problems.append("experiment `\(name)`: `arms` must be a list")
            return experiment
        }
        for (armIndex, rawArm) in arms.enumerated() {
            guard case .object(let arm) = rawArm else {
                problems.append("experiment `\(name)`: arms[\(armIndex)] must be a mapping")
                continue
            }
            for key in arm.keys.sorted() where !["name", "provider", "weight", "control"].contains(key) {
                problems.append("experiment `\(name)`: arms[\(armIndex)]: unknown key `\(key)`")
            }
            guard case .string(let provider)? = arm["provider"] else {
                problems.append("experiment `\(name)`: arms[\(armIndex)]: `provider` is required")
                continue
            }
            var armName = provider
            if case .string(let text)? = arm["name"] { armName = text }
            var weight = 0
            if case .number(let number)? = arm["weight"], let whole = Int(exactly: number) {
                weight = whole
            } else {
                problems.append("experiment `\(name)`: arm `\(armName)`: `weight` must be a whole number")
            }
            var control = false
            if let raw = arm["control"] {
                if case .bool(let flag) = raw {
                    control = flag
                } else {
                    problems.append("experiment `\(name)`: arm `\(armName)`: `control` must be true or false")
                }
            }
            experiment.arms.append(
                Experiment.Arm(name: armName, providerID: provider, weight: weight, isControl: control))
        }
        return experiment
    }
}
