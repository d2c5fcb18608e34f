import Foundation
import GatewayCore
import GatewayTestSupport
import Synchronization
import Testing

@Suite("ProviderRegistry")
struct ProviderRegistryTests {
    /// A plugin taking `account` (required), `token` (required, secret) and `region` (optional, `us` or `eu`).
    static func accountPlugin(id: String = "acme") -> GatewayPlugin {
        GatewayPlugin(
            id: id,
            displayName: "Acme",
            settings: [
                SettingSpec(name: "account", summary: "Account id"),
                SettingSpec(name: "token", summary: "API token", isSecret: true),
                SettingSpec(
                    name: "region", summary: "Data region", isRequired: false,
                    validate: { ["us", "eu"].contains($0) ? nil : "must be `us` or `eu`" }),
            ],
            makeProvider: { context in
                ScriptedProvider(id: context.providerID, channels: [.sms])
            },
            makeEmulator: { _ in NullEmulator() },
            sandboxSettings: { _ in [:] })
    }

    /// A plugin whose provider factory refuses with its own problems.
    static func refusingPlugin() -> GatewayPlugin {
        GatewayPlugin(
            id: "refuser",
            displayName: "Refuser",
            settings: [],
            makeProvider: { (context: ProviderContext) throws(ConfigurationError) -> any VerificationProvider in
                throw ConfigurationError(problems: [
                    "provider \(context.providerID): the vendor account is suspended",
                    "provider \(context.providerID): the sender id is not registered",
                ])
            },
            makeEmulator: { _ in NullEmulator() },
            sandboxSettings: { _ in [:] })
    }

    static let validSettings = ["account": "AC1", "token": "secret"]

    static func build(
        _ configurations: [ProviderConfiguration], plugins: [GatewayPlugin] = [accountPlugin(), refusingPlugin()]
    ) throws(ConfigurationError) -> ProviderRegistry {
        try ProviderRegistry(plugins: plugins, configurations: configurations) { configuration in
            ProviderContext(
                providerID: configuration.id, settings: configuration.settings, transport: NullTransport(),
                clock: SystemClock(), logger: .quiet)
        }
    }

    static func problems(
        _ configurations: [ProviderConfiguration], plugins: [GatewayPlugin] = [accountPlugin(), refusingPlugin()]
    ) -> [String] {
        do {
            _ = try build(configurations, plugins: plugins)
            return []
        } catch {
            return error.problems
        }
    }

    @Test("builds every configured provider, in configuration order, and finds them by id")
    func buildsProviders() throws {
        let registry = try Self.build([
            ProviderConfiguration(id: "acme-us", plugin: "acme", settings: Self.validSettings),
            ProviderConfiguration(
                id: "acme-eu", plugin: "acme", settings: Self.validSettings.merging(["region": "eu"]) { $1 }),
        ])
        #expect(registry.providerIDs == ["acme-us", "acme-eu"])
        #expect(registry.provider("acme-eu")?.id == "acme-eu")
        #expect(registry.provider("acme") == nil)
        #expect(registry.plugins.map(\.id) == ["acme", "refuser"])
    }

    @Test("the provider factory receives the provider id and its settings")
    func factoryReceivesContext() throws {
        let seen = Mutex<[String: [String: String]]>([:])
        let plugin = GatewayPlugin(
            id: "spy", displayName: "Spy", settings: [SettingSpec(name: "account", summary: "")],
            makeProvider: { context in
                seen.withLock { $0[context.providerID] = context.settings }
                return ScriptedProvider(id: context.providerID)
            },
            makeEmulator: { _ in NullEmulator() }, sandboxSettings: { _ in [:] })
        _ = try Self.build(
            [ProviderConfiguration(id: "spy-1", plugin: "spy", settings: ["account": "A"])],
            plugins: [plugin])
        #expect(seen.withLock { $0 } == ["spy-1": ["account": "A"]])
    }

    @Test("every problem of the configuration is listed at once")
    func listsEveryProblem() {
        let problems = Self.problems([
            ProviderConfiguration(id: "ghost", plugin: "nope", settings: [:]),
            ProviderConfiguration(id: "dup", plugin: "acme", settings: Self.validSettings),
            ProviderConfiguration(id: "dup", plugin: "acme", settings: Self.validSettings),
            ProviderConfiguration(id: "no-token", plugin: "acme", settings: ["account": "AC1"]),
            ProviderConfiguration(id: "extra", plugin: "acme", settings: ["account": "AC1", "colour": "blue"]),
            ProviderConfiguration(id: "Bad ID", plugin: "acme", settings: Self.validSettings),
            ProviderConfiguration(
                id: "mars", plugin: "acme", settings: Self.validSettings.merging(["region": "mars"]) { $1 }),
            ProviderConfiguration(id: "refused", plugin: "refuser", settings: [:]),
        ])
        let expected = [
            "provider ghost: unknown plugin `nope` (installed: acme, refuser)",
            "provider id `dup` is configured twice",
            "provider no-token: missing setting `token`",
            "provider extra: missing setting `token`",
            "provider extra: unknown setting `colour` for plugin acme",
            "provider id `Bad ID` must be 1-40 lowercase letters, digits, `-` or `_`",
            "provider mars: setting `region` must be `us` or `eu`",
            "provider refused: the vendor account is suspended",
            "provider refused: the sender id is not registered",
        ]
        for problem in expected {
            #expect(problems.contains(problem), "missing problem: \(problem)\nall: \(problems)")
        }
        #expect(problems.count == expected.count, "\(problems)")
    }

    @Test("a configuration with no provider is a problem")
    func emptyConfiguration() {
        #expect(Self.problems([]) == ["no provider is configured"])
    }

    @Test("a plugin installed twice is a problem")
    func pluginInstalledTwice() {
        let problems = Self.problems(
            [ProviderConfiguration(id: "acme", plugin: "acme", settings: Self.validSettings)],
            plugins: [Self.accountPlugin(), Self.accountPlugin()])
        #expect(problems == ["plugin id `acme` is installed twice"])
    }

    @Test("an empty value of a required setting counts as missing")
    func emptyRequiredSetting() {
        let problems = Self.problems([
            ProviderConfiguration(id: "acme", plugin: "acme", settings: ["account": "", "token": "secret"])
        ])
        #expect(problems == ["provider acme: missing setting `account`"])
    }

    @Test("an optional setting may be left out, and its validator then does not run")
    func optionalSettingMayBeMissing() throws {
        let plugin = Self.accountPlugin()
        #expect(plugin.problems(in: Self.validSettings, providerID: "acme").isEmpty)
        #expect(plugin.problems(in: Self.validSettings.merging(["region": "us"]) { $1 }, providerID: "acme").isEmpty)
    }

    @Test("a plugin lists every problem of one provider's settings together")
    func pluginListsAllSettingProblems() {
        let problems = Self.accountPlugin().problems(
            in: ["region": "moon", "zeta": "1", "alpha": "2"], providerID: "p")
        #expect(
            problems == [
                "provider p: missing setting `account`",
                "provider p: missing setting `token`",
                "provider p: setting `region` must be `us` or `eu`",
                "provider p: unknown setting `alpha` for plugin acme",
                "provider p: unknown setting `zeta` for plugin acme",
            ])
    }

    @Test(
        "provider ids are 1 to 40 lowercase letters, digits, dashes and underscores",
        arguments: [
            ("twilio", true), ("twilio-eu", true), ("sinch_2", true), ("a", true), ("0", true),
            (String(repeating: "a", count: 40), true),
            ("", false), ("Twilio", false), ("twilio eu", false), ("twilio.eu", false), ("twílio", false),
            (String(repeating: "a", count: 41), false), ("twilio/eu", false),
        ])
    func providerIDRules(_ id: String, _ valid: Bool) {
        let problems = Self.problems([ProviderConfiguration(id: id, plugin: "refuser", settings: [:])])
        let flagged = problems.contains { $0.hasPrefix("provider id `\(id)` must be") }
        #expect(flagged == !valid, "\(problems)")
    }

    @Test("a provider built under another id than the configured one is a problem")
    func builtIDMustMatchConfiguration() {
        let plugin = GatewayPlugin(
            id: "stubborn", displayName: "Stubborn", settings: [],
            makeProvider: { _ in ScriptedProvider(id: "fixed-id") },
            makeEmulator: { _ in NullEmulator() }, sandboxSettings: { _ in [:] })
        let problems = Self.problems(
            [ProviderConfiguration(id: "configured", plugin: "stubborn", settings: [:])], plugins: [plugin])
        #expect(
            problems.contains { $0.contains("configured") && $0.contains("fixed-id") },
            "routes name `configured`, yet the registry would serve the provider only as `fixed-id`: \(problems)")
    }

    @Test("two providers built under one id are reported as a problem, not a crash")
    func duplicateBuiltIDsDoNotCrash() async {
        await #expect(processExitsWith: .success) {
            let plugin = GatewayPlugin(
                id: "stubborn", displayName: "Stubborn", settings: [],
                makeProvider: { _ in ScriptedProvider(id: "fixed-id") },
                makeEmulator: { _ in NullEmulator() }, sandboxSettings: { _ in [:] })
            do {
                _ = try ProviderRegistry(
                    plugins: [plugin],
                    configurations: [
                        ProviderConfiguration(id: "one", plugin: "stubborn", settings: [:]),
                        ProviderConfiguration(id: "two", plugin: "stubborn", settings: [:]),
                    ]
                ) {
                    ProviderContext(
                        providerID: $0.id, settings: $0.settings, transport: NullTransport(), clock: SystemClock(),
                        logger: .quiet)
                }
                preconditionFailure("the registry accepted two providers under one id")
            } catch let error as ConfigurationError {
                precondition(!error.problems.isEmpty)
            } catch {
                preconditionFailure("unexpected error \(error)")
            }
        }
    }

    @Test("the configuration error describes every problem")
    func errorDescription() {
        let error = ConfigurationError(problems: ["first", "second"])
        #expect(error.description == "configuration has 2 problem(s):\n  - first\n  - second")
    }

    @Test("makeRegistry serves the given instances under their own ids")
    func makeRegistryHelper() throws {
        let alpha = ScriptedProvider(id: "alpha")
        let beta = ScriptedProvider(id: "beta")
        let registry = try makeRegistry([alpha, beta])
        #expect(registry.providerIDs == ["alpha", "beta"])
        #expect(registry.provider("alpha") as? ScriptedProvider === alpha)
        #expect(registry.provider("beta") as? ScriptedProvider === beta)
    }
}

struct NullEmulator: VendorEmulator {
    let faults = FaultSwitch()

    func handle(_ request: EmulatorRequest) async -> EmulatorResponse { .reset }
}

struct NullTransport: HTTPTransport {
    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        throw .connectFailed("no transport in this test")
    }
}
