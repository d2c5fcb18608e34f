import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// Routing through the API: experiments, dry-run, timeline, admin endpoints, failover between the two
/// sandbox vendors.
@Suite("Routing, experiments and admin over the API")
struct RoutingAPITests {
    static let proof = #""app_verification": {"type": "recaptcha", "token": "sandbox-token"}"#
    static let verifyOnlyKey = "sk_test_verify_only_000001"

    static let config = """
        sandbox: true
        routing:
          default: [twilio, firebase]
          routes:
            - name: uk-ab
              match: {channels: [sms], countries: [GB]}
              experiment: ab
              fallbacks: [twilio, firebase]
        experiments:
          - name: ab
            salt: "test"
            arms:
              - {name: twilio, provider: twilio, weight: 50, control: true}
              - {name: firebase, provider: firebase, weight: 50}
        test_numbers: {"+15005550006": "424242"}
        prices:
          twilio: {default: 0.05, GB: 0.04}
          firebase: {default: 0.01}
        api_keys:
          - {name: app, key_env: VERIFY_ONLY_KEY, scopes: [verify]}
        """

    func withGateway(
        _ config: String = Self.config,
        _ body: @Sendable (any TestClientProtocol, GatewayRuntime) async throws -> Void
    ) async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(
            harness.options(config: config, environment: ["VERIFY_ONLY_KEY": Self.verifyOnlyKey]))
        try await app.test(.router) { client in try await body(client, runtime) }
    }

    static func ukNumber(_ index: Int) -> String { "+4474001\(String(format: "%05d", index))" }

    @Test("an experiment route assigns arms stickily, records them, and the report counts them")
    func experimentAndReport() async throws {
        try await withGateway { client, runtime in
            var expected: [String: (starts: Int, approvals: Int)] = [:]
            for index in 0..<40 {
                let to = Self.ukNumber(index)
                let start = try await client.call(
                    .post, "/v1/verifications", json: #"{"to": "\#(to)", \#(Self.proof)}"#)
                #expect(start.status == .created)
                let arm = try #require(start.body["experiment_arm"] as? String)
                #expect(start.body["provider"] as? String == arm)
                #expect(start.body["experiment"] as? String == "ab")
                #expect(start.body["route"] as? String == "uk-ab")
                // Sticky: a dry-run for the same number names the same arm.
                let dry = try await client.call(
                    .post, "/v1/routing/dry-run", json: #"{"to": "\#(to)", \#(Self.proof)}"#)
                #expect(dry.body["arm"] as? String == arm)
                var tally = expected[arm] ?? (0, 0)
                tally.starts += 1
                if index % 3 != 0 {
                    let id = try #require(start.body["id"] as? String)
                    let code = try sandboxCode(runtime, to: to)
                    let check = try await client.call(
                        .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
                    #expect(check.body["status"] as? String == "approved")
                    tally.approvals += 1
                }
                expected[arm] = tally
            }
            #expect(expected.count == 2, "both arms get people")
            let report = try await client.call(.get, "/v1/admin/experiments/ab")
            #expect(report.status == .ok)
            let arms = try #require(report.body["arms"] as? [[String: Any]])
            for arm in arms {
                let name = try #require(arm["name"] as? String)
                #expect(arm["starts"] as? Int == expected[name]?.starts)
                #expect(arm["approvals"] as? Int == expected[name]?.approvals)
            }
            let firebase = try #require(arms.first { $0["name"] as? String == "firebase" })
            #expect(firebase["p_value"] is Double)
            #expect(abs((firebase["cost"] as? Double ?? 0) - 0.01 * Double(expected["firebase"]?.starts ?? 0)) < 1e-9)
            let control = try #require(arms.first { $0["control"] as? Bool == true })
            #expect(abs((control["cost"] as? Double ?? 0) - 0.04 * Double(expected["twilio"]?.starts ?? 0)) < 1e-9)
            let us = try await client.call(.get, "/v1/admin/experiments/ab?country=US")
            #expect((us.body["arms"] as? [[String: Any]])?.allSatisfy { $0["starts"] as? Int == 0 } == true)
            let unknown = try await client.call(.get, "/v1/admin/experiments/nope")
            #expect(unknown.status == .notFound)
            let badCountry = try await client.call(.get, "/v1/admin/experiments/ab?country=Narnia")
            #expect((badCountry.body.error?["message"] as? String)?.contains("`country`") == true)
            let badDate = try await client.call(.get, "/v1/admin/experiments/ab?from=yesterday")
            #expect(badDate.body.errorCode == "invalid_request")
        }
    }

    @Test("admin endpoints need the admin scope")
    func adminScope() async throws {
        try await withGateway { client, _ in
            let denied = try await client.call(.get, "/v1/admin/providers", key: Self.verifyOnlyKey)
            #expect(denied.status == .forbidden)
            #expect(denied.body.errorCode == "forbidden")
            let report = try await client.call(.get, "/v1/admin/experiments/ab", key: Self.verifyOnlyKey)
            #expect(report.status == .forbidden)
            let allowed = try await client.call(.get, "/v1/admin/providers")
            #expect(allowed.status == .ok)
            let providers = try #require(allowed.body["providers"] as? [[String: Any]])
            // Twilio and Firebase come first; plugins installed after them follow.
            #expect(providers.prefix(2).map { $0["id"] as? String } == ["twilio", "firebase"])
            #expect(
                providers.first { $0["id"] as? String == "firebase" }?["requires_app_verification"] as? Bool == true)
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+16505553434"}"#, key: Self.verifyOnlyKey)
            #expect(start.status == .created, "the verify scope still starts verifications")
        }
    }

    @Test("the timeline shows the route, the arm, skipped providers and each vendor call")
    func timeline() async throws {
        try await withGateway { client, _ in
            // Without a proof, a Firebase arm's number is sent by the fallback, and the skip is recorded.
            var id: String?
            for index in 0..<40 {
                let start = try await client.call(
                    .post, "/v1/verifications", json: #"{"to": "\#(Self.ukNumber(100 + index))"}"#)
                if start.body["experiment_arm"] as? String == "firebase" {
                    #expect(start.body["provider"] as? String == "twilio")
                    id = start.body["id"] as? String
                    break
                }
            }
            let verification = try #require(id)
            let fetched = try await client.call(.get, "/v1/verifications/\(verification)?include=timeline")
            let timeline = try #require(fetched.body["timeline"] as? [[String: Any]])
            let started = try #require(timeline.first { $0["kind"] as? String == "started" })
            let detail = try #require(started["detail"] as? [String: String])
            #expect(detail["route"] == "uk-ab")
            #expect(detail["arm"] == "firebase")
            #expect(detail["country"] == "GB")
            #expect(detail["skipped"] == "firebase:app_verification_missing")
            let calls = timeline.filter { $0["kind"] as? String == "provider_call" }
            #expect(calls.count == 1)
            #expect((calls.first?["detail"] as? [String: String])?["latency_ms"] != nil)
        }
    }

    @Test("dry-run answers which vendor and why, and sends nothing")
    func dryRun() async throws {
        try await withGateway { client, runtime in
            let us = try await client.call(
                .post, "/v1/routing/dry-run", json: #"{"to": "(650) 555-3434", "region": "US"}"#)
            #expect(us.status == .ok)
            #expect(us.body["route"] as? String == "default")
            #expect(us.body["provider"] as? String == "twilio")
            let candidates = try #require(us.body["candidates"] as? [[String: Any]])
            #expect(candidates.map { $0["skip_reason"] as? String } == [nil, "app_verification_missing"])
            let landline = try await client.call(.post, "/v1/routing/dry-run", json: #"{"to": "+442079460958"}"#)
            #expect((landline.body["error"] as? [String: Any])?["code"] as? String == "unsupported_destination")
            let test = try await client.call(.post, "/v1/routing/dry-run", json: #"{"to": "+15005550006"}"#)
            #expect(test.body["test_number"] as? Bool == true)
            let bad = try await client.call(.post, "/v1/routing/dry-run", json: #"{"to": "nonsense"}"#)
            #expect(bad.body.errorCode == "invalid_phone_number")
            #expect(runtime.sandbox?.outbox.all.isEmpty == true)
        }
    }

    @Test("a configured test number reaches no vendor and says so")
    func testNumber() async throws {
        try await withGateway { client, runtime in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+15005550006"}"#)
            #expect(start.status == .created)
            #expect(start.body["test_number"] as? Bool == true)
            #expect(start.body["provider"] as? String == "test_numbers")
            let id = try #require(start.body["id"] as? String)
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "424242"}"#)
            #expect(check.body["status"] as? String == "approved")
            #expect(runtime.sandbox?.outbox.all.isEmpty == true)
        }
    }

    @Test("with Twilio failing, every start still succeeds through Firebase with exactly one message each")
    func failoverEndToEnd() async throws {
        try await withGateway { client, runtime in
            let faults = try await client.call(
                .put, "/sandbox/faults/twilio", json: #"{"server_error_status": 503}"#, key: nil)
            #expect(faults.status == .ok)
            for index in 0..<12 {
                let to = "+1650555\(String(format: "%04d", 3400 + index))"
                let start = try await client.call(
                    .post, "/v1/verifications", json: #"{"to": "\#(to)", \#(Self.proof)}"#)
                #expect(start.status == .created)
                #expect(start.body["provider"] as? String == "firebase")
                #expect(runtime.sandbox?.outbox.all.filter { $0.to == to }.count == 1)
            }
            #expect(runtime.sandbox?.outbox.all.count == 12)
            // After five straight failures Twilio's breaker for US is open: later starts skip it.
            let admin = try await client.call(.get, "/v1/admin/providers")
            let twilio = try #require(
                (admin.body["providers"] as? [[String: Any]])?.first { $0["id"] as? String == "twilio" })
            let breakers = try #require(twilio["breakers"] as? [[String: Any]])
            #expect(breakers.first { $0["country"] as? String == "US" }?["state"] as? String == "open")
        }
    }

    @Test("check-config lists routing problems all at once")
    func configProblems() async throws {
        let bad = """
            sandbox: true
            routing:
              routes:
                - name: everything
                  providers: [twilio]
                - name: uk
                  match: {countries: [GB]}
                  providers: [nexmo]
                - name: ab
                  match: {channels: [sms], countries: [XX]}
                  experiment: missing
            experiments:
              - name: lopsided
                arms:
                  - {provider: twilio, weight: -1}
                  - {provider: firebase, weight: 0}
            breakers: {failure_rate: 2}
            test_numbers: {"12345": 111}
            """
        do {
            try await withGateway(bad) { _, _ in }
            Issue.record("a bad configuration was accepted")
        } catch let error as ConfigurationError {
            let text = error.problems.joined(separator: "\n")
            for expected in [
                "`XX` is not a region code", "failure_rate", "test_numbers", "unreachable: route `everything`",
                "unknown provider `nexmo`", "unknown experiment `missing`", "exactly one arm must be the control",
                "negative weight",
            ] {
                #expect(text.contains(expected), "missing: \(expected)\n\(text)")
            }
        }
    }
}
