import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import Logging

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
    /// Where finished spans go instead of the OTLP exporter, when tracing is configured (tests).
    var spanExporter: (any SpanExporter)?
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
    let shutdown: OneWayFlag
    /// The status-webhook sender, when endpoints are configured (it runs as a service of the application).
    var webhooks: WebhookDispatcher? = nil
    /// Every route the router serves, with its methods (the OpenAPI document's tests enumerate it).
    var routes = RouteTable()
}
/// Builds the gateway, in the shape of Hummingbird's template: the configuration; the providers, the store
/// and the engine; a router (``buildRouter``); the services that run beside the server (``buildServices``).
/// `@main` and the tests both call it.
func buildApplication(_ options: GatewayOptions) async throws -> (some ApplicationProtocol, GatewayRuntime) {
    let logger = options.logger
    var configuration = try GatewayConfiguration.serving(options)
    let tls = try ServerTLS.load(options, configuration)
    let baseURL = options.ownBaseURL(https: tls != nil)
    // Vendors reach the gateway here; the sandbox's emulators call its own address. A configured gateway
    // without `public_base_url` takes no callbacks: a signature over a guessed URL would never match.
    let publicBaseURL = configuration.publicBaseURL ?? (configuration.sandbox ? URL(string: baseURL) : nil)
    // Emulators call the gateway back as their vendors would, through the outbound transport made below.
    let callbacks = LateBoundTransport()
    let sandbox = configuration.sandbox ? Sandbox.forGateway(options, configuration, baseURL, callbacks) : nil
    if sandbox != nil, configuration.providers.isEmpty {
        configuration.providers = try Sandbox.providers(options, baseURL: baseURL)
    }
    let sandboxAPIKey = sandbox.map { _ in Sandbox.apiKey(options.environment) }
    let keyring = APIKeyring(configuration.apiKeys, sandboxKey: sandboxAPIKey)
    let outbound = OutboundCalls(
        sandbox: sandbox, mode: options.sandboxTransport, ownBase: URL(string: baseURL),
        connectionsPerHost: configuration.vendorConnectionsPerHost, trusting: tls?.chain ?? [])
    callbacks.bind(outbound.transport)
    let metrics = MetricsRegistry()
    // Traces, when an OTLP endpoint is configured: the exporter sends on the untraced transport; vendor calls and
    // webhooks go through a traced one (docs/operations.md, "Traces").
    let exporter = configuration.tracing.map { settings in
        OTLPExporter(
            endpoint: settings.endpoint,
            headers: settings.headers.compactMap { key, value in HTTPField.Name(key).map { ($0, value) } },
            serviceName: settings.serviceName, transport: outbound.transport, logger: logger)
    }
    let tracer = configuration.tracing.map { settings in
        GatewayTracer(ratio: settings.ratio, exporter: options.spanExporter ?? exporter ?? NoSpanExporter())
    }
    let vendorTransport: any HTTPTransport =
        tracer.map { TracingTransport(base: outbound.transport, tracer: $0) } ?? outbound.transport
    do {
        let registry = try await buildRegistry(
            options, configuration, vendorTransport, publicBaseURL: publicBaseURL, metrics: metrics)
        let routing = try routingTable(configuration, registry, options)
        let store = try await openStore(options, configuration)
        let signer = try VerificationTokenSigner.load(
            pem: configuration.tokenSigningKeyPEM, verification: configuration.tokenVerificationKeyPEMs,
            file: options.dataDirectory.appendingPathComponent("token-signing-key.pem"))
        // Before any lease is taken: this instance's heartbeat row, and dead instances' rows removed, so
        // their leases are taken over at once.
        let instances = InstanceRegistry(store: store.store, clock: options.clock, logger: logger)
        try await instances.register()
        var service = VerificationService(
            registry: registry, routing: routing, store: store.store, clock: options.clock,
            policy: configuration.policy,
            breakers: CircuitBreakers(settings: configuration.breakers, clock: options.clock), logger: logger,
            metrics: GatewayMetrics(factory: metrics.factory), leaseOwners: instances,
            adaptive: AdaptiveRouter(
                store: store.store, routing: routing, prices: configuration.prices,
                segmentsPerStart: registry.segmentsPerStart, clock: options.clock,
                codeValidity: configuration.policy.codeValidity, logger: logger))
        service.tracer = tracer.map { GatewayEngineTracer(tracer: $0) }
        // Every start hands out a client secret derived from the signing key; the record keeps its hash.
        let clientSecrets = ClientSecrets(signingKey: signer.privateKey)
        service.clientSecretHash = { ClientSecrets.hash(clientSecrets.secret(for: $0)) }
        // Refusals counted per kind and minute in the store, so every instance's console shows them all.
        if let counts = store.store as? any SQLStore {
            service.countRefusal = { [logger] kind, at in
                do throws(GatewayError) {
                    try await counts.countRefusal(kind: kind, bucketStart: RefusalStats.bucket(at))
                } catch {
                    logger.warning("refusal not counted", metadata: ["error.code": "\(error.code.rawValue)"])
                }
            }
        }
        let receiver = publicBaseURL.map { CallbackReceiver(service: service, publicBaseURL: $0) }
        if let receiver { outbound.inProcess?.bind(receiver) }
        let routes = RouteTable()
        let router = buildRouter(
            service: service, store: store.store, signer: signer, keyring: keyring, metrics: metrics,
            configuration: configuration, sandbox: sandbox, receiver: receiver, options: options, routes: routes,
            clientSecrets: clientSecrets, https: tls != nil, tracer: tracer, requestsInFlight: store.requestsInFlight)
        var (services, webhooks) = try await buildServices(
            options, configuration, store: store, instances: instances, outbound: outbound, tracer: tracer)
        if let exporter, options.spanExporter == nil { services.append(exporter) }
        // Delivery failover, and the deadlines of silent steps the engine falls back from (CAMARA).
        let silentSteps = service.registry.providerIDs.contains { id in
            service.registry.provider(id).map {
                $0.capabilities.channels.contains(.silentAuth)
                    && $0.capabilities.completesWithoutCode.contains(.silentAuth)
            } ?? false
        }
        if silentSteps || routing.rules.contains(where: { $0.delivery?.failover == true }) {
            services.append(DeliveryFailoverService(service: service, clock: options.clock, logger: logger))
        }
        let app = Application(
            router: router, server: try httpServer(tls: tls),
            configuration: ApplicationConfiguration(
                address: .hostname(options.host, port: options.port), serverName: "verification-gateway"),
            services: services, onServerRunning: { [listening = outbound.listening] _ in listening.raise() },
            logger: logger)
        let runtime = GatewayRuntime(
            service: service, sandbox: sandbox, sandboxAPIKey: sandboxAPIKey, signer: signer, baseURL: baseURL,
            shutdown: outbound.shutdown, webhooks: webhooks, routes: routes)
        return (app, runtime)
    } catch {
        try? await outbound.client?.shutdown()
        throw error
    }
}
