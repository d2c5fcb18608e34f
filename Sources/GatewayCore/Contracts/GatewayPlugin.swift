import Foundation
import Logging

/// A vendor integration: the one value each plugin target exports and `Sources/gateway` registers.
public struct GatewayPlugin: Sendable {
    /// The plugin's id, used as `plugin:` in the configuration (`twilio`).
    public var id: String
    /// A human-readable name for the vendor's product (`Telnyx Verify`).
    public var displayName: String
    /// The settings a provider of this plugin takes.
    public var settings: [SettingSpec]
    /// Builds a provider from validated settings. Throws every problem it finds at once.
    public var makeProvider: @Sendable (ProviderContext) throws(ConfigurationError) -> any VerificationProvider
    /// Builds the vendor's emulator for the sandbox and for tests.
    public var makeEmulator: @Sendable (EmulatorContext) -> any VendorEmulator
    /// Settings that point a provider at an emulator served at `baseURL`.
    public var sandboxSettings: @Sendable (_ baseURL: URL) -> [String: String]

    /// A plugin with its id, settings and the builders of its provider, emulator and sandbox settings.
    public init(
        id: String,
        displayName: String,
        settings: [SettingSpec],
        makeProvider: @escaping @Sendable (ProviderContext) throws(ConfigurationError) -> any VerificationProvider,
        makeEmulator: @escaping @Sendable (EmulatorContext) -> any VendorEmulator,
        sandboxSettings: @escaping @Sendable (_ baseURL: URL) -> [String: String]
    ) {
        self.id = id
        self.displayName = displayName
        self.settings = settings
        self.makeProvider = makeProvider
        self.makeEmulator = makeEmulator
        self.sandboxSettings = sandboxSettings
    }

    /// Checks `values` against ``settings``: missing required keys, unknown keys, and bad values
    /// that a spec's validator reports. Returns every problem.
    public func problems(in values: [String: String], providerID: String) -> [String] {
        var problems = SettingSpec.problems(in: values, specs: settings, providerID: providerID)
        let known = Set(settings.map(\.name))
        for key in values.keys.sorted() where !known.contains(key) {
            problems.append("provider \(providerID): unknown setting `\(key)` for plugin \(id)")
        }
        return problems
    }
}

/// One setting a plugin takes.
public struct SettingSpec: Sendable {
    /// The setting's key in a provider's configuration (`account_sid`).
    public var name: String
    /// A one-line description of the setting, for people writing a configuration.
    public var summary: String
    /// Whether a provider of the plugin must set it; an empty value counts as absent.
    public var isRequired: Bool
    /// A secret must come from the environment (`<name>_env: VARIABLE` in the configuration file),
    /// never from the file in clear.
    public var isSecret: Bool
    /// Returns why a value is wrong, or `nil`.
    public var validate: (@Sendable (String) -> String?)?

    /// A spec that is required and not secret unless told; `validate` checks a value that is present.
    public init(
        name: String, summary: String, isRequired: Bool = true, isSecret: Bool = false,
        validate: (@Sendable (String) -> String?)? = nil
    ) {
        self.name = name
        self.summary = summary
        self.isRequired = isRequired
        self.isSecret = isSecret
        self.validate = validate
    }
}

/// Every configuration problem found, reported at once.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// One line per problem, each naming the provider and setting it concerns.
    public var problems: [String]

    /// An error reporting `problems`.
    public init(problems: [String]) {
        self.problems = problems
    }

    /// The problem count, then one indented line per problem.
    public var description: String {
        "configuration has \(problems.count) problem(s):\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}

/// What a plugin gets to build a provider.
public struct ProviderContext: Sendable {
    /// The id of the provider being built, from the configuration (`twilio-eu`).
    public var providerID: String
    /// Settings already checked against the plugin's ``SettingSpec``s, secrets resolved.
    public var settings: [String: String]
    /// How the provider reaches its vendor: the real network in production, an emulator in tests and the sandbox.
    public var transport: any HTTPTransport
    /// The clock the provider reads time from, so tests can move it.
    public var clock: any WallClock
    /// The logger for the provider's vendor calls.
    public var logger: Logger
    /// The deadline for one vendor call.
    public var requestTimeout: Duration
    /// The gateway's public base URL (configuration `public_base_url`), where vendors reach it.
    public var publicBaseURL: URL?
    /// Where ``VendorHTTPClient`` times the vendor's calls.
    public var metrics: GatewayMetrics

    /// A context with the caller's clock and logger, and unless given a 10-second call deadline, no public base
    /// URL and no metrics.
    public init(
        providerID: String, settings: [String: String], transport: any HTTPTransport,
        clock: any WallClock, logger: Logger,
        requestTimeout: Duration = .seconds(10), publicBaseURL: URL? = nil, metrics: GatewayMetrics = .disabled
    ) {
        self.publicBaseURL = publicBaseURL
        self.metrics = metrics
        self.providerID = providerID
        self.settings = settings
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.requestTimeout = requestTimeout
    }
}

extension ProviderContext {
    /// Where this provider's vendor sends callbacks: `<public base URL>/callbacks/<provider id>`; `nil` when
    /// no public base URL is configured.
    public var callbackURL: URL? {
        publicBaseURL?.appending(path: "callbacks").appending(path: providerID)
    }
}
