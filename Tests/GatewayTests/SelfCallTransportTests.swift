import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import gateway

/// Where the sandbox's calls to its own port go, by the server's lifecycle: in process before the server
/// listens (a provider warming up at startup would otherwise wait out the HTTP client's retries of a refused
/// port) and once shutdown begins; over HTTP while it serves.
@Suite("Sandbox self-calls")
struct SelfCallTransportTests {
    let ownBase = URL(string: "http://127.0.0.1:18080")!

    func request(_ url: String) -> TransportRequest {
        TransportRequest(method: .get, url: URL(string: url)!)
    }

    func transport(listening: Bool, shuttingDown: Bool) -> (SelfCallTransport, RecordingTransport, RecordingTransport) {
        let http = RecordingTransport(StubTransport.answer(status: 200, body: "{}"))
        let inProcess = RecordingTransport(StubTransport.answer(status: 200, body: "{}"))
        let listeningFlag = OneWayFlag()
        let shutdown = OneWayFlag()
        if listening { listeningFlag.raise() }
        if shuttingDown { shutdown.raise() }
        let transport = SelfCallTransport(
            http: http, inProcess: inProcess, ownBase: ownBase, listening: listeningFlag, shutdown: shutdown)
        return (transport, http, inProcess)
    }

    @Test("before the server listens, a self-call goes in process and never tries the port")
    func beforeListening() async throws {
        let (transport, http, inProcess) = transport(listening: false, shuttingDown: false)
        _ = try await transport.send(request("http://127.0.0.1:18080/sandbox/idaas/x"), timeout: .seconds(60))
        #expect(http.requests.isEmpty)
        #expect(inProcess.requests.count == 1)
    }

    @Test("while serving, a self-call goes over HTTP; other hosts always do")
    func whileServing() async throws {
        let (transport, http, inProcess) = transport(listening: true, shuttingDown: false)
        _ = try await transport.send(request("http://127.0.0.1:18080/sandbox/idaas/x"), timeout: .seconds(60))
        #expect(http.requests.count == 1)
        #expect(inProcess.requests.isEmpty)
        let (early, earlyHTTP, _) = self.transport(listening: false, shuttingDown: false)
        _ = try await early.send(request("http://vendor.example/v1/x"), timeout: .seconds(60))
        #expect(earlyHTTP.requests.count == 1)
    }

    @Test("once shutdown begins, a self-call goes in process again")
    func afterShutdown() async throws {
        let (transport, http, inProcess) = transport(listening: true, shuttingDown: true)
        _ = try await transport.send(request("http://127.0.0.1:18080/sandbox/idaas/x"), timeout: .seconds(60))
        #expect(http.requests.isEmpty)
        #expect(inProcess.requests.count == 1)
    }
}
