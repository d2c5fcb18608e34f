/// How one provider instance is configured: which plugin, under which id, with which settings.
public struct ProviderConfiguration: Sendable, Equatable {
    /// The provider id routes and API responses use (`twilio-eu`): 1–40 lowercase letters, digits, `-` or `_`.
    public var id: String
    /// The id of the plugin that builds the provider (`twilio`).
    public var plugin: String
    /// The provider's settings for the plugin, secrets already read from the environment.
    public var settings: [String: String]

    /// A configuration of provider `id` built by plugin `plugin`.
    public init(id: String, plugin: String, settings: [String: String]) {
        self.id = id
        self.plugin = plugin
        self.settings = settings
    }
}

/// The installed plugins and the configured providers, built once at startup and immutable after.
public struct ProviderRegistry: Sendable {
    /// The installed plugins, whether or not a provider uses them.
    public let plugins: [GatewayPlugin]
    /// Providers in configuration order.
    public let providers: [any VerificationProvider]
    private let byID: [String: any VerificationProvider]

    /// Builds every configured provider, or throws one error that lists every problem found.
    public init(
        plugins: [GatewayPlugin],
        configurations: [ProviderConfiguration],
        context: (ProviderConfiguration) -> ProviderContext
    ) throws(ConfigurationError) {
        var problems: [String] = []
        var pluginsByID: [String: GatewayPlugin] = [:]
        for plugin in plugins {
            if pluginsByID[plugin.id] != nil { problems.append("plugin id `\(plugin.id)` is installed twice") }
            pluginsByID[plugin.id] = plugin
        }
        var built: [any VerificationProvider] = []
        var seen: Set<String> = []
        for configuration in configurations {
            if !Self.isValidID(configuration.id) {
                problems.append(
                    "provider id `\(configuration.id)` must be 1-40 lowercase letters, digits, `-` or `_`")
            }
            if !seen.insert(configuration.id).inserted {
                problems.append("provider id `\(configuration.id)` is configured twice")
                continue
            }
            guard let plugin = pluginsByID[configuration.plugin] else {
                let known = pluginsByID.keys.sorted().joined(separator: ", ")
                problems.append(
                    "provider \(configuration.id): unknown plugin `\(configuration.plugin)` (installed: \(known))")
                continue
            }
            let settingProblems = plugin.problems(in: configuration.settings, providerID: configuration.id)
            if !settingProblems.isEmpty {
                problems += settingProblems
                continue
            }
            do {
                let provider = try plugin.makeProvider(context(configuration))
                guard provider.id == configuration.id else {
                    problems.append(
                        "provider \(configuration.id): plugin \(plugin.id) built a provider with id `\(provider.id)`")
                    continue
                }
                built.append(provider)
            } catch {
                problems += error.problems
            }
        }
        if configurations.isEmpty { problems.append("no provider is configured") }
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        self.plugins = plugins
        self.providers = built
        self.byID = Dictionary(uniqueKeysWithValues: built.map { ($0.id, $0) })
    }

    /// The configured provider with `id`, or `nil` when none has it.
    public func provider(_ id: String) -> (any VerificationProvider)? { byID[id] }

    /// The segments a start's message takes, by provider, for those priced per segment (the gateway's own
    /// codes, ``ProviderCapabilities/segmentsPerMessage``).
    public var segmentsPerStart: [String: Int] {
        var found: [String: Int] = [:]
        for provider in providers {
            if let segments = provider.capabilities.segmentsPerMessage { found[provider.id] = segments }
        }
        return found
    }

    /// The ids of the configured providers, in configuration order.
    public var providerIDs: [String] { providers.map(\.id) }

    static func isValidID(_ id: String) -> Bool {
        (1...40).contains(id.count)
            && id.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
            }
    }
}
