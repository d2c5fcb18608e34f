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
    /// Whether the plugin's providers send the gateway's own codes over a messaging API, and so take
    /// ``ProviderContext/ownCodes`` (a plugin made with the messaging initializer).
    public internal(set) var sendsOwnCodes = false

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
