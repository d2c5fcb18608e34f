import Foundation
import GatewayClient
import GatewayCore
import GatewayFirebase
import GatewayTestSupport
import Testing

@testable import gateway

/// A sandbox gateway on a loopback port for GatewayClient's tests (GatewayClientTests.swift), which import the
/// client and not the server: the two share type names (`NextAction`, `Channel`…), as an app and the server do.
/// Runs `body` with the gateway's base URL and the sandbox API key.
func withClientTestGateway(_ body: @Sendable (URL, String) async throws -> Void) async throws {
    let harness = GatewayHarness()
    var options = harness.options()
    // Wall-clock time, as a deployed gateway runs: the simulated phone signs its Verify Push requests with the
    // real time (`nbf`), which a frozen clock refused once setup on a busy machine took longer than the skew.
    options.clock = SystemClock()
    options.sandboxTransport = .http
    options.port = try LoopbackPort.next()
    let (app, _) = try await buildApplication(options)
    let base = try #require(URL(string: "http://127.0.0.1:\(options.port)"))
    try await withLiveServer(app, port: options.port) { _ in try await body(base, GatewayHarness.apiKey) }
}

/// The sandbox Firebase project's web API key, for GatewayClientTests' first-factor sign-ins (the app's own
/// calls to Firebase, which the client does not make).
let clientTestFirebaseKey = FirebaseSandbox.apiKey

@Suite("GatewayClient's error taxonomy")
struct GatewayClientTaxonomyTests {
    @Test("the client knows every code of the server, each with the server's class")
    func sameTaxonomy() {
        let server = GatewayError.Code.allCases
        #expect(Set(ErrorCode.known.map(\.rawValue)) == Set(server.map(\.rawValue)))
        for code in server {
            #expect(ErrorCode(rawValue: code.rawValue).errorClass.rawValue == code.errorClass.rawValue, "\(code)")
        }
        #expect(ErrorCode(rawValue: "a_code_from_a_newer_gateway").errorClass == .unknown)
    }
}
