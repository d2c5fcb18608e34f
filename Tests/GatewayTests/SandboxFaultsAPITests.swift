import Foundation
import GatewayCore
import HummingbirdTesting
import Testing

@testable import gateway

/// `GET|PUT|DELETE /sandbox/faults/{plugin}` with rates, and what the engine makes of each fault.
@Suite("Sandbox faults over the API")
struct SandboxFaultsAPITests {
    /// SMS to Twilio first, Sinch as the fallback; breakers that never open, so every start asks Twilio
    /// first and the seed alone decides which of them fail (the harness's clock never ends a cooldown).
    static let config = """
        sandbox: true
        routing:
          default: [twilio, sinch]
        breakers: {consecutive_failures: 1000, failure_rate: 1, min_requests: 100000}
        """

    func withGateway(_ body: @Sendable (any TestClientProtocol, GatewayRuntime) async throws -> Void) async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(harness.options(config: Self.config))
        try await app.test(.router) { client in try await body(client, runtime) }
    }

    static func number(_ index: Int) -> String { "+4474009\(String(format: "%05d", index))" }

    @Test("a PUT with rates answers and GET shows the faults in force; DELETE clears them and the delivery rate")
    func setShowClear() async throws {
        try await withGateway { client, _ in
            let body = #"""
                {"error_rate": 0.3, "error_status": 502, "reset_rate": 0.1, "malformed_rate": 0.05,
                 "latency_ms": 5, "latency_jitter_ms": 10, "seed": 7, "delivery_rate": 0.5}
                """#
            let set = try await client.call(.put, "/sandbox/faults/twilio", json: body, key: nil)
            #expect(set.status == .ok)
            let shown = try await client.call(.get, "/sandbox/faults/twilio", key: nil)
            for result in [set.body, shown.body] {
                #expect(result["error_rate"] as? Double == 0.3)
                #expect(result["error_status"] as? Int == 502)
                #expect(result["reset_rate"] as? Double == 0.1)
                #expect(result["malformed_rate"] as? Double == 0.05)
                #expect(result["latency_ms"] as? Int == 5)
                #expect(result["latency_jitter_ms"] as? Int == 10)
                #expect(result["seed"] as? Int == 7)
                #expect(result["delivery_rate"] as? Double == 0.5)
            }
            let cleared = try await client.call(.delete, "/sandbox/faults/twilio", key: nil)
            #expect(cleared.status == .ok)
            let after = try await client.call(.get, "/sandbox/faults/twilio", key: nil)
            for result in [cleared.body, after.body] {
                #expect(result["error_rate"] as? Double == 0)
                #expect(result["reset_rate"] as? Double == 0)
                #expect(result["malformed_rate"] as? Double == 0)
                #expect(result["latency_jitter_ms"] as? Int == 0)
                #expect(result["delivery_rate"] as? Double == 1)
                #expect(result["server_error_status"] is NSNull)
            }
            let unknown = try await client.call(.delete, "/sandbox/faults/nobody", key: nil)
            #expect(unknown.status == .notFound)
            #expect(unknown.body.errorCode == "not_found")
        }
    }

    @Test(
        "bad fault input is a 400 in the one error shape, never a 500, and leaves the faults as they were",
        arguments: [
            (#"{"error_rate": 1.2}"#, "error_rate"),
            (#"{"reset_rate": -0.5}"#, "reset_rate"),
            (#"{"malformed_rate": "0.1"}"#, "malformed_rate"),
            (#"{"error_rate": 0.5, "reset_rate": 0.4, "malformed_rate": 0.2}"#, "add up to at most 1"),
            (#"{"error_status": 404}"#, "error_status"),
            (#"{"error_status": 503.5}"#, "error_status"),
            (#"{"latency_ms": 40000, "latency_jitter_ms": 30000}"#, "latency_jitter_ms"),
            (#"{"latency_jitter_ms": -1}"#, "latency_jitter_ms"),
            (#"{"seed": -3}"#, "seed"),
            (#"{"seed": 1e300}"#, "seed"),
            (#"{"error_rate": 1e400}"#, ""),  // refused as JSON before the field is read
            (#"{"error_rate": null, "flakiness": 0.3}"#, "flakiness"),
            (#"[0.3]"#, ""),
        ])
    func badInput(_ body: String, _ named: String) async throws {
        try await withGateway { client, runtime in
            let result = try await client.call(.put, "/sandbox/faults/twilio", json: body, key: nil)
            #expect(result.status == .badRequest, "\(body)")
            #expect(result.body.errorCode == "invalid_request")
            #expect(result.body.error?["request_id"] as? String != nil)
            let message = result.body.error?["message"] as? String ?? ""
            #expect(named.isEmpty || message.contains(named), "\(message)")
            #expect(runtime.sandbox?.mount("twilio")?.emulator.faults.current == FaultSwitch.Faults.none)
        }
    }

    @Test("an error rate fails exactly the starts the seed picks, and each fails over to Sinch with one message")
    func errorRateFailsOver() async throws {
        try await withGateway { client, runtime in
            let set = try await client.call(
                .put, "/sandbox/faults/twilio", json: #"{"error_rate": 0.3, "seed": 11}"#, key: nil)
            #expect(set.status == .ok)
            // The same faults on a switch of our own say which of the Twilio calls the seed fails.
            let expected = FaultSwitch()
            expected.set(FaultSwitch.Faults(errorRate: 0.3, seed: 11))
            var expectedProviders: [String] = []
            var providers: [String] = []
            for index in 0..<40 {
                let to = Self.number(index)
                expectedProviders.append(expected.take().outcome == .serverError(503) ? "sinch" : "twilio")
                let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "\#(to)"}"#)
                #expect(start.status == .created)
                providers.append(start.body["provider"] as? String ?? "-")
                #expect(runtime.sandbox?.outbox.messages(to: to).count == 1, "one message to \(to)")
            }
            #expect(providers == expectedProviders)
            #expect(providers.contains("sinch") && providers.contains("twilio"))
        }
    }

    @Test(
        "a reset or malformed answer after the vendor sent is not failed over: one message, and the start is 502",
        arguments: [
            (#"{"reset_rate": 1}"#, "provider_unavailable"),
            (#"{"malformed_rate": 1}"#, "provider_error"),
        ])
    func ambiguousFailuresAreNotFailedOver(_ faults: String, _ code: String) async throws {
        try await withGateway { client, runtime in
            _ = try await client.call(.put, "/sandbox/faults/twilio", json: faults, key: nil)
            let to = Self.number(100)
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "\#(to)"}"#)
            #expect(start.status == .badGateway)
            #expect(start.body.errorCode == code)
            let messages = runtime.sandbox?.outbox.messages(to: to) ?? []
            #expect(messages.map(\.provider) == ["twilio"], "Twilio sent, and Sinch was not asked to send again")
        }
    }

    @Test("the switch connection_reset drops the request before the vendor acts: nothing is sent")
    func resetSwitchSendsNothing() async throws {
        try await withGateway { client, runtime in
            _ = try await client.call(.put, "/sandbox/faults/twilio", json: #"{"connection_reset": true}"#, key: nil)
            let to = Self.number(101)
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "\#(to)"}"#)
            #expect(start.status == .badGateway)
            #expect(runtime.sandbox?.outbox.messages(to: to).isEmpty == true)
        }
    }
}
