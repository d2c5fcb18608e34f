import AsyncHTTPClient
import Foundation
import GatewayCore
import NIOSSL
import ServiceLifecycle

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
    // attributes for every vendor call (its cost is in BENCHMARKS.md).
    configuration.tracing.tracer = nil
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionsPerHost
    if !extraRoots.isEmpty {
        var trust = TLSConfiguration.makeClientConfiguration()
        trust.additionalTrustRoots = [.certificates(extraRoots)]
        configuration.tlsConfiguration = trust
    }
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}

/// Where the gateway's outbound calls go: vendors and webhook receivers over HTTP; in the sandbox, its calls
/// to itself over HTTP on its own port with the in-process path as fallback (``SelfCallTransport``), or
/// in process only when the gateway has no socket (the router test harness).
struct OutboundCalls {
    let transport: any HTTPTransport
    /// The HTTP client to shut down with the application (none when every call is in process).
    let client: HTTPClient?
    /// The sandbox's in-process path, whose callback receiver is bound once the service exists.
    let inProcess: SandboxInProcessTransport?
    let shutdown = OneWayFlag()
    /// Raised once the server listens: the sandbox's self-calls go in process until then.
    let listening = OneWayFlag()

    init(
        sandbox: Sandbox?, mode: GatewayOptions.SandboxTransport, ownBase: URL?, connectionsPerHost: Int,
        trusting roots: [NIOSSLCertificate]
    ) {
        inProcess = sandbox.map(SandboxInProcessTransport.init(sandbox:))
        if let inProcess, mode == .inProcess {
            client = nil
            transport = inProcess
            return
        }
        // Serving HTTPS with its own (often self-signed) certificate, the gateway trusts it on its self-calls.
        let client = makeOutboundHTTPClient(connectionsPerHost: connectionsPerHost, trusting: roots)
        self.client = client
        let http = AsyncHTTPClientTransport(client: client)
        if let inProcess, let ownBase {
            transport = SelfCallTransport(
                http: http, inProcess: inProcess, ownBase: ownBase, listening: listening, shutdown: shutdown)
        } else {
            transport = http
        }
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
