import AsyncHTTPClient
import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ServiceLifecycle
import Testing

@testable import gateway

#if canImport(Glibc)
    import Glibc
#endif

/// A few tests against the real server on a loopback port: the plugin reaches the emulator over
/// real HTTP through AsyncHTTPClient, as in `swift run gateway`.
@Suite("The real server on a loopback port")
struct LiveServerTests {
    func liveOptions() throws -> (GatewayOptions, GatewayHarness) {
        let harness = GatewayHarness(clock: ManualClock(Date()))
        var options = harness.options()
        options.sandboxTransport = .http
        options.port = try LoopbackPort.next()
        return (options, harness)
    }

    @Test("a verification runs end to end over HTTP, vendor wire format included; stopping logs no error")
    func endToEnd() async throws {
        let (options, harness) = try liveOptions()
        let (app, runtime) = try await buildApplication(options)
        try await withLiveServer(app, port: options.port) { client in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400900123", "channel": "sms"}"#)
            #expect(start.status == .created)
            let id = try #require(start.body["id"] as? String)
            let code = try sandboxCode(runtime, to: "+447400900123")
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.status == .ok)
            #expect(check.body["status"] as? String == "approved")
        }
        #expect(harness.logs.lines(atLeast: .error) == [])
    }

    @Test("a connection reset by the vendor is provider_unavailable and nothing is stored")
    func connectionReset() async throws {
        let (options, _) = try liveOptions()
        let (app, runtime) = try await buildApplication(options)
        try await withLiveServer(app, port: options.port) { client in
            runtime.sandbox?.mount("twilio")?.emulator.faults.set(.init(connectionReset: true))
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+447400900124"}"#)
            #expect(start.status == .badGateway)
            #expect(start.body.errorCode == "provider_unavailable")
        }
    }

    @Test("a vendor slower than the deadline is provider_timeout")
    func timeout() async throws {
        var (options, _) = try liveOptions()
        options.vendorTimeout = .milliseconds(200)
        let (app, runtime) = try await buildApplication(options)
        try await withLiveServer(app, port: options.port) { client in
            runtime.sandbox?.mount("twilio")?.emulator.faults.set(.init(latencyMilliseconds: 1500, remaining: 1))
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+447400900125"}"#)
            #expect(start.status == .gatewayTimeout)
            #expect(start.body.errorCode == "provider_timeout")
        }
    }

    @Test("a stock Twilio-style request to the sandbox gets Twilio's 401 without credentials")
    func twilioWireAuth() async throws {
        let (options, _) = try liveOptions()
        let (app, _) = try await buildApplication(options)
        try await withLiveServer(app, port: options.port) { client in
            let result = try await client.call(
                .post, "/sandbox/twilio/v2/Services/VA00000000000000000000000000000000/Verifications", key: nil)
            #expect(result.status == .unauthorized)
            #expect(result.body["code"] as? Int == 20003)
        }
    }

    struct PortError: Error {}
}

/// The server as `swift run gateway` runs it: bound to its configured loopback port, so the sandbox
/// URLs the plugins were given at build time are the ones that answer.
func withLiveServer<App: ApplicationProtocol>(
    _ app: App, port: Int, _ body: @Sendable (LiveClient) async throws -> Void
) async throws {
    try await withRunningApplication(app) {
        let client = LiveClient(base: "http://127.0.0.1:\(port)")
        try await client.waitUntilReady()
        try await body(client)
    }
}

/// Runs `app` while `body` runs, then shuts it down gracefully, as SIGTERM does: the server stops
/// accepting, finishes what it serves and closes its port itself (these tests used to cancel it instead).
func withRunningApplication<App: ApplicationProtocol>(
    _ app: App, _ body: @Sendable () async throws -> Void
) async throws {
    let group = ServiceGroup(configuration: .init(services: [app], logger: app.logger))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var failure: (any Error)?
        do { try await body() } catch { failure = error }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        if let failure { throw failure }
    }
}

/// A real HTTP client for the live server, with the same `call` shape as the router tests use.
struct LiveClient: Sendable {
    let base: String

    /// Waits for `/healthz`: up to a minute, a bound against a server that never starts, not a speed figure.
    func waitUntilReady() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let result = try? await call(.get, "/healthz", key: nil), result.status == .ok { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw LiveServerTests.PortError()
    }

    @discardableResult
    func call(
        _ method: HTTPRequest.Method, _ uri: String, json: String? = nil, key: String? = GatewayHarness.apiKey
    ) async throws -> (status: HTTPResponse.Status, body: [String: Any], headers: HTTPFields) {
        var request = HTTPClientRequest(url: base + uri)
        request.method = .init(rawValue: method.rawValue)
        if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let object = (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
        var headers = HTTPFields()
        for (name, value) in response.headers {
            if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
        }
        return (HTTPResponse.Status(code: Int(response.status.code)), object, headers)
    }
}
