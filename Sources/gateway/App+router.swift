import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// The gateway's routes. Before routing: metrics, the one error shape, the sandbox's emulators and the vendor
/// callbacks (outside API-key auth). Then the operations and metrics routes, the Twilio-compatible front door
/// under `/twilio` when `twilio_compat` is configured (HTTP Basic), the public API under `/v1` (a `verify` key),
/// the admin API under `/v1/admin` (an `admin` key), and the operator console under `/console`, whose session
/// cookie the admin API takes (and `/v1`, for reading).
func buildRouter(
    service: VerificationService, store: any VerificationStore, signer: VerificationTokenSigner, keyring: APIKeyring,
    metrics: MetricsRegistry, configuration: GatewayConfiguration, sandbox: Sandbox?, receiver: CallbackReceiver?,
    options: GatewayOptions, routes: RouteTable = RouteTable(), clientSecrets: ClientSecrets? = nil,
    https: Bool = false, tracer: GatewayTracer? = nil, requestsInFlight: RequestsInFlight? = nil
) -> Router<GatewayRequestContext> {
    let registry = service.registry
    let router = RecordingRouter(router: Router(context: GatewayRequestContext.self), table: routes)
    // Outermost, so the server span covers every other middleware and sees the final status.
    if let tracer { router.add(middleware: TracingMiddleware(tracer: tracer)) }
    router.add(
        middleware: HTTPMetricsMiddleware(
            factory: metrics.factory, knownIDs: Set(registry.providerIDs + options.plugins.map(\.id))))
    router.add(middleware: ErrorMiddleware(routes: routes, twilioCompat: configuration.twilioCompat != nil))
    if let sandbox {
        router.add(middleware: SandboxMiddleware(sandbox: sandbox))
        sandbox.addRoutes(to: router)
    }
    // After the sandbox's emulators, which write only to their own files.
    if let requestsInFlight { router.add(middleware: RequestsInFlightMiddleware(requests: requestsInFlight)) }
    if let receiver { router.add(middleware: CallbacksMiddleware(receiver: receiver)) }
    OperationsController(service: service, signer: signer).addRoutes(to: router)
    let keyStore = store as? any APIKeyStore
    let sessions = ConsoleSessions(
        store: store as? any ConsoleSessionStore ?? InProcessConsoleSessions(), keyring: keyring, keyStore: keyStore,
        clock: options.clock, secureCookie: https || configuration.publicBaseURL?.scheme == "https")
    ConsoleController(sessions: sessions).addRoutes(to: router)
    MetricsController(
        metrics: metrics, service: service, access: configuration.metricsAccess,
        keys: APIKeyMiddleware(keyring: keyring, scope: .admin, store: keyStore)
    ).addRoutes(to: router)

    let trustedProxyHeader = configuration.trustedProxyHeader.flatMap { HTTPField.Name($0) }
    let native = VerificationsController(
        service: service, signer: signer, clientSecrets: clientSecrets, trustedProxyHeader: trustedProxyHeader)
    if let twilioCompat = configuration.twilioCompat {
        TwilioCompatRoutes.add(
            to: router, settings: twilioCompat, native: native, keyring: keyring, keyStore: keyStore, routes: routes,
            publicBaseURL: configuration.publicBaseURL)
    }

    // A client secret (`vcs_…`) is taken here too, for its verification's app-side steps only; a console
    // session, to read.
    let v1 = router.group("v1").add(
        middleware: APIKeyMiddleware(
            keyring: keyring, scope: .verify, store: keyStore, verifications: service,
            trustedProxyHeader: trustedProxyHeader, sessions: sessions, sessionsOnlyRead: true)
    )
    .add(middleware: JSONBodyMiddleware())
    native.addRoutes(to: v1)
    PhoneNumbersController(registry: registry).addRoutes(to: v1)
    FactorsController(service: service).addRoutes(to: v1)
    RoutingController(service: service, prices: configuration.prices).addRoutes(to: v1)

    let admin = router.group("v1/admin").add(
        middleware: APIKeyMiddleware(
            keyring: keyring, scope: .admin, store: keyStore, sessions: sessions, readKeysReadAdmin: true)
    )
    .add(middleware: JSONBodyMiddleware())
    AdminController(
        service: service, prices: configuration.prices, stats: store as? any VerificationStatsStore,
        anonymizer: configuration.retention.anonymizer
    )
    .addRoutes(to: admin)
    if let queue = store as? any VerificationStore & WebhookQueueStore {
        WebhooksAdminController(queue: queue, clock: options.clock, endpoints: configuration.webhooks.endpoints)
            .addRoutes(to: admin)
    }
    return router.router
}
