import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// Issue 35 over the API: an adaptive route between the sandbox's SMS vendors, its report, the dry-run and
/// timeline's reason, and the sandbox's delivery rates by country.
@Suite("Adaptive routing over the API")
struct AdaptiveAPITests {
    static let config = """
        sandbox: true
        routing:
          default: [twilio, sinch, vonage]
          routes:
            - name: sms-adaptive
              match: {channels: [sms]}
              adaptive: {providers: [twilio, sinch, vonage], objective: conversions_per_cost, min_share: 0.05,
                         window: 1h}
              fallbacks: [twilio]
        prices:
          twilio: {default: 0.05, GB: 0.04}
          sinch: {default: 0.03}
          vonage: {default: 0.02}
        api_keys:
          - {name: app, key_env: VERIFY_ONLY_KEY, scopes: [verify]}
          - {name: dash, key_env: READ_KEY, scopes: [read]}
        """

    @Test("starts learn per context; the report, dry-run and timeline say why; a verify key may not read it")
    func adaptiveRoute() async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(
            harness.options(
                config: Self.config,
                environment: ["VERIFY_ONLY_KEY": RoutingAPITests.verifyOnlyKey, "READ_KEY": "sk_test_read_only_0001"]))
        try await app.test(.router) { client in
            // Sinch never delivers to GB: its users cannot approve.
            let faults = try await client.call(
                .put, "/sandbox/faults/sinch", json: #"{"delivery_rate_by_country": {"gb": 0, "ID": 0.5}}"#, key: nil)
            #expect(faults.status == .ok)
            #expect(faults.body["delivery_rate_by_country"] as? [String: Double] == ["GB": 0, "ID": 0.5])
            let bad = try await client.call(
                .put, "/sandbox/faults/sinch", json: #"{"delivery_rate_by_country": {"XX": 0.5, "GB": 2}}"#, key: nil)
            #expect(bad.status == .badRequest)
            #expect((bad.body.error?["message"] as? String)?.contains("`XX` is not a region code") == true)
            var providers: [String: Int] = [:]
            for index in 0..<60 {
                let to = RoutingAPITests.ukNumber(index)
                let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "\#(to)"}"#)
                #expect(start.status == .created)
                let provider = try #require(start.body["provider"] as? String)
                providers[provider, default: 0] += 1
                let id = try #require(start.body["id"] as? String)
                if let code = runtime.sandbox?.outbox.last(to: to)?.code {
                    #expect(provider != "sinch", "sinch delivers nothing to GB")
                    let check = try await client.call(
                        .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
                    #expect(check.body["status"] as? String == "approved")
                } else {
                    _ = try await client.call(.post, "/v1/verifications/\(id)/cancel", json: "{}")
                }
                if index == 0 {
                    let timeline = try await client.call(.get, "/v1/verifications/\(id)?include=timeline")
                    let events = try #require(timeline.body["timeline"] as? [[String: Any]])
                    let started = try #require(events.first { $0["kind"] as? String == "started" })
                    let reason = (started["detail"] as? [String: Any])?["adaptive"] as? String
                    #expect(reason?.contains("sampled ") == true, "\(started)")
                }
            }
            #expect(providers.values.reduce(0, +) == 60)
            let dry = try await client.call(.post, "/v1/routing/dry-run", json: #"{"to": "+447400999999"}"#)
            #expect((dry.body["adaptive"] as? String)?.hasPrefix("adaptive: ") == true, "\(dry.body)")
            #expect(dry.body["route"] as? String == "sms-adaptive")

            for key in [GatewayHarness.apiKey, "sk_test_read_only_0001"] {
                let report = try await client.call(.get, "/v1/routing/adaptive", key: key)
                #expect(report.status == .ok)
                let routes = try #require(report.body["routes"] as? [[String: Any]])
                #expect(routes.first?["route"] as? String == "sms-adaptive")
                let contexts = try #require(routes.first?["contexts"] as? [[String: Any]])
                let gb = try #require(contexts.first { $0["context"] as? String == "GB/sms" })
                let rows = try #require(gb["providers"] as? [[String: Any]])
                #expect(rows.map { $0["provider"] as? String } == ["twilio", "sinch", "vonage"])
                #expect(rows.compactMap { $0["starts"] as? Int }.reduce(0, +) == 60)
                let sinch = try #require(rows.first { $0["provider"] as? String == "sinch" })
                #expect(sinch["approvals"] as? Int == 0)
                #expect((sinch["share"] as? Double ?? 1) < 0.2)
                #expect(sinch["price"] as? Double == 0.03)
                #expect((sinch["interval_95"] as? [Double])?.count == 2)
                // The shares over time: every start in one bucket (the clock stood still), by provider.
                #expect(routes.first?["bucket_seconds"] as? Int == 450)
                let history = try #require(gb["history"] as? [[String: Any]])
                #expect(history.count == 1)
                let starts = try #require(history.first?["starts"] as? [String: Int])
                #expect(starts == providers, "\(starts) \(providers)")
                #expect(history.first?["bucket_start"] is String)
            }
            let denied = try await client.call(.get, "/v1/routing/adaptive", key: RoutingAPITests.verifyOnlyKey)
            #expect(denied.status == .forbidden)
            let unknown = try await client.call(.get, "/v1/routing/adaptive?route=nope")
            #expect(unknown.status == .notFound)
        }
    }
}
