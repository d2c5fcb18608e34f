import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@testable import gateway

/// A webhook receiver in process: answers 500 to its first `failures` requests, 204 after, and keeps
/// every request.
final class WebhookReceiver: HTTPTransport {
    private let state: Mutex<(failuresLeft: Int, requests: [TransportRequest])>
    private let failure: HTTPResponse.Status

    init(failures: Int = 0, failure: HTTPResponse.Status = .internalServerError) {
        state = Mutex((failures, []))
        self.failure = failure
    }

    var requests: [TransportRequest] { state.withLock { $0.requests } }

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        let fail = state.withLock { state -> Bool in
            state.requests.append(request)
            guard state.failuresLeft > 0 else { return false }
            state.failuresLeft -= 1
            return true
        }
        return TransportResponse(status: fail ? failure : .noContent)
    }

    static func verify(_ request: TransportRequest, secret: String) -> Bool {
        guard let header = request.headerFields[WebhookSignature.header] else { return false }
        let parts = Dictionary(
            uniqueKeysWithValues: header.split(separator: ",").compactMap { part -> (String, String)? in
                let pair = part.split(separator: "=", maxSplits: 1)
                return pair.count == 2 ? (String(pair[0]), String(pair[1])) : nil
            })
        guard let t = parts["t"], let signature = parts["v1"] else { return false }
        var message = Data("\(t).".utf8)
        message.append(request.body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return mac.map { String(format: "%02x", $0) }.joined() == signature
    }
}

@Suite("Status webhooks")
struct WebhookTests {
    static let secret = "whsec_0123456789abcdef0123"
    let number = "+14155550100"

    /// The application runs its dispatcher as a service: it looks at the queue once at startup, then
    /// sleeps a minute, so the tests' own `pump()` calls are the only attempts.
    static func config(maxAttempts: Int = 4, events: String = "") -> String {
        """
        sandbox: true
        webhooks:
          endpoints:
            - {name: app, url: "http://127.0.0.1:9/hooks", secret_env: APP_WEBHOOK_SECRET, signing: legacy\(events)}
          max_attempts: \(maxAttempts)
          initial_backoff_seconds: 2
          max_backoff_seconds: 60
          poll_interval_ms: 60000
        """
    }

    func build(
        _ harness: GatewayHarness, receiver: WebhookReceiver, config: String = WebhookTests.config()
    ) async throws -> (some ApplicationProtocol, GatewayRuntime) {
        var options = try harness.options(config: config, environment: ["APP_WEBHOOK_SECRET": Self.secret])
        options.webhookTransport = receiver
        return try await buildApplication(options)
    }

    func approve(
        _ client: some TestClientProtocol, _ runtime: GatewayRuntime, to: String = "+14155550100"
    ) async throws -> String {
        let start = try await client.call(
            .post, "/v1/verifications", json: #"{"to": "\#(to)", "channel": "sms", "client_ref": "o-1"}"#)
        let id = try #require(start.body["id"] as? String)
        let code = try sandboxCode(runtime, to: to)
        let right = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
        #expect(right.status == .ok)
        return id
    }

    @Test("an approval is delivered once, signed, with an event id; failed attempts are retried with backoff")
    func approvedWithRetries() async throws {
        let harness = GatewayHarness()
        let receiver = WebhookReceiver(failures: 2)
        let (app, runtime) = try await build(harness, receiver: receiver)
        let dispatcher = try #require(runtime.webhooks)
        try await app.test(.router) { client in
            let id = try await approve(client, runtime)
            await dispatcher.pump()
            #expect(receiver.requests.count == 1)
            // Not due yet: nothing is sent before the backoff.
            await dispatcher.pump()
            #expect(receiver.requests.count == 1)
            harness.clock.advance(by: 2.3)
            await dispatcher.pump()
            #expect(receiver.requests.count == 2)
            harness.clock.advance(by: 4.5)
            await dispatcher.pump()
            #expect(receiver.requests.count == 3)
            harness.clock.advance(by: 100)
            await dispatcher.pump()
            #expect(receiver.requests.count == 3)

            let requests = receiver.requests
            #expect(Set(requests.map { $0.headerFields[WebhookSignature.eventID] }).count == 1)
            #expect(requests.map { $0.headerFields[WebhookSignature.attempt] } == ["1", "2", "3"])
            for request in requests { #expect(WebhookReceiver.verify(request, secret: Self.secret)) }
            #expect(!WebhookReceiver.verify(requests[0], secret: "another-secret-of-some-length"))
            let body = try #require(try JSONSerialization.jsonObject(with: requests[0].body) as? [String: Any])
            #expect(body["type"] as? String == "verification.approved")
            #expect((body["id"] as? String)?.hasPrefix("evt_") == true)
            let data = try #require(body["data"] as? [String: Any])
            #expect(data["verification_id"] as? String == id)
            #expect(data["status"] as? String == "approved")
            #expect(data["provider"] as? String == "twilio")
            #expect(data["country"] as? String == "US")
            #expect(data["client_reference"] as? String == "o-1")
            // No number, no code in a webhook.
            #expect(!String(decoding: requests[0].body, as: UTF8.self).contains("4155550100"))

            let delivered = try await client.call(.get, "/v1/admin/webhooks/deliveries?state=delivered")
            let list = try #require(delivered.body["deliveries"] as? [[String: Any]])
            #expect(list.count == 1)
            #expect(list.first?["attempts"] as? Int == 3)
        }
    }

    @Test("a delivery that fails every attempt is parked, listed, and delivered when replayed")
    func parkedAndReplayed() async throws {
        let harness = GatewayHarness()
        let receiver = WebhookReceiver(failures: 2)
        let (app, runtime) = try await build(harness, receiver: receiver, config: Self.config(maxAttempts: 2))
        let dispatcher = try #require(runtime.webhooks)
        try await app.test(.router) { client in
            _ = try await approve(client, runtime)
            await dispatcher.pump()
            harness.clock.advance(by: 3)
            await dispatcher.pump()
            #expect(receiver.requests.count == 2)
            let parked = try await client.call(.get, "/v1/admin/webhooks/deliveries?state=parked")
            let list = try #require(parked.body["deliveries"] as? [[String: Any]])
            #expect(list.count == 1)
            let first = try #require(list.first)
            #expect(first["last_error"] as? String == "HTTP 500")
            #expect(first["attempts"] as? Int == 2)
            let deliveryID = try #require(first["id"] as? String)
            harness.clock.advance(by: 3600)
            await dispatcher.pump()
            #expect(receiver.requests.count == 2)

            let replay = try await client.call(.post, "/v1/admin/webhooks/deliveries/\(deliveryID)/replay")
            #expect(replay.status == .accepted)
            #expect(replay.body["state"] as? String == "pending")
            let again = try await client.call(.post, "/v1/admin/webhooks/deliveries/\(deliveryID)/replay")
            #expect(again.status == .conflict)
            #expect(again.body.errorCode == "invalid_state")
            await dispatcher.pump()
            #expect(receiver.requests.count == 3)
            #expect(
                receiver.requests[2].headerFields[WebhookSignature.eventID]
                    == receiver.requests[0].headerFields[WebhookSignature.eventID])
            let unknown = try await client.call(.post, "/v1/admin/webhooks/deliveries/whd_nope/replay")
            #expect(unknown.status == .notFound)
            let bad = try await client.call(.get, "/v1/admin/webhooks/deliveries?state=lost")
            #expect(bad.status == .badRequest)
            let anonymous = try await client.call(.get, "/v1/admin/webhooks/deliveries", key: nil)
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test("cancel, expiry and a resend on another channel each give their event; endpoints filter by type")
    func eventTypes() async throws {
        let harness = GatewayHarness()
        let receiver = WebhookReceiver()
        let (app, runtime) = try await build(harness, receiver: receiver)
        let dispatcher = try #require(runtime.webhooks)
        try await app.test(.router) { client in
            let a = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550100", "channel": "sms"}"#)
            let canceled = try #require(a.body["id"] as? String)
            _ = try await client.call(.post, "/v1/verifications/\(canceled)/cancel")
            let b = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "+14155550101", "channel": "sms", "fallback_channels": ["voice"]}"#)
            let moved = try #require(b.body["id"] as? String)
            let resent = try await client.call(.post, "/v1/verifications/\(moved)/resend", json: "{}")
            #expect(resent.body["channel"] as? String == "voice")
            harness.clock.advance(by: 3600)
            let expired = try await client.call(.get, "/v1/verifications/\(moved)")
            #expect(expired.body["status"] as? String == "expired")
            await dispatcher.pump()
            let events = receiver.requests.compactMap {
                try? JSONSerialization.jsonObject(with: $0.body) as? [String: Any]
            }
            let pairs = events.map {
                "\($0["type"] as? String ?? "?"):\((($0["data"] as? [String: Any])?["verification_id"] as? String) ?? "?")"
            }
            // Deliveries go out concurrently, so their order is not guaranteed (docs/operations.md).
            #expect(
                pairs.sorted()
                    == [
                        "verification.canceled:\(canceled)", "verification.channel_changed:\(moved)",
                        "verification.expired:\(moved)",
                    ].sorted())
            let changed = try #require(
                events.first { $0["type"] as? String == "verification.channel_changed" }?["data"] as? [String: Any])
            #expect(changed["channel"] as? String == "voice")
            #expect(changed["previous_channel"] as? String == "sms")
        }

        let filtered = WebhookReceiver()
        let other = GatewayHarness()
        let (app2, runtime2) = try await build(
            other, receiver: filtered, config: Self.config(events: ", events: [verification.canceled]"))
        try await app2.test(.router) { client in
            _ = try await approve(client, runtime2)
            await runtime2.webhooks?.pump()
            #expect(filtered.requests.isEmpty)
        }
    }

    @Test("a delivery receipt of an own code is a verification.delivery webhook with the message's status")
    func deliveryReceipts() async throws {
        let harness = GatewayHarness()
        let receiver = WebhookReceiver()
        let config = Self.config() + "\nmessages: {app: Acme}\nrouting:\n  default: [twilio_messaging]\n"
        let (app, runtime) = try await build(harness, receiver: receiver, config: config)
        let dispatcher = try #require(runtime.webhooks)
        try await app.test(.router) { client in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550100"}"#)
            let id = try #require(start.body["id"] as? String)
            // The emulator posts `sent` then `delivered` after its answer; wait for both, a busy machine's while.
            for _ in 0..<600 {
                let events = try await runtime.service.events(id: id)
                if events.filter({ $0.kind == .delivery }).count >= 2 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            await dispatcher.pump()
            let bodies = receiver.requests.compactMap {
                try? JSONSerialization.jsonObject(with: $0.body) as? [String: Any]
            }
            let deliveries = bodies.filter { $0["type"] as? String == "verification.delivery" }.compactMap {
                $0["data"] as? [String: Any]
            }
            #expect(deliveries.count == 2)
            let delivered = try #require(
                deliveries.first { ($0["delivery"] as? [String: Any])?["status"] as? String == "delivered" })
            #expect(delivered["verification_id"] as? String == id)
            // The verification's own status beside the message's.
            #expect(delivered["status"] as? String == "pending")
            let delivery = try #require(delivered["delivery"] as? [String: String])
            #expect(delivery["provider"] == "twilio_messaging" && delivery["vendor_status"] == "delivered")
            #expect(delivery["message_id"]?.hasPrefix("SM") == true)
            #expect(receiver.requests.allSatisfy { WebhookReceiver.verify($0, secret: Self.secret) })
        }
    }

    @Test("a restart loses nothing and repeats nothing: the queue and its cursor are in the store")
    func survivesRestart() async throws {
        let harness = GatewayHarness()
        let failing = WebhookReceiver(failures: 1)
        let (app, runtime) = try await build(harness, receiver: failing)
        try await app.test(.router) { client in
            // One approval fed and attempted once (it failed), one approved but never fed: then the "crash".
            _ = try await approve(client, runtime)
            await runtime.webhooks?.pump()
            _ = try await approve(client, runtime, to: "+14155550102")
        }
        #expect(failing.requests.count == 1)

        let receiver = WebhookReceiver()
        let (app2, runtime2) = try await build(harness, receiver: receiver)
        try await app2.test(.router) { _ in
            harness.clock.advance(by: 5)
            await runtime2.webhooks?.pump()
            await runtime2.webhooks?.pump()
        }
        #expect(receiver.requests.count == 2)
        let ids = receiver.requests.compactMap { $0.headerFields[WebhookSignature.eventID] }
        #expect(Set(ids).count == 2)
        let first = try #require(failing.requests.first?.headerFields[WebhookSignature.eventID])
        #expect(ids.contains(first))
        #expect(
            receiver.requests.first { $0.headerFields[WebhookSignature.eventID] == first }?.headerFields[
                WebhookSignature.attempt] == "2")
    }

    @Test("webhook settings are checked: secrets only from the environment, URLs, names, event types")
    func badSettings() async throws {
        let harness = GatewayHarness()
        let cases = [
            "webhooks: {endpoints: [{name: a, url: 'http://x/h', secret: abc}]}",
            "webhooks: {endpoints: [{name: a, url: 'ftp://x/h', secret_env: APP_WEBHOOK_SECRET}]}",
            "webhooks: {endpoints: [{name: a, url: 'http://x/h', secret_env: MISSING}]}",
            // A secret that is not a Standard Webhooks one, without signing: legacy.
            "webhooks: {endpoints: [{name: a, url: 'http://x/h', secret_env: APP_WEBHOOK_SECRET}]}",
            "webhooks: {endpoints: [{name: a, url: 'http://x/h', secret_env: [APP_WEBHOOK_SECRET], signing: legacy}]}",
            "webhooks: {endpoints: [{name: a, url: 'http://x/h', secret_env: STANDARD_SECRET, signing: modern}]}",
            "webhooks: {endpoints: [{name: a, url: 'http://x/h', secret_env: STANDARD_SECRET, format: xml}]}",
            "webhooks: {endpoints: [{name: a, url: 'http://x/h', secret_env: STANDARD_SECRET, signing_key_env: STANDARD_SECRET}]}",
            "webhooks: {endpoints: [{name: a, url: 'http://x/h', secret_env: APP_WEBHOOK_SECRET, signing: legacy, signing_key_env: ED_KEY}]}",
            "webhooks: {endpoints: [], cloudevents: {type_prefix: 'com example'}}",
            "webhooks: {endpoints: [{name: a, url: 'http://x/h', secret_env: APP_WEBHOOK_SECRET, events: [verification.done]}]}",
            "webhooks: {endpoints: [{name: a, url: 'http://x/h', secret_env: APP_WEBHOOK_SECRET}, {name: a, url: 'http://y/h', secret_env: APP_WEBHOOK_SECRET}]}",
            "webhooks: {endpoints: [], max_attempts: 0}",
            "webhooks: {endpoints: [], retries: 3}",
        ]
        for yaml in cases {
            let options = try harness.options(
                config: "sandbox: true\n" + yaml + "\n",
                environment: [
                    "APP_WEBHOOK_SECRET": Self.secret, "STANDARD_SECRET": StandardWebhookTests.secrets[0],
                    "ED_KEY": StandardWebhookTests.signingKey,
                ])
            await #expect(throws: ConfigurationError.self, "\(yaml)") { _ = try await buildApplication(options) }
        }
    }

    @Test("the retry policy doubles from the initial wait up to the maximum")
    func backoff() {
        let policy = WebhookRetryPolicy(maxAttempts: 10, initialBackoff: 2, maxBackoff: 60)
        #expect((1...7).map { policy.backoff(afterAttempts: $0) } == [2, 4, 8, 16, 32, 60, 60])
    }
}
