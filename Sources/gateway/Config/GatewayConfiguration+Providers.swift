import Foundation
import GatewayCore

/// Where the parts of a configuration are that problems found after reading refer to: a plugin's problems
/// with a provider, the routing table's problems with a route.
struct ConfigSources: Sendable {
    struct Provider: Sendable {
        var id: String
        var position: SourcePosition?
        /// Where `plugin` is, for a plugin that is not installed.
        var pluginPosition: SourcePosition?
        /// Each setting's key (`auth_token` for `auth_token_env`) and where it is.
        var settings: [String: SourcePosition] = [:]
        /// Whether reading the entry found nothing wrong; only then do its plugin's own checks mean anything.
        var readCleanly = true

        /// Where a plugin's problem points: the setting it names in backquotes, else the provider's entry.
        func position(of problem: String) -> SourcePosition? {
            if problem.contains("unknown plugin `") { return pluginPosition ?? position }
            return settings.first { problem.contains("`\($0.key)`") }?.value ?? position
        }
    }

    var providers: [Provider] = []
    /// Routing problems by the label the routing table starts them with (`routing: route `uk``), longest first.
    var routingLabels: [(label: String, position: SourcePosition?)] = []
    /// Channel routes by channel, for `routing: provider `x` cannot send sms`.
    var channelRoutes: [Channel: SourcePosition] = [:]
    var routingSection: SourcePosition?

    /// Where one of the routing table's problems points.
    func position(ofRoutingProblem problem: String) -> SourcePosition? {
        if let match = routingLabels.first(where: { problem.hasPrefix($0.label) }) { return match.position }
        if let (_, position) = channelRoutes.first(where: { problem.hasSuffix(" cannot send \($0.key.rawValue)") }) {
            return position
        }
        return routingSection
    }
}

extension GatewayConfiguration {
    /// `providers`: each `{id, plugin, settings}`; a setting `<name>_env: VARIABLE` is read from the environment,
    /// and a plugin's secret given in clear is refused.
    mutating func readProviders(
        _ top: ConfigMap, plugins: [GatewayPlugin], environment: [String: String], sources: inout ConfigSources
    ) {
        guard let items = top.list("providers") else { return }
        let pluginsByID = Dictionary(plugins.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var seen: Set<String> = []
        for item in items {
            guard let entry = item.map() else { continue }
            let problemsBefore = top.log.problems.count
            entry.rejectUnknown(["id", "plugin", "settings", "senders"])
            var plugin: String?
            if entry.has("plugin") {
                // A former name of an installed plugin (`nexmo`) is that plugin.
                plugin = entry.string("plugin", nonEmpty: true).map { named in
                    pluginsByID[named] == nil ? InstalledPlugins.aliases[named] ?? named : named
                }
            } else {
                entry.problem("\(entry.path): `plugin` is required")
            }
            let id = entry.string("id", message: "\(entry.path): `id` must be a string") ?? plugin
            var source = ConfigSources.Provider(
                id: id ?? entry.path, position: entry.position, pluginPosition: entry.position(of: "plugin"))
            if let id, !seen.insert(id).inserted {
                entry.problem("provider id `\(id)` is configured twice", at: entry.has("id") ? "id" : "plugin")
            }
            let label = "provider \(id ?? entry.path)"
            var settings: [String: String] = [:]
            if let map = entry.map("settings", message: "\(label): `settings` must be a mapping") {
                let secretNames = Set(plugin.flatMap { pluginsByID[$0] }?.settings.filter(\.isSecret).map(\.name) ?? [])
                for member in map.node.members ?? [] {
                    let key = member.key
                    let name = key.hasSuffix("_env") ? String(key.dropLast(4)) : key
                    source.settings[name] = member.value.position ?? member.keyPosition
                    guard let text = member.value.scalarText else {
                        map.problem("\(label): setting `\(key)` must be a scalar", at: key)
                        continue
                    }
                    if key.hasSuffix("_env") {
                        if let resolved = environment[text], !resolved.isEmpty {
                            settings[name] = resolved
                        } else {
                            map.problem("\(label): environment variable \(text) (for `\(name)`) is not set", at: key)
                            settings[name] = "<unset>"
                        }
                    } else {
                        if secretNames.contains(key) {
                            top.log.problem(
                                "\(label): `\(key)` is a secret; give it as `\(key)_env: VARIABLE`, not in the file",
                                at: member.keyPosition)
                        }
                        settings[key] = text
                    }
                }
            }
            if let senders = entry.map(
                "senders", message: "\(label): `senders` must map `default` and regions to senders")
            {
                if let plugin, pluginsByID[plugin]?.sendsOwnCodes == false {
                    entry.problem(
                        "\(label): `senders` is for providers of messaging plugins; plugin \(plugin) sends its vendor's own "
                            + "messages", at: "senders")
                } else if let table = Self.readSenders(senders, label: label), let id {
                    ownCodes.senders[id] = table
                }
            }
            source.readCleanly = top.log.problems.count == problemsBefore
            guard let id, let plugin else { continue }
            sources.providers.append(source)
            providers.append(ProviderConfiguration(id: id, plugin: plugin, settings: settings))
        }
    }

    /// `api_keys`: each `{name, key_env | key_sha256, scopes, countries, starts_per_hour}`.
    mutating func readAPIKeys(_ top: ConfigMap, environment: [String: String]) {
        guard let items = top.list("api_keys") else { return }
        for item in items {
            guard let entry = item.map() else { continue }
            entry.rejectUnknown(
                ["name", "key_env", "key_sha256", "scopes", "countries", "starts_per_hour"],
                hints: ["key": "give the key as key_env or key_sha256, never in clear"])
            if !entry.has("name") { entry.problem("\(entry.path): `name` is required") }
            let name = entry.string("name", message: "\(entry.path): `name` is required") ?? entry.path
            let label = "api key \(name)"
            var hash: String?
            if entry.has("key_env") {
                let message = "\(label): `key_env` must name an environment variable"
                if let variable = entry.string("key_env", nonEmpty: true, message: message) {
                    if let secret = environment[variable], secret.count >= 16 {
                        hash = APIKeyring.hash(secret)
                    } else {
                        entry.problem(
                            "\(label): environment variable \(variable) is not set or shorter than 16 characters",
                            at: "key_env")
                    }
                }
            } else if entry.has("key_sha256") {
                let message = "\(label): key_sha256 must be 64 hex digits"
                if let digest = entry.string("key_sha256", message: message) {
                    if digest.count == 64, digest.allSatisfy(\.isHexDigit) {
                        hash = digest.lowercased()
                    } else {
                        entry.problem(message, at: "key_sha256")
                    }
                }
            } else {
                entry.problem("\(label): give `key_env` or `key_sha256`")
            }
            var scopes: Set<APIKey.Scope> = [.verify]
            if let names = entry.stringList("scopes", message: "\(label): `scopes` must be a list") {
                scopes = []
                for (index, scopeName) in names.enumerated() {
                    if let scope = APIKey.Scope(rawValue: scopeName) {
                        scopes.insert(scope)
                    } else {
                        top.log.problem(
                            "\(label): unknown scope `\(scopeName)` (verify, admin, read)",
                            at: entry.value("scopes")?.node.items?[index].position)
                    }
                }
            }
            let countries = entry.value("countries").flatMap { regionList($0, "\(label): `countries`") }
            let startsPerHour = entry.int(
                "starts_per_hour", atLeast: 1,
                message: "\(label): `starts_per_hour` must be a whole number of at least 1")
            if let hash {
                apiKeys.append(
                    KeyEntry(name: name, hash: hash, scopes: scopes, countries: countries, startsPerHour: startsPerHour)
                )
            }
        }
    }
}

/// A list of region codes (`[GB, us]` → `["GB", "US"]`), or nil with a problem named `what` at the first
/// item that is not one.
func regionList(_ value: ConfigValue, _ what: String) -> Set<String>? {
    let message = "\(what) must be a list of region codes such as [GB, US]"
    guard let items = value.node.items else {
        value.problem(message)
        return nil
    }
    var regions: Set<String> = []
    for item in items {
        guard let code = item.string, PhoneRegion.named(code.uppercased()) != nil else {
            value.log.problem(message, at: item.position ?? value.position)
            return nil
        }
        regions.insert(code.uppercased())
    }
    return regions
}
