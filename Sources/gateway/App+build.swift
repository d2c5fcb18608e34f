import AsyncHTTPClient
import Foundation
import GatewayCore
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle

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
    var logger = Logger(label: "gateway")
    /// Deadline for one vendor call.
    var vendorTimeout: Duration = .seconds(10)
}

/// What a built gateway exposes besides the application: for the startup banner and for tests.
struct GatewayRuntime: Sendable {
    let service: VerificationService
    let sandbox: Sandbox?
    /// The sandbox API key in clear, when the gateway made or was given one.
    let sandboxAPIKey: String?
    let signer: VerificationTokenSigner
    let baseURL: String
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
    let selfHost = ["0.0.0.0", "::", ""].contains(options.host) ? "127.0.0.1" : options.host
    let baseURL = "http://\(selfHost.contains(":") ? "[\(selfHost)]" : selfHost):\(options.port)"

    // Emulators call the gateway back as their vendors would. Over HTTP to the gateway's own port by
    // default; in process (the router test harness has no socket) through the application's own router,
    // bound once it exists.
    let callbackTransport = LateBoundTransport()

    // Sandbox: emulators, their outbox, and providers pointed at them when none are configured.
    var sandbox: Sandbox?
    var sandboxAPIKey: String?
    var keyring = APIKeyring()
    if configuration.sandbox {
        let outbox = SandboxOutbox(
            onSend: { message in
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
        let built = Sandbox(
            plugins: options.plugins,
            context: EmulatorContext(clock: options.clock, outbox: outbox, logger: logger),
            stateDirectory: options.dataDirectory.appendingPathComponent("sandbox", isDirectory: true),
            callbackBaseURL: URL(string: baseURL)?.appending(path: "callbacks"),
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
        keyring.add(hash: entry.hash, name: entry.name, scopes: entry.scopes)
    }

    // Outbound HTTP.
    var httpClient: HTTPClient?
    let transport: any HTTPTransport
    if configuration.sandbox, options.sandboxTransport == .inProcess, let sandbox {
        transport = SandboxInProcessTransport(sandbox: sandbox)
    } else {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        httpClient = client
        transport = AsyncHTTPClientTransport(client: client)
    }

    // Vendors reach the gateway here; the sandbox's emulators call its own address. A configured gateway
    // without `public_base_url` takes no callbacks: a signature over a guessed URL would never match.
    let publicBaseURL = configuration.publicBaseURL ?? (configuration.sandbox ? URL(string: baseURL) : nil)
    do {
        let registry = try ProviderRegistry(plugins: options.plugins, configurations: configuration.providers) {
            config in
            var providerLogger = logger
            providerLogger[metadataKey: "provider.id"] = .string(config.id)
            return ProviderContext(
                providerID: config.id, settings: config.settings, transport: transport, clock: options.clock,
                logger: providerLogger, requestTimeout: options.vendorTimeout, publicBaseURL: publicBaseURL)
        }
        let routing = configuration.routing ?? RoutingTable(defaultOrder: registry.providerIDs)
        let routingProblems =
            configuration.routing == nil
            ? routing.problems(against: registry) : routing.providerProblems(against: registry)
        if !routingProblems.isEmpty { throw ConfigurationError(problems: routingProblems) }

        let store: any VerificationStore
        if let injected = options.store {
            store = injected
        } else {
            try FileManager.default.createDirectory(at: options.dataDirectory, withIntermediateDirectories: true)
            store = try SQLiteVerificationStore(
                path: options.dataDirectory.appendingPathComponent("gateway.sqlite").path, logger: logger)
        }
        let signer = try VerificationTokenSigner.load(
            pem: configuration.tokenSigningKeyPEM,
            file: options.dataDirectory.appendingPathComponent("token-signing-key.pem"))
        let service = VerificationService(
            registry: registry, routing: routing, store: store, clock: options.clock, policy: configuration.policy,
            breakers: CircuitBreakers(settings: configuration.breakers, clock: options.clock), logger: logger)

        let routes = RouteTable()
        let router = RecordingRouter(router: Router(context: GatewayRequestContext.self), table: routes)
        router.add(middleware: ErrorMiddleware(routes: routes))
        if let sandbox {
            router.add(middleware: SandboxMiddleware(sandbox: sandbox))
            sandbox.addRoutes(to: router)
        }
        let receiver = publicBaseURL.map { CallbackReceiver(service: service, publicBaseURL: $0) }
        if let receiver { router.add(middleware: CallbacksMiddleware(receiver: receiver)) }
        OperationsController(service: service, signer: signer).addRoutes(to: router)
        let v1 = router.group("v1").add(middleware: APIKeyMiddleware(keyring: keyring, scope: .verify))
            .add(middleware: JSONBodyMiddleware())
        VerificationsController(service: service, signer: signer).addRoutes(to: v1)
        PhoneNumbersController(registry: registry).addRoutes(to: v1)
        RoutingController(service: service, prices: configuration.prices).addRoutes(to: v1)
        let admin = router.group("v1/admin").add(middleware: APIKeyMiddleware(keyring: keyring, scope: .admin))
            .add(middleware: JSONBodyMiddleware())
        AdminController(service: service, prices: configuration.prices).addRoutes(to: admin)

        switch (options.sandboxTransport, receiver) {
        case (.inProcess, let receiver?): callbackTransport.bind(InProcessCallbackTransport(receiver: receiver))
        default: if let httpClient { callbackTransport.bind(AsyncHTTPClientTransport(client: httpClient)) }
        }
        var services: [any Service] = []
        if let httpClient { services.append(HTTPClientService(client: httpClient)) }
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [HTTPParseErrorHandler()],
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: HTTPParseErrorHandler.maxHeaderFieldSize,
                maxHeaderListSize: HTTPParseErrorHandler.maxHeaderListSize))
        let app = Application(
            router: router.router,
            server: .http1(configuration: http1),
            configuration: ApplicationConfiguration(
                address: .hostname(options.host, port: options.port), serverName: "verification-gateway"),
            services: services,
            logger: logger)
        let runtime = GatewayRuntime(
            service: service, sandbox: sandbox, sandboxAPIKey: sandboxAPIKey, signer: signer, baseURL: baseURL)
        return (app, runtime)
    } catch {
        try? await httpClient?.shutdown()
        throw error
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
        defer { if request.method != .get { sandbox.save(mount) } }
        return try await inner.send(request, timeout: timeout)
    }
}
