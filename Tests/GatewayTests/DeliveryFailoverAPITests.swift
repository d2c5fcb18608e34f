import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// Delivery failover through the API and the sandbox's messaging emulators: a vendor set to lose its messages
/// silently, or to report them undelivered, and a route with `delivery: {failover: true}`.
@Suite("Delivery failover over the API")
struct DeliveryFailoverAPITests {
    static let config = """
        sandbox: true
        messages: {app: Acme}
        routing:
          routes:
            - name: otp
              match: {channels: [sms]}
              providers: [telnyx_messaging, sinch_sms, vonage_sms]
              delivery: {deliver_within: 20s, failover: true}
        """

    func withGateway(
        _ body: @Sendable (any TestClientProtocol, GatewayRuntime, GatewayHarness) async throws -> Void
    ) async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(harness.options(config: Self.config))
        try await app.test(.router) { client in try await body(client, runtime, harness) }
    }

    /// The verification's `resent` events once there is one: the failover may be made by this test's round or by the
    /// gateway's own `DeliveryFailoverService`, which the router test framework runs too (each round claims a due
    /// deadline for a lease, so whichever comes first acts and the other finds nothing). Waits a busy machine's while.
    static func failovers(
        _ client: any TestClientProtocol, _ runtime: GatewayRuntime, _ id: String
    ) async throws -> [[String: Any]] {
        for _ in 0..<600 {
            _ = await runtime.service.runDueDeliveryDeadlines()
            let resent = try await timeline(client, id).filter { $0["kind"] as? String == "resent" }
            if !resent.isEmpty { return resent }
            try await Task.sleep(for: .milliseconds(100))
        }
        return []
    }

    static func timeline(_ client: any TestClientProtocol, _ id: String) async throws -> [[String: Any]] {
        let read = try await client.call(.get, "/v1/verifications/\(id)?include=timeline")
        return try #require(read.body["timeline"] as? [[String: Any]])
    }

    @Test("a vendor that answers and never delivers: the code goes through the next vendor at the deadline")
    func silent() async throws {
        try await withGateway { client, runtime, harness in
            let faults = try await client.call(
                .put, "/sandbox/faults/telnyx_messaging", json: #"{"delivery_rate": 0, "undelivered_receipt_rate": 0}"#)
            #expect(faults.status == .ok && faults.body["undelivered_receipt_rate"] as? Double == 0)
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550130"}"#)
            #expect(start.status == .created && start.body["provider"] as? String == "telnyx_messaging")
            let id = try #require(start.body["id"] as? String)
            #expect(runtime.sandbox?.outbox.messages(to: "+14155550130").isEmpty == true)
            #expect(await runtime.service.runDueDeliveryDeadlines() == 0)
            #expect(try await Self.timeline(client, id).allSatisfy { $0["kind"] as? String != "resent" })
            harness.clock.advance(by: 21)
            let failovers = try await Self.failovers(client, runtime, id)
            #expect(failovers.count == 1)
            let message = try #require(runtime.sandbox?.outbox.messages(to: "+14155550130").last)
            #expect(message.provider == "sinch_sms")
            let resent = try #require(failovers.last)
            let detail = try #require(resent["detail"] as? [String: String])
            #expect(detail["delivery_failover"] == "telnyx_messaging not delivered within 20s")
            #expect(detail["provider"] == "sinch_sms" && detail["previous_provider"] == "telnyx_messaging")
            let check = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(try #require(message.code))"}"#)
            #expect(check.status == .ok && check.body["status"] as? String == "approved")
        }
    }

    @Test("a vendor that reports the message undelivered: the failover goes at once, with the vendor's code")
    func undelivered() async throws {
        try await withGateway { client, runtime, _ in
            let faults = try await client.call(
                .put, "/sandbox/faults/telnyx_messaging", json: #"{"delivery_rate": 0, "undelivered_code": "40006"}"#)
            #expect(faults.status == .ok && faults.body["undelivered_code"] as? String == "40006")
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550131"}"#)
            let id = try #require(start.body["id"] as? String)
            // The emulator posts its receipts after answering: wait for the failover itself. The clock stands
            // still, so only the receipt can make the deadline due.
            let failovers = try await Self.failovers(client, runtime, id)
            #expect(failovers.count == 1)
            #expect(
                try await Self.timeline(client, id).contains {
                    ($0["detail"] as? [String: String])?["status"] == "undelivered"
                })
            #expect(await runtime.service.runDueDeliveryDeadlines() == 0)
            let resent = try #require(failovers.last)
            #expect(
                (resent["detail"] as? [String: String])?["delivery_failover"] == "telnyx_messaging undelivered 40006")
            #expect(runtime.sandbox?.outbox.messages(to: "+14155550131").map(\.provider) == ["sinch_sms"])
            let read = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(read.body["provider"] as? String == "sinch_sms" && read.body["sends"] as? Int == 2)
        }
    }

    @Test("the console's statistics show each sending vendor's deliveries, per country too")
    func figures() async throws {
        try await withGateway { client, runtime, _ in
            _ = try await client.call(
                .put, "/sandbox/faults/telnyx_messaging", json: #"{"delivery_rate": 0, "undelivered_code": "40006"}"#)
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550132"}"#)
            #expect(start.body["provider"] as? String == "telnyx_messaging")
            // Telnyx's receipt says undelivered, the failover sends through Sinch, whose receipt says delivered.
            var vendors: [String: [String: Any]] = [:]
            for _ in 0..<600 {
                _ = await runtime.service.runDueDeliveryDeadlines()
                let stats = try await client.call(.get, "/v1/admin/stats")
                vendors = [:]
                for vendor in stats.body["providers"] as? [[String: Any]] ?? [] {
                    if let id = vendor["id"] as? String, let delivery = vendor["delivery"] as? [String: Any] {
                        vendors[id] = delivery
                    }
                }
                if vendors["sinch_sms"]?["delivered"] as? Double == 1 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            let telnyx = try #require(vendors["telnyx_messaging"])
            #expect(telnyx["sends"] as? Double == 1 && telnyx["undelivered"] as? Double == 1)
            #expect(telnyx["rate"] as? Double == 0 && telnyx["p50_ms"] is NSNull)
            let sinch = try #require(vendors["sinch_sms"])
            #expect(sinch["sends"] as? Double == 1 && sinch["delivered"] as? Double == 1)
            #expect(sinch["rate"] as? Double == 1)
            // The test clock stands still: delivered within the first bucket, half a second (counted from the
            // resend's lease when the receipt beats the resend's answer into the store: still the first bucket).
            #expect(sinch["p50_ms"] as? Double == 500 && sinch["p95_ms"] as? Double == 500)
            #expect(vendors["vonage_sms"] == nil)
            let countries = try await client.call(.get, "/v1/admin/stats/countries")
            let cells = try #require(countries.body["cells"] as? [[String: Any]])
            let cell = try #require(cells.first { $0["provider"] as? String == "sinch_sms" })
            #expect(cell["country"] as? String == "US")
            let delivery = try #require(cell["delivery"] as? [String: Any])
            #expect(delivery["delivered"] as? Double == 1 && delivery["rate"] as? Double == 1)
        }
    }

    @Test("the sandbox refuses delivery settings that make no sense, each in the one error shape")
    func badSettings() async throws {
        try await withGateway { client, _, _ in
            for body in [
                #"{"undelivered_receipt_rate": 2}"#, #"{"undelivered_code": "30 08"}"#, #"{"receipt_delay_ms": -1}"#,
                #"{"undelivered_receipt_rate_by_country": {"XX": 0.5}}"#,
            ] {
                let answer = try await client.call(.put, "/sandbox/faults/sinch_sms", json: body)
                #expect(answer.status == .badRequest && answer.body.errorCode == "invalid_request", "\(body)")
            }
            let fine = try await client.call(
                .put, "/sandbox/faults/sinch_sms",
                json: #"{"undelivered_receipt_rate_by_country": {"id": 0}, "receipt_delay_ms": 250}"#)
            #expect(fine.status == .ok)
            #expect(fine.body["undelivered_receipt_rate_by_country"] as? [String: Double] == ["ID": 0])
            #expect(fine.body["receipt_delay_ms"] as? Double == 250)
        }
    }
}
