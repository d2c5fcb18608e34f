import ArgumentParser
import Foundation
import GatewayCore
import Hummingbird
import Logging
import ServiceLifecycle

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
        help:
            "Shared PostgreSQL store, postgres://user@host:port/database (password in PGPASSWORD); SQLite under --data-dir without it."
    )
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
            level: Logger.Level(rawValue: logLevel) ?? .info,
            format: LoggingBootstrap.Format(rawValue: logFormat) ?? .text)
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
        var lines = [
            "verification gateway listening on \(runtime.baseURL.hasPrefix("https") ? "https" : "http")://\(host):\(port)"
        ]
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
            lines.append(
                "store: \((try? PostgresStoreSettings.parse(store, passwordVariable: nil, environment: [:]))?.displayURL ?? "postgres")"
            )
        }
        if let key = runtime.sandboxAPIKey {
            lines.append("sandbox API key: \(key)")
        }
        // Unbuffered: when stdout is a file or a pipe, the key must be there before the first request.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}

/// Raises the shutdown flag when graceful shutdown begins.
struct ShutdownNotice: Service {
    let flag: OneWayFlag
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
