import Foundation
import GatewayCore
import GatewayTestSupport
import GatewayTwilio
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import gateway

/// Builds a sandbox gateway on a fresh data directory and runs `body` against Hummingbird's
/// socket-free router harness. A data directory the harness makes itself is removed when the test process
/// exits (``ScratchDirectories``); one passed in belongs to the caller.
///
/// The gateway logs to ``logs``, in memory, so a passing run prints the test report and not the gateway's
/// lines. Vendor calls get ``vendorTimeout``: a bound against a hang, not a speed figure, since the tests run
/// in parallel on machines as busy as CI's two shared cores (a 2-second deadline failed Sinch starts there).
/// A start's deadline across its vendors (30 s by default) is five of those: a failover test's start once
/// passed 30 s there and was not failed over.
struct GatewayHarness {
    static let apiKey = "sk_test_0123456789abcdef"
    static let vendorTimeout: Duration = .seconds(60)
    let clock: ManualClock
    let dataDirectory: URL
    let logs = CapturedLogs()

    init(clock: ManualClock = ManualClock(Date(timeIntervalSince1970: 1_900_000_000)), dataDirectory: URL? = nil) {
        self.clock = clock
        self.dataDirectory = dataDirectory ?? ScratchDirectories.make("gateway-test")
    }

    func options(configFile: URL? = nil, environment: [String: String] = [:]) -> GatewayOptions {
        var options = GatewayOptions()
        options.dataDirectory = dataDirectory
        options.sandboxTransport = .inProcess
        options.clock = clock
        options.configFile = configFile
        options.environment = ["GATEWAY_SANDBOX_API_KEY": Self.apiKey].merging(environment) { _, new in new }
        options.vendorTimeout = Self.vendorTimeout
        options.startDeadline = Self.vendorTimeout * 5
        options.logger = logs.logger(label: "gateway")
        return options
    }

    /// Writes `yaml` as the configuration file in the data directory and returns the options that load it.
    func options(config yaml: String, environment: [String: String] = [:]) throws -> GatewayOptions {
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let file = dataDirectory.appendingPathComponent("gateway.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return options(configFile: file, environment: environment)
    }

    func run(
        _ body: @Sendable (any TestClientProtocol, GatewayRuntime) async throws -> Void
    ) async throws {
        let (app, runtime) = try await buildApplication(options())
        try await app.test(.router) { client in try await body(client, runtime) }
    }
}

extension TestClientProtocol {
    /// Sends JSON with the test API key and returns status and parsed body.
    @discardableResult
    func call(
        _ method: HTTPRequest.Method, _ uri: String, json: String? = nil, key: String? = GatewayHarness.apiKey,
        headers extra: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, body: [String: Any], headers: HTTPFields) {
        var headers = extra
        if let key { headers[.authorization] = "Bearer \(key)" }
        if json != nil { headers[.contentType] = "application/json" }
        return try await execute(
            uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) }
        ) { response in
            let data = Data(response.body.readableBytesView)
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
            return (response.status, object, response.headers)
        }
    }
}

extension Dictionary where Key == String, Value == Any {
    /// `error.code` of the one error shape, or nil.
    var errorCode: String? { (self["error"] as? [String: Any])?["code"] as? String }
    var error: [String: Any]? { self["error"] as? [String: Any] }
}

/// The newest code the sandbox sent to `to`.
func sandboxCode(_ runtime: GatewayRuntime, to: String) throws -> String {
    try #require(runtime.sandbox?.outbox.last(to: to)?.code)
}
