import Foundation
import GatewayCore
import Synchronization

// The sandbox calls itself: providers call their emulators at `<gateway>/sandbox/<plugin id>/…`, and
// emulators call the vendor callback route at `<gateway>/callbacks/<provider id>/…`. Over HTTP on the
// gateway's own port normally (the real path), in process when there is no socket (the router test harness)
// or once shutdown has begun.

/// The sandbox's calls to itself, served in process: emulator paths to the emulator, callback paths to the
/// callback receiver (bound once the service exists: the emulators are built before it). Errors from the
/// receiver are answered in the one error shape, as the HTTP route answers them.
final class SandboxInProcessTransport: HTTPTransport {
    let sandbox: Sandbox
    private let receiver = Mutex<CallbackReceiver?>(nil)

    init(sandbox: Sandbox) {
        self.sandbox = sandbox
    }

    func bind(_ receiver: CallbackReceiver) { self.receiver.withLock { $0 = receiver } }

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        let path = request.url.path(percentEncoded: true)
        if path.hasPrefix(CallbackReceiver.prefix) { return try await callback(request, path: path) }
        guard path.hasPrefix("/sandbox/") else { throw .connectFailed("not a sandbox URL") }
        let pluginID = String(path.dropFirst("/sandbox/".count).prefix { $0 != "/" })
        guard let mount = sandbox.mount(pluginID) else { throw .connectFailed("no emulator for \(pluginID)") }
        let inner = InProcessTransport(emulator: mount.emulator, pathPrefix: Sandbox.prefix(pluginID))
        return try await inner.send(request, timeout: timeout)
    }

    private func callback(_ request: TransportRequest, path: String) async throws(TransportError) -> TransportResponse {
        guard let receiver = receiver.withLock({ $0 }) else { throw .connectFailed("the gateway is not ready") }
        do {
            return try await receiver.receive(
                method: request.method, path: path, query: request.url.query(percentEncoded: true),
                headerFields: request.headerFields, body: request.body)
        } catch let error as APIError {
            return TransportResponse(status: error.status, body: error.body(requestID: ""))
        } catch let error as GatewayError {
            let apiError = APIError(error)
            return TransportResponse(status: apiError.status, body: apiError.body(requestID: ""))
        } catch {
            return TransportResponse(status: .internalServerError)
        }
    }
}

/// The sandbox's calls to its own port: HTTP normally (the real path); in process before the server listens
/// (a provider warming up at startup, such as IDaaS reading its area codes: the HTTP client would retry the
/// refused port until the vendor timeout), once shutdown has begun, or when the port refused the connection
/// (the emulator never saw the request, so nothing is sent twice). Calls to any other host go over HTTP.
struct SelfCallTransport: HTTPTransport {
    let http: any HTTPTransport
    let inProcess: any HTTPTransport
    let ownBase: URL
    let listening: OneWayFlag
    let shutdown: OneWayFlag

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        guard request.url.host == ownBase.host, request.url.port == ownBase.port else {
            return try await http.send(request, timeout: timeout)
        }
        if !listening.isRaised || shutdown.isRaised { return try await inProcess.send(request, timeout: timeout) }
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

/// A transport whose target is set after it is handed out: emulators are built before the transport they
/// call the gateway back through.
final class LateBoundTransport: HTTPTransport {
    private let target = Mutex<(any HTTPTransport)?>(nil)

    func bind(_ transport: any HTTPTransport) { target.withLock { $0 = transport } }

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        guard let transport = target.withLock({ $0 }) else { throw .connectFailed("the gateway is not ready") }
        return try await transport.send(request, timeout: timeout)
    }
}

/// A flag that is raised once and stays raised: the server listens; graceful shutdown has begun.
final class OneWayFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    func raise() { raised.store(true, ordering: .releasing) }

    var isRaised: Bool { raised.load(ordering: .acquiring) }
}
