import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// The risk step and silent-first verification through the API, over the sandbox's CAMARA emulator, as
/// docs/network-signals.md tells a new user to try them.
@Suite("Network signals through the API (CAMARA sandbox)")
struct NetworkSignalsAPITests {
    static func config(_ action: String) -> String {
        """
        sandbox: true
        risk:
          sim_swap: {provider: camara, max_age_hours: 72, on_recent_swap: \(action)}
        webhooks:
          endpoints:
            - {name: app, url: "http://127.0.0.1:9/hooks", secret_env: HOOK_SECRET}
        """
    }

    /// The claims of a compact JWS, unverified (the token's signature has its own tests).
    static func claims(_ token: String) throws -> [String: Any] {
        var part = String(token.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while part.count % 4 != 0 { part += "=" }
        let data = try #require(Data(base64Encoded: part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("refuse: a SIM changed an hour ago is 403 recent_sim_swap and nothing is sent; an unchanged one starts")
    func refuse() async throws {
        let harness = GatewayHarness()
        let options = try harness.options(
            config: Self.config("refuse"), environment: ["HOOK_SECRET": "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"])
        let (app, runtime) = try await buildApplication(options)
        try await app.test(.router) { client in
            let control = try await client.call(
                .put, "/sandbox/camara/sandbox/numbers/%2B447400123456", json: #"{"sim_changed_hours_ago": 1}"#,
                key: nil)
            #expect(control.status == .ok)
            let refused = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123456", "channel": "sms"}"#)
            #expect(refused.status == .forbidden && refused.body.errorCode == "recent_sim_swap")
            #expect(runtime.sandbox?.outbox.last(to: "+447400123456") == nil)
            let clean = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123457", "channel": "sms"}"#)
            #expect(clean.status == .created && clean.body["risk"] == nil)
            #expect(runtime.sandbox?.outbox.last(to: "+447400123457") != nil)
        }
    }

    @Test("step_up: the start answers risk.sim_swap = recent, and the approval token carries the same claim")
    func stepUp() async throws {
        let harness = GatewayHarness()
        let options = try harness.options(
            config: Self.config("step_up"), environment: ["HOOK_SECRET": "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"])
        let (app, runtime) = try await buildApplication(options)
        try await app.test(.router) { client in
            _ = try await client.call(
                .put, "/sandbox/camara/sandbox/numbers/%2B447400123458", json: #"{"sim_changed_hours_ago": 1}"#,
                key: nil)
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123458", "channel": "sms"}"#)
            #expect(start.status == .created)
            #expect(start.body["risk"] as? [String: String] == ["sim_swap": "recent"])
            let id = try #require(start.body["id"] as? String)
            let code = try #require(runtime.sandbox?.outbox.last(to: "+447400123458")?.code)
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.body["status"] as? String == "approved")
            let token = try #require(check.body["token"] as? String)
            #expect(try Self.claims(token)["risk"] as? [String: String] == ["sim_swap": "recent"])
            // The status webhook of the approval carries it too.
            let record = try #require(try await runtime.service.store.record(id: id))
            let events = try await runtime.service.store.events(verificationID: id)
            let approved = try #require(events.last { $0.kind == .statusChanged })
            let data = WebhookDispatcher.data(SequencedEvent(sequence: 1, event: approved), record: record)
            #expect(data["risk"] == .object(["sim_swap": "recent"]))
        }
    }

    @Test("silent first: a matching device is approved with no code; one on Wi-Fi falls back to an SMS code")
    func silentFirst() async throws {
        try await GatewayHarness().run { client, runtime in
            _ = try await client.call(
                .put, "/sandbox/camara/sandbox/numbers/%2B447400123460", json: #"{"on_wifi": true}"#, key: nil)
            for (number, wifi) in [("+447400123459", false), ("+447400123460", true)] {
                let start = try await client.call(
                    .post, "/v1/verifications",
                    json:
                        #"{"to": "\#(number)", "channel": "silent_auth", "provider": "camara", "fallback_channels": ["sms"]}"#
                )
                #expect(start.status == .created)
                let id = try #require(start.body["id"] as? String)
                let opening = try #require((start.body["next_action"] as? [String: Any])?["open_url"] as? [String: Any])
                #expect(opening["cellular_only"] as? Bool == true)
                let url = try #require((opening["url"] as? String).flatMap(URLComponents.init(string:)))
                // The device opens the URL; the operator redirects its browser to the gateway's callback.
                let redirect = try await client.execute(
                    uri: url.path + "?" + (url.percentEncodedQuery ?? ""), method: .get, headers: [:], body: nil
                ) { $0 }
                #expect(redirect.status == .found)
                let location = try #require(redirect.headers[.location].flatMap(URLComponents.init(string:)))
                #expect(location.path == "/callbacks/camara")
                let landed = try await client.call(
                    .get, location.path + "?" + (location.percentEncodedQuery ?? ""), key: nil)
                #expect(landed.status == .ok)
                let read = try await client.call(.get, "/v1/verifications/\(id)")
                if !wifi {
                    #expect(landed.body["silent_auth"] as? String == "verified")
                    #expect(read.body["status"] as? String == "approved" && read.body["token"] is String)
                    #expect(runtime.sandbox?.outbox.last(to: number) == nil)
                } else {
                    #expect(landed.body["silent_auth"] as? String == "not_verified")
                    #expect(read.body["status"] as? String == "pending" && read.body["channel"] as? String == "sms")
                    #expect(read.body["provider"] as? String != "camara")
                    let code = try #require(runtime.sandbox?.outbox.last(to: number)?.code)
                    let check = try await client.call(
                        .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
                    #expect(check.body["status"] as? String == "approved")
                }
            }
        }
    }

    @Test("A risk step naming a provider that gives no signal stops the gateway at startup")
    func misconfigured() async throws {
        let harness = GatewayHarness()
        let options = try harness.options(config: "sandbox: true\nrisk:\n  sim_swap: {provider: twilio}\n")
        do {
            _ = try await buildApplication(options)
            Issue.record("the gateway started")
        } catch {
            #expect("\(error)".contains("gives no SIM swap signal"))
        }
    }
}
