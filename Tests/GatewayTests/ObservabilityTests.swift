import Crypto
import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing

@testable import gateway

/// One sample of the Prometheus text format: `name{label="value",…} number`.
struct PrometheusSample: Equatable {
    var name: String
    var labels: [String: String]
    var value: Double

    /// Parses the exposition text strictly: every line is a comment (`# HELP`/`# TYPE`), blank, or a sample
    /// with quoted label values (with `\"`, `\\` and `\n` escapes) and a number. Throws on anything else.
    static func parse(_ text: String) throws -> [PrometheusSample] {
        var samples: [PrometheusSample] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") { continue }
            var rest = Substring(line)
            let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }
            guard !name.isEmpty, name.first?.isNumber == false else { throw ParseError(line: String(line)) }
            rest = rest.dropFirst(name.count)
            var labels: [String: String] = [:]
            if rest.first == "{" {
                rest = rest.dropFirst()
                while rest.first != "}" {
                    let key = rest.prefix { $0 != "=" }
                    rest = rest.dropFirst(key.count)
                    guard rest.hasPrefix("=\"") else { throw ParseError(line: String(line)) }
                    rest = rest.dropFirst(2)
                    var value = ""
                    while let c = rest.first, c != "\"" {
                        rest = rest.dropFirst()
                        if c == "\\", let escaped = rest.first {
                            rest = rest.dropFirst()
                            value.append(escaped == "n" ? "\n" : escaped)
                        } else {
                            value.append(c)
                        }
                    }
                    guard rest.first == "\"" else { throw ParseError(line: String(line)) }
                    rest = rest.dropFirst()
                    labels[String(key)] = value
                    if rest.first == "," { rest = rest.dropFirst() }
                }
                rest = rest.dropFirst()
            }
            guard rest.first == " ", let value = Double(rest.dropFirst().split(separator: " ").first ?? "") else {
                throw ParseError(line: String(line))
            }
            samples.append(PrometheusSample(name: String(name), labels: labels, value: value))
        }
        return samples
    }

    struct ParseError: Error { var line: String }
}

extension [PrometheusSample] {
    func value(_ name: String, _ labels: [String: String]) -> Double? {
        first { sample in sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value } }?
            .value
    }
}

@Suite("Metrics, request ids and JSON logs")
struct ObservabilityTests {
    let number = "+14155550100"

    @Test("GET /metrics shows starts, checks, approvals, vendor latency and HTTP requests with bounded labels")
    func metricsAfterAVerification() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550100", "channel": "sms"}"#)
            let id = try #require(start.body["id"] as? String)
            let code = try sandboxCode(runtime, to: number)
            let wrong = code == "000000" ? "111111" : "000000"
            _ = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(wrong)"}"#)
            _ = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            _ = try await client.call(.post, "/v1/verifications", json: #"{"to": "+442079460000", "channel": "sms"}"#)

            let text = try await client.execute(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(GatewayHarness.apiKey)"]
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
                return String(buffer: response.body)
            }
            let samples = try PrometheusSample.parse(text)
            let labels = ["provider": "twilio", "country": "US", "channel": "sms"]
            #expect(samples.value("gateway_verifications_started_total", labels) == 1)
            #expect(
                samples.value("gateway_verification_checks_total", labels.merging(["outcome": "incorrect_code"]) { $1 })
                    == 1)
            #expect(
                samples.value("gateway_verification_checks_total", labels.merging(["outcome": "approved"]) { $1 }) == 1)
            #expect(samples.value("gateway_verifications_approved_total", labels) == 1)
            #expect(
                samples.value("gateway_verifications_finished_total", labels.merging(["status": "approved"]) { $1 })
                    == 1)
            #expect(
                samples.value(
                    "gateway_provider_call_duration_seconds_count",
                    ["provider": "twilio", "operation": "start", "outcome": "accepted"]) == 1)
            #expect(
                samples.value(
                    "gateway_provider_call_duration_seconds_count",
                    ["provider": "twilio", "operation": "check", "outcome": "approved"]) == 1)
            #expect(
                samples.value(
                    "gateway_verification_start_errors_total",
                    ["country": "GB", "channel": "sms", "code": "unsupported_destination"])
                    == 1)
            #expect(
                samples.value(
                    "gateway_http_requests_total", ["method": "POST", "route": "/v1/verifications", "status": "201"])
                    == 1)
            #expect(
                samples.value(
                    "gateway_http_requests_total",
                    ["method": "POST", "route": "/v1/verifications/{id}/check", "status": "200"]) == 1)
            #expect(
                samples.value(
                    "gateway_http_request_duration_seconds_count",
                    ["method": "POST", "route": "/v1/verifications", "status": "201"]) == 1)
            // The SQLite store's commit groups: at least the start's and the two checks' (the read with its
            // lease, and the settle, each); every group carries one call or more.
            let groups = try #require(samples.value("gateway_store_commit_groups_total", [:]))
            #expect(groups >= 5)
            #expect(try #require(samples.value("gateway_store_grouped_calls_total", [:])) >= groups)
            // One request at a time: no commit waited for others (docs/performance.md, "Commit delay").
            #expect(samples.value("gateway_store_delayed_commits_total", [:]) == 0)
            // Store calls and statements by operation, and commits: the start's insert is one call.
            #expect(try #require(samples.value("gateway_store_calls_total", ["operation": "insert"])) == 1)
            #expect(try #require(samples.value("gateway_store_statements_total", ["operation": "insert"])) >= 1)
            #expect(try #require(samples.value("gateway_store_commits_total", [:])) >= 3)
            // Bounded labels: no number, no verification id, anywhere in the exposition.
            #expect(!text.contains("4155550100"))
            #expect(!text.contains(id))
        }
    }

    @Test("requests no route matched are labelled by sandbox or callback id, or `unmatched`: never by their path")
    func unroutedLabels() {
        let labels = HTTPMetricsMiddleware.UnroutedLabels(knownIDs: ["twilio", "sinch", "firebase-staging"])
        #expect(labels.label("/sandbox/twilio/v2/Services/VA1/Verifications") == "/sandbox/twilio/*")
        #expect(labels.label("/sandbox/twilio") == "/sandbox/twilio/*")
        #expect(labels.label("//sandbox//twilio/") == "/sandbox/twilio/*")
        #expect(labels.label("/callbacks/sinch/verification") == "/callbacks/sinch/*")
        #expect(labels.label("/callbacks/firebase-staging/x/y") == "/callbacks/firebase-staging/*")
        #expect(labels.label("/sandbox/sinch/../twilio") == "/sandbox/sinch/*")
        for path in [
            "/sandbox/nexmo/verify/json", "/sandbox", "/", "", "/v1/nothing/here", "/callbacks/+447400000001",
            "/metrics/twilio/x",
        ] {
            #expect(labels.label(path) == "unmatched", "\(path)")
        }
    }

    @Test("/metrics wants an admin key off loopback, unless the configuration opens it")
    func metricsAccess() async throws {
        try await GatewayHarness().run { client, _ in
            let anonymous = try await client.call(.get, "/metrics", key: nil)
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.body.errorCode == "unauthorized")
        }
        let harness = GatewayHarness()
        let options = try harness.options(config: "sandbox: true\nmetrics: {access: open}\n")
        let (app, _) = try await buildApplication(options)
        try await app.test(.router) { client in
            let open = try await client.execute(uri: "/metrics", method: .get) { $0.status }
            #expect(open == .ok)
        }
        #expect(MetricsController.isLoopback("127.0.0.1"))
        #expect(MetricsController.isLoopback("::1"))
        #expect(!MetricsController.isLoopback("10.0.0.1"))
        #expect(!MetricsController.isLoopback(nil))
    }

    @Test("a bad metrics setting is a configuration error")
    func badMetricsSetting() async throws {
        let harness = GatewayHarness()
        let options = try harness.options(config: "sandbox: true\nmetrics: {access: everyone, port: 9}\n")
        await #expect(throws: ConfigurationError.self) { _ = try await buildApplication(options) }
    }

    @Test("the engine's log lines carry the request's id, in JSON with the metadata as fields")
    func requestIDInEngineLogs() async throws {
        let lines = Mutex<[Data]>([])
        let harness = GatewayHarness()
        var options = harness.options()
        options.logger = Logger(label: "gateway") { label in
            JSONLogHandler(label: label, metadataProvider: RequestScope.metadataProvider) { line in
                lines.withLock { $0.append(line) }
            }
        }
        let (app, _) = try await buildApplication(options)
        let requestID = try await app.test(.router) { client in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550100", "channel": "sms"}"#,
                headers: [.requestID: "req-from-client-1"])
            #expect(start.headers[.requestID] == "req-from-client-1")
            return start.headers[.requestID]
        }
        let objects = lines.withLock { $0 }.compactMap {
            (try? JSONSerialization.jsonObject(with: $0)) as? [String: Any]
        }
        #expect(objects.count == lines.withLock { $0.count })
        let started = try #require(objects.first { $0["message"] as? String == "verification started" })
        #expect(started["request.id"] as? String == requestID)
        #expect(started["provider.id"] as? String == "twilio")
        #expect(started["level"] as? String == "info")
        #expect(started["logger"] as? String == "gateway")
        #expect((started["ts"] as? String)?.hasSuffix("Z") == true)
        // Masked as in the text format.
        #expect(started["to"] as? String != number)
        let request = try #require(objects.first { $0["message"] as? String == "request" })
        #expect(request["request.id"] as? String == requestID)
    }

    @Test("JSON log lines are one object per line with nested metadata kept")
    func jsonLogHandlerFormat() throws {
        let lines = Mutex<[Data]>([])
        var handler = JSONLogHandler(label: "x", metadataProvider: nil) { line in lines.withLock { $0.append(line) } }
        handler[metadataKey: "a"] = "1"
        let logger = Logger(label: "x") { _ in handler }
        logger.warning("hello \"world\"\nnext", metadata: ["list": ["p", "q"], "map": ["k": "v"]])
        let line = try #require(lines.withLock { $0.first })
        #expect(line.last == 0x0A)
        #expect(line.dropLast().contains(0x0A) == false)
        let object = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
        #expect(object["message"] as? String == "hello \"world\"\nnext")
        #expect(object["level"] as? String == "warning")
        #expect(object["a"] as? String == "1")
        #expect(object["list"] as? [String] == ["p", "q"])
        #expect((object["map"] as? [String: String])?["k"] == "v")
    }

    @Test("text log lines are StreamLogHandler's, metadata sorted, with the request's id from the provider")
    func textLogHandlerFormat() throws {
        final class Lines: TextOutputStream, @unchecked Sendable {
            let lines = Mutex<[String]>([])
            func write(_ string: String) { lines.withLock { $0.append(string) } }
        }
        let ours = Mutex<[String]>([])
        let theirs = Lines()
        var text = TextLogHandler(label: "gateway", metadataProvider: RequestScope.metadataProvider) { line in
            ours.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
        }
        var stream = StreamLogHandler(label: "gateway", stream: theirs, metadataProvider: RequestScope.metadataProvider)
        text.logLevel = .notice
        stream.logLevel = .notice
        text[metadataKey: "b"] = "2"
        stream[metadataKey: "b"] = "2"
        text[metadataKey: "a"] = ["x", "y"]
        stream[metadataKey: "a"] = ["x", "y"]
        #expect(text[metadataKey: "b"] == "2")
        let handlers = (text, stream)
        RequestScope.$requestID.withValue("req_1") {
            for logger in [Logger(label: "gateway") { _ in handlers.0 }, Logger(label: "gateway") { _ in handlers.1 }] {
                logger.notice("sent", metadata: ["c": "3"])
                logger.info("quiet")
            }
        }
        Logger(label: "gateway") { _ in handlers.0 }.error("plain")
        // The lines differ only in their timestamps (to the second), which may fall either side of a tick.
        let strip = { (line: String) in line.split(separator: " ", maxSplits: 1).last.map(String.init) ?? "" }
        let mine = ours.withLock { $0 }
        let reference = theirs.lines.withLock { $0 }
        #expect(mine.count == 2)
        #expect(reference.count == 1)
        #expect(mine.first.map(strip) == reference.first.map(strip))
        #expect(
            mine.first.map(strip) == "notice gateway: a=[\"x\", \"y\"] b=2 c=3 request.id=req_1 [GatewayTests] sent\n")
        #expect(mine.last.map(strip) == "error gateway: a=[\"x\", \"y\"] b=2 [GatewayTests] plain\n")
        #expect(mine.first?.first?.isNumber == true)
    }
}
