import Foundation
import GatewayCore
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import ServiceLifecycle

// The parts `buildApplication` puts together, in the order it does.

extension GatewayConfiguration {
    /// The variable the signing key is read from when the configuration names none (`token.signing_key_env`
    /// wins): one instance on PostgreSQL then needs no file, only `GATEWAY_TOKEN_SIGNING_KEY`.
    static let defaultSigningKeyVariable = "GATEWAY_TOKEN_SIGNING_KEY"

    /// The configuration the gateway serves with: the file's, else the sandbox's defaults. A file with problems
    /// is refused with every problem check-config would list, each `FILE:LINE:COLUMN:`; its notes are logged.
    /// Without a signing key from the file, `GATEWAY_TOKEN_SIGNING_KEY` is the key when it is set.
    static func serving(_ options: GatewayOptions) throws(ConfigurationError) -> GatewayConfiguration {
        var configuration = GatewayConfiguration()
        configuration.sandbox = true
        if let file = options.configFile {
            let reading = read(file: file, plugins: options.plugins, environment: options.environment)
            if !reading.problems.isEmpty,
                let error = ConfigurationCheck(reading: reading, plugins: options.plugins).error(
                    file: file.relativePath)
            {
                throw error
            }
            for note in reading.notes {
                options.logger.warning("configuration: \(note.located(in: file.relativePath))")
            }
            configuration = reading.configuration
        } else {
            // Without a file, the standard OpenTelemetry variables alone turn traces on.
            var problems: [String] = []
            configuration.tracing = GatewayConfiguration.tracing(nil, environment: options.environment) {
                problems.append($0)
            }
            if !problems.isEmpty { throw ConfigurationError(problems: problems) }
        }
        if let startDeadline = options.startDeadline { configuration.policy.startDeadline = startDeadline }
        if configuration.tokenSigningKeyPEM == nil,
            let pem = options.environment[GatewayConfiguration.defaultSigningKeyVariable], !pem.isEmpty
        {
            configuration.tokenSigningKeyPEM = pem
        }
        return configuration
    }
}

extension GatewayOptions {
    /// The gateway's own address, for its self-calls and its banner: a wildcard host is reached on 127.0.0.1.
    func ownBaseURL(https: Bool) -> String {
        let own = ["0.0.0.0", "::", ""].contains(host) ? "127.0.0.1" : host
        return "\(https ? "https" : "http")://\(own.contains(":") ? "[\(own)]" : own):\(port)"
    }

    /// A problem found after the file was read (a plugin's, the routing table's), as check-config lists it:
    /// every problem of the file, each where it is. Unchanged without a file, or when the check finds nothing.
    func located(_ error: ConfigurationError) -> ConfigurationError {
        guard let configFile else { return error }
        let check = ConfigurationCheck(file: configFile, plugins: plugins, environment: environment)
        return check.error(file: configFile.relativePath) ?? error
    }
}

extension APIKeyring {
    /// The configured keys, and the sandbox key (verify and admin) when there is one.
    init(_ entries: [GatewayConfiguration.KeyEntry], sandboxKey: String?) {
        self.init()
        if let sandboxKey { add(secret: sandboxKey, name: "sandbox", scopes: [.verify, .admin]) }
        for entry in entries {
            add(
                hash: entry.hash, name: entry.name, scopes: entry.scopes, countries: entry.countries,
                startsPerHour: entry.startsPerHour)
        }
    }
}

/// The configured providers on the outbound transport, warmed up (IDaaS reads the tenant's area codes)
/// before the first request.
func buildRegistry(
    _ options: GatewayOptions, _ configuration: GatewayConfiguration, _ transport: any HTTPTransport,
    publicBaseURL: URL?, metrics: MetricsRegistry
) async throws(ConfigurationError) -> ProviderRegistry {
    let registry: ProviderRegistry
    do {
        registry = try ProviderRegistry(plugins: options.plugins, configurations: configuration.providers) { config in
            var logger = options.logger
            logger[metadataKey: "provider.id"] = .string(config.id)
            let plugin = options.plugins.first { $0.id == config.plugin }
            return ProviderContext(
                providerID: config.id, settings: config.settings, transport: transport, clock: options.clock,
                logger: logger, requestTimeout: options.vendorTimeout, publicBaseURL: publicBaseURL,
                metrics: GatewayMetrics(factory: metrics.factory),
                ownCodes: plugin.flatMap { configuration.ownCodeSettings(providerID: config.id, plugin: $0) })
        }
    } catch {
        throw options.located(error)
    }
    await withTaskGroup(of: Void.self) { group in
        for provider in registry.providerIDs.compactMap(registry.provider) {
            group.addTask { await provider.warmUp() }
        }
    }
    return registry
}

/// The configured routing, or every provider in configuration order; refused when it names a provider that
/// is not there or routes a channel to one that cannot send it.
func routingTable(
    _ configuration: GatewayConfiguration, _ registry: ProviderRegistry, _ options: GatewayOptions
) throws(ConfigurationError) -> RoutingTable {
    let routing = configuration.routing ?? RoutingTable(defaultOrder: registry.providerIDs)
    var problems =
        configuration.routing == nil ? routing.problems(against: registry) : routing.providerProblems(against: registry)
    problems += configuration.policy.risk?.problems("risk:", registry: registry) ?? []
    for rule in routing.rules {
        problems += rule.risk?.problems("routing: route `\(rule.name)`", registry: registry) ?? []
    }
    guard problems.isEmpty else { throw options.located(ConfigurationError(problems: problems)) }
    return routing
}

/// The store the gateway keeps verifications in, and the PostgreSQL pool to close with the application.
struct GatewayStore {
    let store: any VerificationStore
    let postgres: PostgresVerificationStore?
    /// The requests the SQLite store's commit delay counts (`nil`: no delay, or not that store).
    var requestsInFlight: RequestsInFlight? = nil
}

/// An injected store (tests), else PostgreSQL (`--store`, or the file's `store`), else `<data-dir>/gateway.sqlite`.
func openStore(_ options: GatewayOptions, _ configuration: GatewayConfiguration) async throws -> GatewayStore {
    if let injected = options.store { return GatewayStore(store: injected, postgres: nil) }
    if let settings = try PostgresStoreSettings.resolve(
        url: options.storeURL, file: configuration.store, environment: options.environment)
    {
        // Instances sharing a store must sign with one key, or a token from one fails another's JWKS.
        guard configuration.tokenSigningKeyPEM != nil else {
            throw ConfigurationError(problems: [
                "token: a shared store needs one PEM P-256 signing key for every instance, in "
                    + "GATEWAY_TOKEN_SIGNING_KEY or in the variable `token: {signing_key_env: VAR}` names "
                    + "(`export GATEWAY_TOKEN_SIGNING_KEY=\"$(gateway token-key generate)\"` makes one; docs/operations.md)"
            ])
        }
        let opened = try await PostgresVerificationStore(settings: settings, logger: options.logger)
        options.logger.notice("store: PostgreSQL", metadata: ["store": "\(settings.displayURL)"])
        return GatewayStore(store: opened, postgres: opened)
    }
    try FileManager.default.createDirectory(at: options.dataDirectory, withIntermediateDirectories: true)
    let requests = RequestsInFlight()
    let delay = SQLiteCommitDelay(
        maximum: configuration.sqliteCommitDelay, siblings: configuration.sqliteCommitSiblings,
        inFlight: { requests.value })
    let sqlite = try SQLiteVerificationStore(
        path: options.dataDirectory.appendingPathComponent("gateway.sqlite").path,
        synchronous: configuration.sqliteSynchronous, commitDelay: delay, logger: options.logger)
    let counted = delay.isActive && configuration.sqliteSynchronous == .full
    return GatewayStore(store: sqlite, postgres: nil, requestsInFlight: counted ? requests : nil)
}

/// What runs beside the server: the outbound client and the PostgreSQL pool (closed when it stops), the
/// instance heartbeat, store maintenance, retention, and the webhook sender when endpoints are configured.
func buildServices(
    _ options: GatewayOptions, _ configuration: GatewayConfiguration, store: GatewayStore,
    instances: InstanceRegistry, outbound: OutboundCalls, tracer: GatewayTracer? = nil
) async throws -> ([any Service], WebhookDispatcher?) {
    var services: [any Service] = []
    if let client = outbound.client { services.append(HTTPClientService(client: client)) }
    if let postgres = store.postgres { services.append(PostgresStoreService(store: postgres)) }
    services.append(instances)
    services.append(
        StoreMaintenance(store: store.store, clock: options.clock, policy: configuration.policy, logger: options.logger)
    )
    if let sql = store.store as? any SQLStore, configuration.retention.isActive {
        services.append(
            RetentionService(
                store: sql, settings: configuration.retention, clock: options.clock, logger: options.logger))
    }
    guard !configuration.webhooks.endpoints.isEmpty else { return (services, nil) }
    guard let queue = store.store as? any VerificationStore & WebhookQueueStore else {
        throw ConfigurationError(problems: ["webhooks: this store keeps no webhook queue"])
    }
    // The cursor starts now, when webhooks are turned on: every change from here on is delivered, none from
    // before is replayed.
    _ = try await queue.webhookCursor()
    let webhookTransport = options.webhookTransport ?? outbound.transport
    let dispatcher = WebhookDispatcher(
        store: queue, settings: configuration.webhooks,
        transport: tracer.map { TracingTransport(base: webhookTransport, tracer: $0) } ?? webhookTransport,
        clock: options.clock, logger: options.logger)
    services.append(dispatcher)
    return (services, dispatcher)
}

/// HTTP/1.1 (over TLS when a certificate is given), with the decoder's limits and the handler that answers
/// a request the parser refuses in the one error shape.
func httpServer(tls: ServerTLS?) throws -> HTTPServerBuilder {
    let http1 = HTTP1Channel.Configuration(
        additionalChannelHandlers: [HTTPParseErrorHandler()],
        httpDecoderConfiguration: .init(
            maxHeaderFieldSize: HTTPParseErrorHandler.maxHeaderFieldSize,
            maxHeaderListSize: HTTPParseErrorHandler.maxHeaderListSize))
    return try tls.map { try .tls(.http1(configuration: http1), tlsConfiguration: $0.serverConfiguration) }
        ?? .http1(configuration: http1)
}

/// Closes the PostgreSQL pool once the server has stopped (the pool itself started with the store, so
/// migrations could run before the application).
struct PostgresStoreService: Service {
    let store: PostgresVerificationStore

    func run() async throws {
        try? await gracefulShutdown()
        store.close()
    }
}
