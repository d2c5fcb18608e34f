import Foundation
import GatewayCore
import Logging

/// Everything wrong with a configuration, found at once and each where it is: the file's own problems
/// (``ConfigurationReading``), each provider's problems as its plugin finds them, and the routing table's
/// problems against the providers that could be built. `gateway check-config` prints it; startup throws it
/// when the configuration is refused, so both list the same problems.
///
/// Each provider is built alone, with a transport that calls nothing, so a plugin's problem points at its
/// provider's entry (or at the setting it names); a provider whose entry already had a problem is not built,
/// so one mistake is not reported twice.
struct ConfigurationCheck {
    let reading: ConfigurationReading
    private(set) var problems: [ConfigProblem]
    /// The providers that could be built, in configuration order.
    private(set) var providerIDs: [String] = []

    var notes: [ConfigProblem] { reading.notes }

    init(file: URL, plugins: [GatewayPlugin], environment: [String: String]) {
        self.init(
            reading: GatewayConfiguration.read(file: file, plugins: plugins, environment: environment), plugins: plugins
        )
    }

    init(reading: ConfigurationReading, plugins: [GatewayPlugin]) {
        self.reading = reading
        problems = reading.problems
        let configuration = reading.configuration
        let entries: [(ProviderConfiguration, ConfigSources.Provider?)] =
            configuration.providers.isEmpty && configuration.sandbox
            ? plugins.map { plugin in
                let url = URL(string: "http://127.0.0.1:8080" + Sandbox.prefix(plugin.id)) ?? URL(fileURLWithPath: "/")
                return (
                    ProviderConfiguration(id: plugin.id, plugin: plugin.id, settings: plugin.sandboxSettings(url)), nil
                )
            }
            : zip(configuration.providers, reading.sources.providers).map { ($0, $1) }
        var built: [ProviderConfiguration] = []
        for (entry, source) in entries where source?.readCleanly != false {
            do {
                _ = try ProviderRegistry(
                    plugins: plugins, configurations: [entry], context: Self.context(configuration, plugins: plugins))
                if !built.contains(where: { $0.id == entry.id }) { built.append(entry) }
            } catch {
                problems += error.problems.map { ConfigProblem($0, at: source?.position(of: $0)) }
            }
        }
        guard
            let registry = try? ProviderRegistry(
                plugins: plugins, configurations: built, context: Self.context(configuration, plugins: plugins))
        else {
            return
        }
        providerIDs = registry.providerIDs
        guard let routing = configuration.routing else { return }
        // Unknown providers were named by the reading, against every configured provider; one that could not
        // be built has its own problems above. What is left: empty lists, channels a provider cannot send.
        for problem in routing.providerProblems(against: registry) where !problem.contains("unknown provider `") {
            problems.append(ConfigProblem(problem, at: reading.sources.position(ofRoutingProblem: problem)))
        }
    }

    /// A provider built only to be checked: it calls nothing, so it has nothing to log or time (what its
    /// building finds wrong is a problem of the check's, not a log line).
    private static func context(
        _ configuration: GatewayConfiguration, plugins: [GatewayPlugin]
    ) -> @Sendable (ProviderConfiguration) -> ProviderContext {
        { provider in
            let plugin = plugins.first { $0.id == provider.plugin }
            return ProviderContext(
                providerID: provider.id, settings: provider.settings, transport: UnusedTransport(),
                clock: SystemClock(), logger: Logger(label: "gateway.check-config") { _ in SwiftLogNoOpLogHandler() },
                ownCodes: plugin.flatMap { configuration.ownCodeSettings(providerID: provider.id, plugin: $0) })
        }
    }

    /// Every problem in one error, each prefixed with `file:line:column:`; nil when there is none.
    func error(file: String) -> ConfigurationError? {
        guard !problems.isEmpty else { return nil }
        return ConfigurationError(problems: problems.byPosition().map { $0.located(in: file) })
    }
}

/// A transport for building providers that never call out (check-config).
struct UnusedTransport: HTTPTransport {
    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        throw .connectFailed("check-config makes no calls")
    }
}
