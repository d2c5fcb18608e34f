import AsyncHTTPClient
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOSSL
import ServiceLifecycle
import Synchronization

/// Everything `buildApplication` needs; `@main` fills it from the command line, tests by hand.
struct GatewayOptions: Sendable {
    enum SandboxTransport: Sendable {
        /// Plugins reach the emulators over real HTTP on the gateway's own port (the default).
        case http
        /// Plugins call the emulators in process (the router test harness has no socket).
        case inProcess
    }

    var host = "127.0.0.1"
    var port = 8080
    var dataDirectory = URL(fileURLWithPath: ".gateway", isDirectory: true)
    var configFile: URL?
    var environment: [String: String] = ProcessInfo.processInfo.environment
    var plugins: [GatewayPlugin] = InstalledPlugins.all
    var sandboxTransport: SandboxTransport = .http
    var clock: any WallClock = SystemClock()
    /// A store to use instead of the SQLite file (tests).
    var store: (any VerificationStore)?
    /// `--store postgres://…`: the shared PostgreSQL store (wins over the configuration file's `store`).
    var storeURL: String?
    var logger = Logger(label: "gateway")
    /// Deadline for one vendor call.
    var vendorTimeout: Duration = .seconds(10)
    /// Overrides the configuration's `policy.start_deadline_seconds` (tests on a busy machine).
    var startDeadline: Duration?
    /// Where status webhooks go instead of the outbound HTTP client (tests).
    var webhookTransport: (any HTTPTransport)?
    /// Serve HTTPS with this certificate chain and private key (PEM files); the configuration file's
    /// `tls` section is used when these are not set.
    var tlsCertificate: URL?
    var tlsKey: URL?
}

/// What a built gateway exposes besides the application: for the startup banner and for tests.
struct GatewayRuntime: Sendable {
    let service: VerificationService
    let sandbox: Sandbox?
    /// The sandbox API key in clear, when the gateway made or was given one.
    let sandboxAPIKey: String?
    let signer: VerificationTokenSigner
    let baseURL: String
    /// Set when graceful shutdown begins: the sandbox's self-calls stop using the closing port.
    let shutdown: ShutdownFlag
    /// The status-webhook sender, when endpoints are configured (it runs as a service of the application).
    var webhooks: WebhookDispatcher? = nil
}

/// Builds the gateway: configuration, store, providers, routes. `@main` and the tests both call it.
func buildApplication(_ options: GatewayOptions) async throws -> (some ApplicationProtocol, GatewayRuntime) {
    let logger = options.logger
    var configuration: GatewayConfiguration
    if let file = options.configFile {
        configuration = try GatewayConfiguration.load(
            file: file, plugins: options.plugins, environment: options.environment)
    } else {
        configuration = GatewayConfiguration()
        configuration.sandbox = true
    }
    if let startDeadline = options.startDeadline { configuration.policy.startDeadline = startDeadline }
    let tls = try ServerTLS.load(
        certificate: options.tlsCertificate ?? configuration.tlsCertificate,
        key: options.tlsKey ?? configuration.tlsKey)
    let selfHost = ["0.0.0.0", "::", ""].contains(options.host) ? "127.0.0.1" : options.host
    let baseURL = "\(tls == nil ? "http" : "https")://\(selfHost.contains(":") ? "[\(selfHost)]" : selfHost):\(options.port)"

    // Emulators call the gateway back as their vendors would. Over HTTP to the gateway's own port by
    // default; in process (the router test harness has no socket) through the application's own router,
    // bound once it exists.
    let callbackTransport = LateBoundTransport()

    // Sandbox: emulators, their outbox, and providers pointed at them when none are configured.
    var sandbox: Sandbox?
    var sandboxAPIKey: String?
    var keyring = APIKeyring()
    if configuration.sandbox {
        let sandboxDirectory = options.dataDirectory.appendingPathComponent("sandbox", isDirectory: true)
        let journal = OutboxJournal(
            file: sandboxDirectory.appendingPathComponent("outbox.jsonl"), capacity: 1000, logger: logger)
        let outbox = SandboxOutbox(
            capacity: journal.capacity,
            onSend: { message in
                journal.append(message)
                logger.notice(
                    "sandbox message sent",
                    metadata: [
                        "provider.id": "\(message.provider)", "channel": "\(message.channel)",
                        "to": "\(PhoneNumber.mask(message.to))", "kind": "\(message.kind.rawValue)", "code": "\(message.code ?? "-")",
                    ])
            },
            onDrop: { message in
                logger.notice(
                    "sandbox message dropped (delivery_rate)",
                    metadata: ["provider.id": "\(message.provider)", "to": "\(PhoneNumber.mask(message.to))"])
            })
        // The outbox survives a restart like the emulators' state, so a pending code can be read again.
        outbox.restore(journal.load())
        journal.replace(with: outbox.all)
        let built = Sandbox(
            plugins: options.plugins,
            context: EmulatorContext(clock: options.clock, outbox: outbox, logger: logger),
            stateDirectory: sandboxDirectory,
            journal: journal,
            callbackBaseURL: URL(string: baseURL)?.appending(path: "callbacks"),
            publicCallbackBaseURL: configuration.publicBaseURL?.appending(path: "callbacks"),
            callbackTransport: callbackTransport,
            logger: logger)
        sandbox = built
        if configuration.providers.isEmpty {
            guard let base = URL(string: baseURL) else {
                throw ConfigurationError(problems: ["--host \(options.host) does not make a valid URL (\(baseURL))"])
            }
            configuration.providers = options.plugins.map { plugin in
                ProviderConfiguration(
                    id: plugin.id, plugin: plugin.id,
                    settings: plugin.sandboxSettings(base.appending(path: Sandbox.prefix(plugin.id).dropFirst())))
            }
        }
        let secret =
            options.environment["GATEWAY_SANDBOX_API_KEY"].flatMap { $0.isEmpty ? nil : $0 }
            ?? APIKeyring.generateSandboxSecret()
        keyring.add(secret: secret, name: "sandbox", scopes: [.verify, .admin])
        sandboxAPIKey = secret
    }
    for entry in configuration.apiKeys {
        keyring.add(
            hash: entry.hash, name: entry.name, scopes: entry.scopes, countries: entry.countries,
            startsPerHour: entry.startsPerHour)
    }

    // Outbound HTTP. In the sandbox, calls to the gateway's own emulators and callback route go over HTTP
    // on its own port, except once shutdown has begun (the port is closing) or when the port refused the
    // connection: then they are served in process, so a start in flight during shutdown still reaches
    // its emulator.
    var httpClient: HTTPClient?
    let transport: any HTTPTransport
    let shutdown = ShutdownFlag()
    let selfCalls = LateBoundTransport()
    if configuration.sandbox, options.sandboxTransport == .inProcess, let sandbox {
        transport = SandboxInProcessTransport(sandbox: sandbox)
    } else {
        // Serving HTTPS with its own (often self-signed) certificate, the gateway trusts it on its self-calls.
        let client = makeOutboundHTTPClient(
            connectionsPerHost: configuration.vendorConnectionsPerHost, trusting: tls?.chain ?? [])
        httpClient = client
        let http = AsyncHTTPClientTransport(client: client)
        if let sandbox, let base = URL(string: baseURL) {
            transport = SelfCallTransport(
                http: http, inProcess: SelfCallRouter(sandbox: sandbox, callbacks: selfCalls), ownBase: base,
                shutdown: shutdown)
        } else {
            transport = http
        }
    }

    // Vendors reach the gateway here; the sandbox's emulators call its own address. A configured gateway
    // without `public_base_url` takes no callbacks: a signature over a guessed URL would never match.
    let publicBaseURL = configuration.publicBaseURL ?? (configuration.sandbox ? URL(string: baseURL) : nil)
    let metrics = MetricsRegistry()
    do {
        let registry = try ProviderRegistry(plugins: options.plugins, configurations: configuration.providers) {
            config in
            var providerLogger = logger
            providerLogger[metadataKey: "provider.id"] = .string(config.id)
            return ProviderContext(
                providerID: config.id, settings: config.settings, transport: transport, clock: options.clock,
                logger: providerLogger, requestTimeout: options.vendorTimeout, publicBaseURL: publicBaseURL,
                metrics: GatewayMetrics(factory: metrics.factory))
        }
        // Providers read what routing needs (IDaaS: the tenant's area codes) before the first request.
        await withTaskGroup(of: Void.self) { group in
            for provider in registry.providerIDs.compactMap(registry.provider) {
                group.addTask { await provider.warmUp() }
            }
        }
        let routing = configuration.routing ?? RoutingTable(defaultOrder: registry.providerIDs)
        let routingProblems =
            configuration.routing == nil
            ? routing.problems(against: registry) : routing.providerProblems(against: registry)
        if !routingProblems.isEmpty { throw ConfigurationError(problems: routingProblems) }

        let store: any VerificationStore
        var postgres: PostgresVerificationStore?
        if let injected = options.store {
            store = injected
        } else if let settings = try storeSettings(options, configuration) {
            // Instances sharing a store must sign with one key, or a token from one fails another's JWKS.
            guard configuration.tokenSigningKeyPEM != nil else {
                throw ConfigurationError(problems: [
                    "token: a shared store needs `token: {signing_key_env: VAR}` with one PEM P-256 key for every "
                        + "instance (`gateway token-key generate` makes one; docs/operations.md)"
                ])
            }
            let opened = try await PostgresVerificationStore(settings: settings, logger: logger)
            logger.notice("store: PostgreSQL", metadata: ["store": "\(settings.displayURL)"])
            postgres = opened
            store = opened
        } else {
            try FileManager.default.createDirectory(at: options.dataDirectory, withIntermediateDirectories: true)
            store = try SQLiteVerificationStore(
                path: options.dataDirectory.appendingPathComponent("gateway.sqlite").path,
                synchronous: configuration.sqliteSynchronous, logger: logger)
        }
        let signer = try VerificationTokenSigner.load(
            pem: configuration.tokenSigningKeyPEM, verification: configuration.tokenVerificationKeyPEMs,
            file: options.dataDirectory.appendingPathComponent("token-signing-key.pem"))
        // Before any lease is taken: this instance's heartbeat row, and dead instances' rows removed, so
        // their leases are taken over at once.
        let instances = InstanceRegistry(store: store, clock: options.clock, logger: logger)
        try await instances.register()
        let service = VerificationService(
            registry: registry, routing: routing, store: store, clock: options.clock, policy: configuration.policy,
            breakers: CircuitBreakers(settings: configuration.breakers, clock: options.clock), logger: logger,
            metrics: GatewayMetrics(factory: metrics.factory), leaseOwners: instances)

        let routes = RouteTable()
        let router = RecordingRouter(router: Router(context: GatewayRequestContext.self), table: routes)
        router.add(
            middleware: HTTPMetricsMiddleware(
                factory: metrics.factory,
                knownIDs: Set(registry.providerIDs + options.plugins.map(\.id))))
        router.add(middleware: ErrorMiddleware(routes: routes))
        if let sandbox {
            router.add(middleware: SandboxMiddleware(sandbox: sandbox))
            sandbox.addRoutes(to: router)
        }
        let receiver = publicBaseURL.map { CallbackReceiver(service: service, publicBaseURL: $0) }
        if let receiver { router.add(middleware: CallbacksMiddleware(receiver: receiver)) }
        OperationsController(service: service, signer: signer).addRoutes(to: router)
        MetricsController(
            metrics: metrics, service: service, access: configuration.metricsAccess,
            keys: APIKeyMiddleware(keyring: keyring, scope: .admin, store: store as? any APIKeyStore)
        ).addRoutes(to: router)
        let keyStore = store as? any APIKeyStore
        let v1 = router.group("v1").add(middleware: APIKeyMiddleware(keyring: keyring, scope: .verify, store: keyStore))
            .add(middleware: JSONBodyMiddleware())
        VerificationsController(
            service: service, signer: signer,
            trustedProxyHeader: configuration.trustedProxyHeader.flatMap { HTTPField.Name($0) }
        ).addRoutes(to: v1)
        PhoneNumbersController(registry: registry).addRoutes(to: v1)
        FactorsController(service: service).addRoutes(to: v1)
        RoutingController(service: service, prices: configuration.prices).addRoutes(to: v1)
        let admin = router.group("v1/admin").add(
            middleware: APIKeyMiddleware(keyring: keyring, scope: .admin, store: keyStore))
            .add(middleware: JSONBodyMiddleware())
        AdminController(service: service, prices: configuration.prices).addRoutes(to: admin)
        let webhookQueue = store as? any VerificationStore & WebhookQueueStore
        if let webhookQueue {
            WebhooksAdminController(queue: webhookQueue, clock: options.clock).addRoutes(to: admin)
        }

        if let receiver { selfCalls.bind(InProcessCallbackTransport(receiver: receiver)) }
        switch (options.sandboxTransport, receiver) {
        case (.inProcess, let receiver?): callbackTransport.bind(InProcessCallbackTransport(receiver: receiver))
        default: callbackTransport.bind(transport)
        }
        var services: [any Service] = []
        if let httpClient { services.append(HTTPClientService(client: httpClient)) }
        if let postgres { services.append(PostgresStoreService(store: postgres)) }
        services.append(instances)
        services.append(
            StoreMaintenance(store: store, clock: options.clock, policy: configuration.policy, logger: logger))
        var webhooks: WebhookDispatcher?
        if !configuration.webhooks.endpoints.isEmpty {
            guard let webhookQueue else {
                throw ConfigurationError(problems: ["webhooks: this store keeps no webhook queue"])
            }
            // The cursor starts now, when webhooks are turned on: every change from here on is delivered,
            // none from before is replayed.
            _ = try await webhookQueue.webhookCursor()
            let dispatcher = WebhookDispatcher(
                store: webhookQueue, settings: configuration.webhooks,
                transport: options.webhookTransport ?? transport, clock: options.clock, logger: logger)
            services.append(dispatcher)
            webhooks = dispatcher
        }
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [HTTPParseErrorHandler()],
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: HTTPParseErrorHandler.maxHeaderFieldSize,
                maxHeaderListSize: HTTPParseErrorHandler.maxHeaderListSize))
        let server: HTTPServerBuilder =
            try tls.map { try .tls(.http1(configuration: http1), tlsConfiguration: $0.serverConfiguration) }
            ?? .http1(configuration: http1)
        let app = Application(
            router: router.router,
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(options.host, port: options.port), serverName: "verification-gateway"),
            services: services,
            logger: logger)
        let runtime = GatewayRuntime(
            service: service, sandbox: sandbox, sandboxAPIKey: sandboxAPIKey, signer: signer, baseURL: baseURL,
            shutdown: shutdown, webhooks: webhooks)
        return (app, runtime)
    } catch {
        try? await httpClient?.shutdown()
        throw error
    }
}

/// The PostgreSQL settings to use: `--store` (with the file's pool and timeout settings) or the file's `store`.
private func storeSettings(
    _ options: GatewayOptions, _ configuration: GatewayConfiguration
) throws(ConfigurationError) -> PostgresStoreSettings? {
    try PostgresStoreSettings.resolve(url: options.storeURL, file: configuration.store, environment: options.environment)
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

/// Shuts the outbound HTTP client down when the application stops.
struct HTTPClientService: Service {
    let client: HTTPClient

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}

/// Sends plugin requests for `<base>/sandbox/<plugin>/…` straight to that plugin's emulator.
struct SandboxInProcessTransport: HTTPTransport {
    let sandbox: Sandbox

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        let path = request.url.path(percentEncoded: true)
        guard path.hasPrefix("/sandbox/") else { throw .connectFailed("not a sandbox URL") }
        let rest = path.dropFirst("/sandbox/".count)
        let pluginID = String(rest.prefix { $0 != "/" })
        guard let mount = sandbox.mount(pluginID) else { throw .connectFailed("no emulator for \(pluginID)") }
        let inner = InProcessTransport(emulator: mount.emulator, pathPrefix: Sandbox.prefix(pluginID))
        return try await inner.send(request, timeout: timeout)
    }
}

/// Set once graceful shutdown has begun.
final class ShutdownFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    func raise() { raised.store(true, ordering: .releasing) }

    var isRaised: Bool { raised.load(ordering: .acquiring) }
}

/// The sandbox's calls to its own port: HTTP normally (the real path), in process once shutdown has begun
/// or when the port refused the connection (the emulator never saw the request, so nothing is sent twice).
struct SelfCallTransport: HTTPTransport {
    let http: any HTTPTransport
    let inProcess: any HTTPTransport
    let ownBase: URL
    let shutdown: ShutdownFlag

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        guard request.url.host == ownBase.host, request.url.port == ownBase.port else {
            return try await http.send(request, timeout: timeout)
        }
        if shutdown.isRaised { return try await inProcess.send(request, timeout: timeout) }
        do {
            return try await http.send(request, timeout: timeout)
        } catch .connectFailed {
            return try await inProcess.send(request, timeout: timeout)
        } catch .connectionReset(let reason) {
            // While shutting down, the server closes only connections it is not serving a request on, so a
            // reset self-call was never read by the emulator. At any other time a reset is ambiguous (the
            // fault switch resets after reading, and its `reset_rate` after handling), and it is left to the
            // provider.
            guard shutdown.isRaised else { throw .connectionReset(reason) }
            return try await inProcess.send(request, timeout: timeout)
        }
    }
}

/// Serves a self-call in process: emulator paths to the sandbox, callback paths to the callback receiver.
struct SelfCallRouter: HTTPTransport {
    let sandbox: Sandbox
    let callbacks: any HTTPTransport

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        if request.url.path(percentEncoded: true).hasPrefix(CallbackReceiver.prefix) {
            return try await callbacks.send(request, timeout: timeout)
        }
        return try await SandboxInProcessTransport(sandbox: sandbox).send(request, timeout: timeout)
    }
}

/// The certificate chain and key the gateway serves HTTPS with.
struct ServerTLS: Sendable {
    let chain: [NIOSSLCertificate]
    let key: NIOSSLPrivateKey

    var serverConfiguration: TLSConfiguration {
        TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }

    /// Reads both PEM files, or returns `nil` when neither is given; one without the other, or a file that
    /// does not hold a certificate or a key, is a configuration error.
    static func load(certificate: URL?, key: URL?) throws(ConfigurationError) -> ServerTLS? {
        switch (certificate, key) {
        case (nil, nil):
            return nil
        case (let certificate?, let key?):
            var problems: [String] = []
            let chain = try? NIOSSLCertificate.fromPEMFile(certificate.path)
            if chain?.isEmpty != false { problems.append("TLS certificate \(certificate.path) is not a readable PEM certificate") }
            let privateKey = try? NIOSSLPrivateKey(file: key.path, format: .pem)
            if privateKey == nil { problems.append("TLS key \(key.path) is not a readable PEM private key") }
            guard let chain, let privateKey, problems.isEmpty else { throw ConfigurationError(problems: problems) }
            return ServerTLS(chain: chain, key: privateKey)
        default:
            throw ConfigurationError(problems: ["give both a TLS certificate and a TLS key (--tls-cert and --tls-key), or neither"])
        }
    }
}

/// The outbound HTTP client of vendor calls, sandbox self-calls and webhooks.
///
/// `connectionsPerHost` is AsyncHTTPClient's per-host HTTP/1.1 pool limit (`vendor_connections_per_host`);
/// calls beyond it wait in the pool for a connection to come free. Its default of 8 would let at most 8
/// calls be in flight to a vendor without HTTP/2, and under load made a start queue for a connection
/// (docs/performance.md, "Connections to a vendor"). `trusting` adds certificates to the system's roots
/// (the gateway's own, when it serves HTTPS and calls itself in the sandbox).
func makeOutboundHTTPClient(connectionsPerHost: Int, trusting extraRoots: [NIOSSLCertificate] = []) -> HTTPClient {
    var configuration = HTTPClient.Configuration()
    // The gateway bootstraps no tracer; without this AsyncHTTPClient still opens a (no-op) span with its
    // attributes for every vendor call (1.4% of a start's CPU, issue 13).
    configuration.tracing.tracer = nil
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionsPerHost
    if !extraRoots.isEmpty {
        var trust = TLSConfiguration.makeClientConfiguration()
        trust.additionalTrustRoots = [.certificates(extraRoots)]
        configuration.tlsConfiguration = trust
    }
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}
