import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// Standard Webhooks signing (`webhook-id`, `webhook-timestamp`, `webhook-signature`), key rotation, Ed25519,
/// CloudEvents bodies, and an endpoint its receiver disables with `410 Gone`.
@Suite("Standard Webhooks")
struct StandardWebhookTests {
    /// Two `whsec_` secrets (32 bytes each) and an Ed25519 seed, as Standard Webhooks writes them.
    static let secrets = [
        "whsec_" + Data((0..<32).map { UInt8($0) }).base64EncodedString(),
        "whsec_" + Data((0..<32).map { UInt8(255 - $0) }).base64EncodedString(),
    ]
    static let seed = Data((0..<32).map { UInt8($0 * 7 % 256) })
    static let signingKey = "whsk_" + seed.base64EncodedString()

    static func config(format: String = "json", rotation: Bool = true, key: Bool = true) -> String {
        let secrets = rotation ? "[NEW_WEBHOOK_SECRET, OLD_WEBHOOK_SECRET]" : "NEW_WEBHOOK_SECRET"
        return """
            sandbox: true
            public_base_url: "https://gateway.example.com"
            webhooks:
              endpoints:
                - {name: app, url: "http://127.0.0.1:9/hooks", secret_env: \(secrets), format: \(format)\(
                    key ? ", signing_key_env: WEBHOOK_ED25519_KEY" : "")}
              max_attempts: 4
              initial_backoff_seconds: 2
              poll_interval_ms: 60000
            """
    }

    static func build(_ harness: GatewayHarness, receiver: WebhookReceiver, config: String) async throws -> (
        some ApplicationProtocol, GatewayRuntime
    ) {
        var options = try harness.options(
            config: config,
            environment: [
                "NEW_WEBHOOK_SECRET": secrets[0], "OLD_WEBHOOK_SECRET": secrets[1], "WEBHOOK_ED25519_KEY": signingKey,
            ])
        options.webhookTransport = receiver
        return try await buildApplication(options)
    }

    /// The signed content of Standard Webhooks: `{id}.{timestamp}.{body}`.
    static func content(_ request: TransportRequest) throws -> Data {
        let id = try #require(request.headerFields[WebhookSignature.webhookID])
        let timestamp = try #require(request.headerFields[WebhookSignature.webhookTimestamp])
        var content = Data("\(id).\(timestamp).".utf8)
        content.append(request.body)
        return content
    }

    /// Whether `request` carries a `v1` signature under `secret` (a `whsec_` string).
    static func verifies(_ request: TransportRequest, secret: String) throws -> Bool {
        let key = try #require(Data(base64Encoded: String(secret.dropFirst("whsec_".count))))
        let expected =
            "v1,"
            + Data(HMAC<SHA256>.authenticationCode(for: try content(request), using: SymmetricKey(data: key)))
            .base64EncodedString()
        let signatures = (request.headerFields[WebhookSignature.webhookSignature] ?? "").split(separator: " ")
        return signatures.contains { $0 == expected }
    }

    /// Whether `request` carries a `v1a` signature that `publicKey` (`whpk_…`) verifies.
    static func verifies(_ request: TransportRequest, publicKey: String) throws -> Bool {
        let raw = try #require(Data(base64Encoded: String(publicKey.dropFirst("whpk_".count))))
        let key = try Curve25519.Signing.PublicKey(rawRepresentation: raw)
        let content = try content(request)
        let signatures = (request.headerFields[WebhookSignature.webhookSignature] ?? "").split(separator: " ")
        return signatures.contains { entry in
            guard entry.hasPrefix("v1a,"), let signature = Data(base64Encoded: String(entry.dropFirst(4))) else {
                return false
            }
            return key.isValidSignature(signature, for: content)
        }
    }

    func approve(_ client: some TestClientProtocol, _ runtime: GatewayRuntime, to: String) async throws -> String {
        let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "\#(to)", "channel": "sms"}"#)
        let id = try #require(start.body["id"] as? String)
        let code = try sandboxCode(runtime, to: to)
        #expect(
            try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#).status == .ok)
        return id
    }

    @Test("every secret of a rotation and the Ed25519 key sign each attempt; webhook-id stays across retries")
    func signedDuringRotation() async throws {
        let harness = GatewayHarness()
        let receiver = WebhookReceiver(failures: 1)
        let (app, runtime) = try await Self.build(harness, receiver: receiver, config: Self.config())
        let dispatcher = try #require(runtime.webhooks)
        try await app.test(.router) { client in
            _ = try await approve(client, runtime, to: "+14155550120")
            await dispatcher.pump()
            harness.clock.advance(by: 3)
            await dispatcher.pump()
            let requests = receiver.requests
            #expect(requests.count == 2)
            let endpoints = try await client.call(.get, "/v1/admin/webhooks/endpoints")
            let endpoint = try #require((endpoints.body["endpoints"] as? [[String: Any]])?.first)
            #expect(endpoint["signing"] as? String == "standard" && endpoint["secrets"] as? Int == 2)
            #expect(endpoint["state"] as? String == "active")
            let publicKey = try #require(endpoint["public_key"] as? String)
            let expected = try Curve25519.Signing.PrivateKey(rawRepresentation: Self.seed).publicKey
            #expect(publicKey == "whpk_" + expected.rawRepresentation.base64EncodedString())
            for request in requests {
                #expect(try Self.verifies(request, secret: Self.secrets[0]))
                #expect(try Self.verifies(request, secret: Self.secrets[1]))
                #expect(try Self.verifies(request, publicKey: publicKey))
                #expect(request.headerFields[WebhookSignature.header] == nil)
                #expect(request.headerFields[.contentType] == "application/json")
                let signatures = request.headerFields[WebhookSignature.webhookSignature]?.split(separator: " ")
                #expect(signatures?.map { $0.split(separator: ",").first } == ["v1", "v1", "v1a"])
            }
            // The same id on both attempts (a receiver drops the repeat by it); the timestamp is each attempt's.
            #expect(
                requests[0].headerFields[WebhookSignature.webhookID]
                    == requests[1].headerFields[WebhookSignature.webhookID])
            #expect(requests[0].headerFields[WebhookSignature.webhookID]?.hasPrefix("evt_") == true)
            #expect(
                Int(requests[1].headerFields[WebhookSignature.webhookTimestamp] ?? "")
                    == Int(harness.clock.now.timeIntervalSince1970))
            // A body changed by one byte verifies under no key.
            var tampered = requests[0]
            tampered.body = Data(
                String(decoding: tampered.body, as: UTF8.self).replacingOccurrences(of: "approved", with: "approveD")
                    .utf8)
            #expect(try !Self.verifies(tampered, secret: Self.secrets[0]))
            #expect(try !Self.verifies(tampered, publicKey: publicKey))
        }
    }

    @Test("format: cloudevents sends a CloudEvents 1.0 structured event, typed and sourced from the public address")
    func cloudEvents() async throws {
        let harness = GatewayHarness()
        let receiver = WebhookReceiver()
        let (app, runtime) = try await Self.build(
            harness, receiver: receiver, config: Self.config(format: "cloudevents", rotation: false, key: false))
        let dispatcher = try #require(runtime.webhooks)
        try await app.test(.router) { client in
            let id = try await approve(client, runtime, to: "+14155550121")
            await dispatcher.pump()
            let request = try #require(receiver.requests.first)
            #expect(request.headerFields[.contentType] == "application/cloudevents+json; charset=utf-8")
            #expect(try Self.verifies(request, secret: Self.secrets[0]))
            let body = try #require(try JSONSerialization.jsonObject(with: request.body) as? [String: Any])
            #expect(body["specversion"] as? String == "1.0")
            #expect(body["type"] as? String == "com.example.gateway.verification.approved")
            #expect(body["source"] as? String == "https://gateway.example.com")
            #expect(body["id"] as? String == request.headerFields[WebhookSignature.webhookID])
            #expect(body["subject"] as? String == id && body["datacontenttype"] as? String == "application/json")
            let data = try #require(body["data"] as? [String: Any])
            #expect(data["verification_id"] as? String == id && data["status"] as? String == "approved")
            #expect(!String(decoding: request.body, as: UTF8.self).contains("4155550121"))
        }
    }

    @Test("a receiver answering 410 disables its endpoint: nothing is queued or sent until it is enabled again")
    func goneDisables() async throws {
        let harness = GatewayHarness()
        let receiver = WebhookReceiver(failures: 1, failure: .gone)
        let (app, runtime) = try await Self.build(harness, receiver: receiver, config: Self.config())
        let dispatcher = try #require(runtime.webhooks)
        try await app.test(.router) { client in
            _ = try await approve(client, runtime, to: "+14155550122")
            await dispatcher.pump()
            #expect(receiver.requests.count == 1)
            let listed = try await client.call(.get, "/v1/admin/webhooks/endpoints")
            let endpoint = try #require((listed.body["endpoints"] as? [[String: Any]])?.first)
            #expect(endpoint["state"] as? String == "disabled")
            #expect(endpoint["disabled_reason"] as? String == "HTTP 410 Gone from the receiver")
            let parked = try await client.call(.get, "/v1/admin/webhooks/deliveries?state=parked")
            #expect(
                (parked.body["deliveries"] as? [[String: Any]])?.first?["last_error"] as? String
                    == "HTTP 410; endpoint disabled")
            // Disabled: a later event is neither queued nor sent, however long one waits.
            _ = try await approve(client, runtime, to: "+14155550123")
            harness.clock.advance(by: 3600)
            await dispatcher.pump()
            #expect(receiver.requests.count == 1)
            let all = try await client.call(.get, "/v1/admin/webhooks/deliveries")
            #expect((all.body["deliveries"] as? [[String: Any]])?.count == 1)
            // An unknown name is 404; the admin key enables it, once.
            #expect(try await client.call(.post, "/v1/admin/webhooks/endpoints/nope/enable").status == .notFound)
            let enabled = try await client.call(.post, "/v1/admin/webhooks/endpoints/app/enable")
            #expect(enabled.status == .ok && enabled.body["state"] as? String == "active")
            let twice = try await client.call(.post, "/v1/admin/webhooks/endpoints/app/enable")
            #expect(twice.status == .conflict && twice.body.errorCode == "invalid_state")
            _ = try await approve(client, runtime, to: "+14155550124")
            await dispatcher.pump()
            #expect(receiver.requests.count == 2)
            #expect(try Self.verifies(try #require(receiver.requests.last), secret: Self.secrets[1]))
        }
    }
}
