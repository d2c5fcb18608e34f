import ArgumentParser
import Foundation
import GatewayCore
import Hummingbird
import Logging
import ServiceLifecycle

@main
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "A multi-provider phone verification gateway.",
        subcommands: [Serve.self, CheckConfig.self, Experiments.self, Keys.self, Migrate.self, TokenKey.self],
        defaultSubcommand: Serve.self)
}

/// `gateway [serve]`: runs the HTTP server until SIGINT or SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the gateway (sandbox mode with embedded SQLite when no --config is given).")

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 8080
    @Option(name: .customLong("data-dir"), help: "Directory for the SQLite store, keys and sandbox state.")
    var dataDirectory = ".gateway"
    @Option(help: "Configuration file (JSON or YAML) for real vendors; secrets come from the environment.")
    var config: String?
    @Option(
        name: .customLong("shutdown-grace"),
        help: "Seconds that requests in flight get to finish after SIGTERM or SIGINT before they are cancelled.")
    var shutdownGrace = 10.0
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"
    @Option(name: .customLong("log-format"), help: "text (the default) or json: one JSON object per line.")
    var logFormat = "text"
    @Option(name: .customLong("tls-cert"), help: "Serve HTTPS with this PEM certificate (chain); needs --tls-key.")
    var tlsCertificate: String?
    @Option(name: .customLong("tls-key"), help: "The PEM private key of --tls-cert.")
    var tlsKey: String?
    @Option(
        help: "Shared PostgreSQL store, postgres://user@host:port/database (password in PGPASSWORD); SQLite under --data-dir without it.")
    var store: String?

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535.") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        guard LoggingBootstrap.Format(rawValue: logFormat) != nil else {
            throw ValidationError("--log-format must be text or json")
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together.")
        }
        guard shutdownGrace.isFinite, (0...600).contains(shutdownGrace) else {
            throw ValidationError("--shutdown-grace must be from 0 to 600 seconds.")
        }
    }

    func run() async throws {
        LoggingBootstrap.bootstrap(
            level: Logger.Level(rawValue: logLevel) ?? .info, format: LoggingBootstrap.Format(rawValue: logFormat) ?? .text)
        var options = GatewayOptions()
        options.host = host
        options.port = port
        options.dataDirectory = URL(fileURLWithPath: dataDirectory, isDirectory: true)
        options.configFile = config.map { URL(fileURLWithPath: $0) }
        options.tlsCertificate = tlsCertificate.map { URL(fileURLWithPath: $0) }
        options.tlsKey = tlsKey.map { URL(fileURLWithPath: $0) }
        options.storeURL = store
        options.logger = Logger(label: "gateway")
        let app: any ApplicationProtocol
        let runtime: GatewayRuntime
        do {
            (app, runtime) = try await buildApplication(options)
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("gateway: \(error)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
        printBanner(runtime)
        // Graceful shutdown goes through the services in reverse order: the flag is raised first, so the
        // sandbox stops calling the port that is about to close; then the server stops accepting
        // connections and finishes the requests in flight, within the grace period.
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: app),
                .init(
                    service: ShutdownNotice(flag: runtime.shutdown, logger: options.logger),
                    successTerminationBehavior: .ignore),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: options.logger)
        configuration.maximumGracefulShutdownDuration = .milliseconds(Int64(shutdownGrace * 1000))
        configuration.maximumCancellationDuration = .seconds(2)
        try await ServiceGroup(configuration: configuration).run()
    }

    private func printBanner(_ runtime: GatewayRuntime) {
        var lines = ["verification gateway listening on \(runtime.baseURL.hasPrefix("https") ? "https" : "http")://\(host):\(port)"]
        lines.append("providers: \(runtime.service.registry.providerIDs.joined(separator: ", "))")
        if let sandbox = runtime.sandbox {
            lines.append(
                "sandbox mode: emulators at "
                    + sandbox.mounts.map { runtime.baseURL + Sandbox.prefix($0.pluginID) }.joined(separator: ", "))
            lines.append("sandbox outbox: \(runtime.baseURL)/sandbox/outbox")
            for line in SandboxBanner.lines(
                for: sandbox, plugins: runtime.service.registry.plugins, baseURL: runtime.baseURL)
            {
                lines.append(line)
            }
        }
        if let store {
            lines.append("store: \((try? PostgresStoreSettings.parse(store, passwordVariable: nil, environment: [:]))?.displayURL ?? "postgres")")
        }
        if let key = runtime.sandboxAPIKey {
            lines.append("sandbox API key: \(key)")
        }
        // Unbuffered: when stdout is a file or a pipe, the key must be there before the first request.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}

/// `gateway check-config FILE`: validates a configuration and prints every problem.
struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config", abstract: "Validate a configuration file and print every problem.")

    @Argument(help: "The configuration file (JSON or YAML).") var file: String

    func run() async throws {
        let url = URL(fileURLWithPath: file)
        let environment = ProcessInfo.processInfo.environment
        do {
            let configuration = try GatewayConfiguration.load(
                file: url, plugins: InstalledPlugins.all, environment: environment)
            // Build the providers and the routing table exactly as the server would, without network.
            let registry = try ProviderRegistry(
                plugins: InstalledPlugins.all,
                configurations: configuration.providers.isEmpty && configuration.sandbox
                    ? InstalledPlugins.all.map {
                        ProviderConfiguration(
                            id: $0.id, plugin: $0.id, settings: $0.sandboxSettings(Self.sandboxPlaceholderURL($0.id)))
                    } : configuration.providers
            ) { config in
                ProviderContext(providerID: config.id, settings: config.settings, transport: UnusedTransport())
            }
            let routing = configuration.routing ?? RoutingTable(defaultOrder: registry.providerIDs)
            let problems = routing.problems(against: registry)
            if !problems.isEmpty { throw ConfigurationError(problems: problems) }
            print(
                "\(file): OK (\(registry.providerIDs.count) provider(s): \(registry.providerIDs.joined(separator: ", ")))"
            )
        } catch {
            print("\(file): \(error)")
            throw ExitCode(78)
        }
    }
}

extension CheckConfig {
    /// Where the sandbox emulator would be mounted on a default `swift run gateway`; check-config calls nothing.
    static func sandboxPlaceholderURL(_ pluginID: String) -> URL {
        URL(string: "http://127.0.0.1:8080" + Sandbox.prefix(pluginID)) ?? URL(fileURLWithPath: "/")
    }
}

/// A transport for building providers that never call out (check-config).
struct UnusedTransport: HTTPTransport {
    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        throw .connectFailed("check-config makes no calls")
    }
}

/// The startup lines that tell a newcomer how to reach each emulator with the vendor's own client.
enum SandboxBanner {
    static func lines(for sandbox: Sandbox, plugins: [GatewayPlugin], baseURL: String) -> [String] {
        plugins.compactMap { plugin in
            guard sandbox.mount(plugin.id) != nil, let url = URL(string: baseURL + Sandbox.prefix(plugin.id)) else {
                return nil
            }
            // Sandbox credentials are fixed, public test values: printing them is the point.
            let settings = plugin.sandboxSettings(url).sorted { $0.key < $1.key }
            return "\(plugin.id) sandbox settings: " + settings.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }
}

/// Logging goes to standard error, once, here. Every line written while a request is served carries its
/// `request.id`, whichever logger wrote it (``RequestScope``).
enum LoggingBootstrap {
    enum Format: String {
        case text, json
    }

    static func bootstrap(level: Logger.Level, format: Format = .text) {
        LoggingSystem.bootstrap(
            { label, provider in
                switch format {
                case .text:
                    var handler = TextLogHandler(label: label, metadataProvider: provider)
                    handler.logLevel = level
                    return handler
                case .json:
                    var handler = JSONLogHandler(label: label, metadataProvider: provider)
                    handler.logLevel = level
                    return handler
                }
            }, metadataProvider: RequestScope.metadataProvider)
    }
}

/// `gateway experiments report NAME`: the A/B report from the stored verifications, as a table.
struct Experiments: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Experiment reports.", subcommands: [Report.self])

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Per-arm starts, approvals, conversion with a 95% interval, p-value against control, cost.")

        @Argument(help: "The experiment's name, as in the configuration.") var name: String
        @Option(help: "The configuration file that defines the experiment and the prices.") var config: String
        @Option(name: .customLong("data-dir"), help: "The gateway's data directory (its SQLite store).")
        var dataDirectory = ".gateway"
        @Option(help: "Only verifications started at or after this RFC 3339 time.") var from: String?
        @Option(help: "Only verifications started before this RFC 3339 time.") var to: String?
        @Option(help: "Only numbers of this region (GB, US…).") var country: String?
        @Option(help: "Minimum difference in conversion to size the sample for (absolute).") var mde = 0.05
        @Flag(help: "Print JSON, as GET /v1/admin/experiments/{name} does.") var json = false

        func run() async throws {
            let configuration: GatewayConfiguration
            do {
                configuration = try GatewayConfiguration.load(
                    file: URL(fileURLWithPath: config), plugins: InstalledPlugins.all,
                    environment: ProcessInfo.processInfo.environment)
            } catch {
                FileHandle.standardError.write(Data("gateway: \(error)\n".utf8))
                throw ExitCode(78)
            }
            guard let experiment = configuration.routing?.experiments[name] else {
                FileHandle.standardError.write(Data("gateway: no experiment named `\(name)` in \(config)\n".utf8))
                throw ExitCode(64)
            }
            let store = try SQLiteVerificationStore(
                path: URL(fileURLWithPath: dataDirectory).appendingPathComponent("gateway.sqlite").path,
                logger: Logger(label: "gateway"))
            let region = try PhoneNumbersController.region(country, name: "--country")
            let records = try await store.records(
                experiment: name, from: try AdminController.date(from, name: "from"),
                to: try AdminController.date(to, name: "to"))
            let report = ExperimentReport.build(
                experiment: experiment, records: records, prices: configuration.prices,
                from: try AdminController.date(from, name: "from"), to: try AdminController.date(to, name: "to"),
                country: region, minimumEffect: mde)
            if json {
                print(String(decoding: JSONResponse.encode(report.json), as: UTF8.self))
            } else {
                print(report.table)
            }
        }
    }
}

/// Raises the shutdown flag when graceful shutdown begins.
struct ShutdownNotice: Service {
    let flag: ShutdownFlag
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        flag.raise()
        logger.notice("shutting down: finishing requests in flight")
        // Self-calls that chose HTTP just before the flag are on the wire: let the server read them before
        // it stops reading idle connections.
        try? await Task.sleep(for: .milliseconds(100))
    }
}
