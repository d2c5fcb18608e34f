import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import gateway

/// The HTTP side of contracts v2: next actions, the challenge endpoint, vendor callbacks, refresh.
@Suite("Contracts v2 through the API")
struct ContractsV2APITests {
    static let signature = HTTPField.Name("X-Signature")!

    /// A sandbox gateway whose only vendor is `provider` (and its emulator, if given).
    static func run(
        _ provider: ScriptedProvider, emulator: (@Sendable (EmulatorContext) -> any VendorEmulator)? = nil,
        _ body: @Sendable (any TestClientProtocol, GatewayRuntime) async throws -> Void
    ) async throws {
        var options = GatewayHarness().options()
        options.plugins = [scriptedPlugin(provider, emulator: emulator)]
        let (app, runtime) = try await buildApplication(options)
        try await app.test(.router) { client in try await body(client, runtime) }
    }

    /// Reads callbacks as a plugin would: a shared-secret header stands in for the vendor's signature; the
    /// body names the vendor reference to approve.
    static func signedProvider(_ id: String = "alpha") -> ScriptedProvider {
        let provider = ScriptedProvider(
            id: id, capabilities: ProviderCapabilities(channels: [.sms, .voice]))
        provider.setCallbackHandler { callback, lookup throws(GatewayError) in
            guard callback.headerFields[signature] == "good" else {
                throw GatewayError(.unauthorized, "The callback's signature does not verify.")
            }
            guard callback.url.absoluteString.hasSuffix("/callbacks/\(id)/events"), callback.subpath == "/events"
            else { throw GatewayError.invalidRequest("unexpected callback URL \(callback.url)") }
            let reference = String(decoding: callback.body, as: UTF8.self)
            guard let found = try await lookup(.reference(reference)) else { return CallbackReply(updates: []) }
            return CallbackReply(
                updates: [
                    ProviderUpdate(
                        target: .verificationID(found.id),
                        change: VerificationChange(status: .approved, tokens: ["expire": 7200, "session": "s"]))
                ],
                response: TransportResponse(status: .ok, body: Data(#"{"received":true}"#.utf8)))
        }
        return provider
    }

    @Test("a challenge comes first: nothing sent, check refused, a wrong answer brings a fresh challenge")
    func challengeFlow() async throws {
        let provider = ScriptedProvider(id: "alpha")
        provider.scriptPrepare(
            .succeed(ProviderChallenge(challenge: NextAction.Challenge(kind: "slider_captcha", data: ["image": "a"]))))
        provider.scriptChallenge(
            .succeed(
                ProviderStartResult(
                    reference: nil, sentNothing: true,
                    nextAction: .solveChallenge(NextAction.Challenge(kind: "slider_captcha", data: ["image": "b"])))),
            .succeed(ProviderStartResult(reference: "sms-1")))
        try await Self.run(provider) { client, _ in
            let started = try await client.call(.post, "/v1/verifications", json: #"{"to": "+447400123456"}"#)
            #expect(started.status == .created)
            #expect(started.body["sends"] as? Int == 0)
            let action = try #require(started.body["next_action"] as? [String: Any])
            #expect(action["type"] as? String == "solve_challenge")
            #expect((action["solve_challenge"] as? [String: Any])?["kind"] as? String == "slider_captcha")
            let id = try #require(started.body["id"] as? String)

            let early = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "123456"}"#)
            #expect(early.status == .conflict)
            #expect(early.body.errorCode == "invalid_state")

            let missing = try await client.call(.post, "/v1/verifications/\(id)/challenge", json: #"{}"#)
            #expect(missing.status == .badRequest)

            let wrong = try await client.call(
                .post, "/v1/verifications/\(id)/challenge", json: #"{"answer": {"x": 3}}"#)
            #expect(wrong.status == .forbidden)
            #expect(wrong.body.errorCode == "app_verification_failed")
            let fresh = try #require(wrong.body.error?["next_action"] as? [String: Any])
            #expect(
                ((fresh["solve_challenge"] as? [String: Any])?["data"] as? [String: Any])?["image"] as? String == "b")

            let right = try await client.call(
                .post, "/v1/verifications/\(id)/challenge",
                json: #"{"answer": {"x": 142}, "client_context": {"ip": "203.0.113.7", "device_id": "d-1"}}"#)
            #expect(right.status == .ok)
            #expect(right.body["sends"] as? Int == 1)
            #expect(right.body["next_action"] is NSNull)
            #expect(provider.calls(.challenge).last?.clientContext.ipAddress == "203.0.113.7")
        }
    }

    @Test("a signed callback approves; the next GET carries the token once; a bad signature is 401")
    func callbackFlow() async throws {
        let provider = Self.signedProvider()
        try await Self.run(provider) { client, _ in
            let started = try await client.call(.post, "/v1/verifications", json: #"{"to": "+447400123456"}"#)
            let id = try #require(started.body["id"] as? String)

            let forged = try await client.execute(
                uri: "/callbacks/alpha/events", method: .post, headers: [Self.signature: "forged"],
                body: ByteBuffer(string: "alpha-ref-1")
            ) { $0 }
            #expect(forged.status == .unauthorized)
            #expect(String(buffer: forged.body).contains("\"unauthorized\""))
            #expect(try await client.call(.get, "/v1/verifications/\(id)").body["status"] as? String == "pending")

            let signed = try await client.execute(
                uri: "/callbacks/alpha/events", method: .post, headers: [Self.signature: "good"],
                body: ByteBuffer(string: "alpha-ref-1")
            ) { $0 }
            #expect(signed.status == .ok)
            #expect(String(buffer: signed.body) == #"{"received":true}"#)

            let first = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(first.body["status"] as? String == "approved")
            #expect(first.body["token"] is String)
            let tokens = try #require(first.body["provider_tokens"] as? [String: Any])
            #expect(tokens["expire"] as? Int == 7200, "vendor tokens keep their JSON types")
            let second = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(second.body["status"] as? String == "approved")
            #expect(second.body["token"] == nil)

            let wrongMethod = try await client.execute(uri: "/callbacks/alpha", method: .put) { $0 }
            #expect(wrongMethod.status == .methodNotAllowed)
            #expect(wrongMethod.headers[.allow] == "POST")
            // A GET is a browser redirect, which only a provider that takes them has a resource for.
            let get = try await client.execute(uri: "/callbacks/alpha", method: .get) { $0 }
            #expect(get.status == .notFound)
            let unknown = try await client.execute(uri: "/callbacks/nobody/x", method: .post) { $0 }
            #expect(unknown.status == .notFound)
        }
    }

    @Test("an emulator calls the gateway back through the sandbox, and the verification follows")
    func emulatorCallsBack() async throws {
        let provider = Self.signedProvider()
        let emulator: @Sendable (EmulatorContext) -> any VendorEmulator = {
            CallingBackEmulator(callbacks: $0.callbacks)
        }
        try await Self.run(provider, emulator: emulator) { client, _ in
            let started = try await client.call(.post, "/v1/verifications", json: #"{"to": "+447400123456"}"#)
            let id = try #require(started.body["id"] as? String)
            let approve = try await client.execute(
                uri: "/sandbox/alpha/approve", method: .post, body: ByteBuffer(string: "alpha-ref-1")
            ) { $0 }
            #expect(approve.status == .ok)
            let fetched = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(fetched.body["status"] as? String == "approved")
            #expect(fetched.body["token"] is String)
        }
    }

    @Test("?refresh=true asks the vendor: the channel it moved to shows, and no attempt is spent")
    func refresh() async throws {
        let provider = ScriptedProvider(
            id: "alpha",
            capabilities: ProviderCapabilities(channels: [.sms, .voice], resendCanChangeChannel: true))
        provider.scriptStatus(.succeed(VerificationChange(status: .pending, channel: .voice)))
        try await Self.run(provider) { client, _ in
            let started = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123456", "fallback_channels": ["voice"]}"#)
            #expect(started.body["fallback_channels"] as? [String] == ["voice"])
            let id = try #require(started.body["id"] as? String)
            let plain = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(plain.body["channel"] as? String == "sms")
            #expect(provider.callCount(.status) == 0)
            let refreshed = try await client.call(.get, "/v1/verifications/\(id)?refresh=true")
            #expect(refreshed.status == .ok)
            #expect(refreshed.body["channel"] as? String == "voice")
            #expect(refreshed.body["attempts_remaining"] as? Int == 5)
            let bad = try await client.call(.get, "/v1/verifications/\(id)?refresh=yes")
            #expect(bad.status == .badRequest)
        }
    }

    @Test(
        "new request fields are validated in the one error shape",
        arguments: [
            #"{"to": "+447400123456", "fallback_channels": ["sms"]}"#,
            #"{"to": "+447400123456", "fallback_channels": ["voice", "voice"]}"#,
            #"{"to": "+447400123456", "fallback_channels": ["email"]}"#,
            #"{"to": "+447400123456", "fallback_channels": ["fax"]}"#,
            #"{"to": "+447400123456", "fallback_channels": "voice"}"#,
            #"{"to": "+447400123456", "client_context": {"ip": "not-an-ip"}}"#,
            #"{"to": "+447400123456", "client_context": {"browser": "x"}}"#,
            #"{"to": "+447400123456", "client_context": {"platform": "blackberry"}}"#,
            #"{"to": "+447400123456", "client_context": {"platform": 1}}"#,
            #"{"to": "+447400123456", "channel_options": {"prompt": {"details": []}}}"#,
            #"{"to": "+447400123456", "channel_options": {"prompt": {"message": "Hi", "details": [{"label": "x"}]}}}"#,
            #"{"to": "+447400123456", "channel_options": {"factor": "YF1"}}"#,
        ])
    func badNewFields(_ body: String) async throws {
        try await Self.run(ScriptedProvider(id: "alpha")) { client, _ in
            let response = try await client.call(.post, "/v1/verifications", json: body)
            #expect(response.status == .badRequest, "\(body)")
            #expect(response.body.error?["message"] is String)
        }
    }

    @Test("a check needs a code")
    func checkNeedsCode() async throws {
        let provider = ScriptedProvider(id: "alpha")
        try await Self.run(provider) { client, _ in
            let started = try await client.call(.post, "/v1/verifications", json: #"{"to": "+447400123456"}"#)
            let id = try #require(started.body["id"] as? String)
            let response = try await client.call(.post, "/v1/verifications/\(id)/check", json: "{}")
            #expect(response.status == .badRequest)
            #expect(response.body.errorCode == "invalid_request")
            #expect(provider.callCount(.check) == 0)
        }
    }
}

/// An emulator that, asked at `POST /approve`, calls the gateway back the way its vendor would.
struct CallingBackEmulator: VendorEmulator {
    let faults = FaultSwitch()
    let callbacks: CallbackSender

    func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        guard request.path == "/approve", let url = callbacks.url("/events") else {
            return .response(TransportResponse(status: .notFound))
        }
        var headers = HTTPFields()
        headers[HTTPField.Name("X-Signature")!] = "good"
        do {
            let reply = try await callbacks.send(
                TransportRequest(method: .post, url: url, headerFields: headers, body: request.body))
            return .response(TransportResponse(status: reply.status))
        } catch {
            return .response(TransportResponse(status: .badGateway))
        }
    }
}

@Suite("Verifications belong to the key that started them")
struct VerificationOwnershipTests {
    static let keyA = "sk_test_owner_a_0123456789"
    static let keyB = "sk_test_owner_b_0123456789"

    @Test("another verify key gets 404 for every operation; the owner and admin keys see it")
    func otherKeyCannotSee() async throws {
        let harness = GatewayHarness()
        let config = """
            sandbox: true
            api_keys:
              - {name: app-a, key_env: KEY_A, scopes: [verify]}
              - {name: app-b, key_env: KEY_B, scopes: [verify]}
            """
        let (app, runtime) = try await buildApplication(
            try harness.options(config: config, environment: ["KEY_A": Self.keyA, "KEY_B": Self.keyB]))
        try await app.test(.router) { client in
            let started = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123456", "provider": "twilio"}"#, key: Self.keyA)
            #expect(started.status == .created)
            let id = try #require(started.body["id"] as? String)
            let code = try sandboxCode(runtime, to: "+447400123456")
            for (method, path, body) in [
                (HTTPRequest.Method.get, "/v1/verifications/\(id)", nil as String?),
                (.get, "/v1/verifications/\(id)?include=timeline", nil),
                (.post, "/v1/verifications/\(id)/check", #"{"code": "\#(code)"}"#),
                (.post, "/v1/verifications/\(id)/resend", "{}"),
                (.post, "/v1/verifications/\(id)/cancel", "{}"),
                (.post, "/v1/verifications/\(id)/challenge", #"{"answer": {}}"#),
            ] {
                let response = try await client.call(method, path, json: body, key: Self.keyB)
                #expect(response.status == .notFound, "\(method) \(path)")
                #expect(response.body.errorCode == "not_found")
            }
            #expect(try await client.call(.get, "/v1/verifications/\(id)", key: Self.keyA).status == .ok)
            #expect(try await client.call(.get, "/v1/verifications/\(id)", key: GatewayHarness.apiKey).status == .ok)
            let check = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#, key: Self.keyA)
            #expect(check.body["status"] as? String == "approved", "the other key's tries changed nothing")
        }
    }
}

@Suite("Rate limits through the API")
struct RateLimitAPITests {
    @Test("the start past the limit answers 429 with Retry-After in the error shape, and the limit survives a restart")
    func tooManyStarts() async throws {
        let harness = GatewayHarness()
        let config = """
            sandbox: true
            rate_limits:
              starts_per_destination: {limit: 2, window_seconds: 3600}
              trusted_proxy_header: X-Forwarded-For
            """
        let body = #"{"to": "+447400123456", "provider": "twilio"}"#
        let (app, _) = try await buildApplication(try harness.options(config: config))
        try await app.test(.router) { client in
            for _ in 0..<2 {
                let started = try await client.call(.post, "/v1/verifications", json: body)
                #expect(started.status == .created)
            }
        }
        let (again, _) = try await buildApplication(try harness.options(config: config))
        try await again.test(.router) { client in
            let refused = try await client.call(.post, "/v1/verifications", json: body)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.body.errorCode == "rate_limited")
            #expect(refused.body.error?["retryable"] as? Bool == true)
            let retryAfter = try #require(refused.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...3600).contains(retryAfter))
            #expect(refused.body.error?["retry_after"] as? Int == retryAfter)
        }
    }
}

@Suite("The pumping guard through the API")
struct PumpingGuardAPITests {
    @Test("a blocked prefix answers 403 with Retry-After; the admin API lists and lifts the block")
    func blockListLift() async throws {
        let harness = GatewayHarness()
        let config = """
            sandbox: true
            pumping_guard: {min_starts: 3, conversion_floor: 0.5, cool_down_seconds: 600}
            """
        let (app, _) = try await buildApplication(try harness.options(config: config))
        try await app.test(.router) { client in
            var statuses: [HTTPResponse.Status] = []
            for n in 0..<3 {
                let started = try await client.call(
                    .post, "/v1/verifications", json: #"{"to": "+44740900000\#(n)", "provider": "twilio"}"#)
                statuses.append(started.status)
                if started.status == .forbidden {
                    #expect(started.body.errorCode == "destination_blocked")
                    #expect(started.headers[.retryAfter] == "600")
                }
            }
            #expect(statuses == [.created, .created, .forbidden])
            let listed = try await client.call(.get, "/v1/admin/blocks")
            let blocks = try #require(listed.body["blocks"] as? [[String: Any]])
            #expect(blocks.first?["prefix"] as? String == "+447409")
            #expect(blocks.first?["starts"] as? Int == 3)
            let tripped = try #require(blocks.first?["verification_id"] as? String)
            let timeline = try await client.call(.get, "/v1/verifications/\(tripped)?include=timeline")
            #expect(timeline.body["status"] as? String == "blocked")
            let events = try #require(timeline.body["timeline"] as? [[String: Any]])
            #expect(events.contains { ($0["detail"] as? [String: String])?["reason"] == "pumping_guard" })
            #expect(try await client.call(.delete, "/v1/admin/blocks/447409").status == .badRequest)
            #expect(try await client.call(.delete, "/v1/admin/blocks/%2B447409").status == .ok)
            #expect(try await client.call(.delete, "/v1/admin/blocks/%2B447409").status == .notFound)
            #expect((try await client.call(.get, "/v1/admin/blocks").body["blocks"] as? [Any])?.isEmpty == true)
        }
    }
}

@Suite("API keys kept in the store")
struct StoredAPIKeyTests {
    @Test("a stored key works at once, a read key only reads, and a revoked key is refused without a restart")
    func createReadRevoke() async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(harness.options())
        let store = try #require(runtime.service.store as? SQLiteVerificationStore)
        let writer = StoredAPIKey.make(name: "app", scopes: [.verify], countries: ["GB"], at: Date())
        let reader = StoredAPIKey.make(name: "support", scopes: [.read], countries: nil, at: Date())
        try await store.insertAPIKey(writer.stored)
        try await store.insertAPIKey(reader.stored)
        #expect(try await store.apiKeys().map(\.key.name) == ["app", "support"])
        try await app.test(.router) { client in
            let started = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123456", "provider": "twilio"}"#, key: writer.secret)
            #expect(started.status == .created)
            let id = try #require(started.body["id"] as? String)
            let france = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+33612345678"}"#, key: writer.secret)
            #expect(france.body.errorCode == "destination_blocked", "the key's countries apply")

            // The read key sees every verification and cannot write.
            #expect(try await client.call(.get, "/v1/verifications/\(id)", key: reader.secret).status == .ok)
            let write = try await client.call(.post, "/v1/verifications/\(id)/cancel", json: "{}", key: reader.secret)
            #expect(write.status == .forbidden)
            // It reads the admin API too (as the operator console does with it), and changes nothing there.
            #expect(try await client.call(.get, "/v1/admin/providers", key: reader.secret).status == .ok)
            let lift = try await client.call(.delete, "/v1/admin/blocks/%2B447409", key: reader.secret)
            #expect(lift.status == .forbidden)

            #expect(try await store.revokeAPIKey(id: writer.stored.key.id, at: Date()))
            #expect(try await store.revokeAPIKey(id: writer.stored.key.id, at: Date()) == false)
            let refused = try await client.call(.get, "/v1/verifications/\(id)", key: writer.secret)
            #expect(refused.status == .unauthorized)
            #expect(try await store.apiKeys().first?.revokedAt != nil)
        }
    }

    @Test("a key's own start limit: the last allowed start passes, the next is 429; other keys are not affected")
    func ownStartLimit() async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(harness.options())
        let store = try #require(runtime.service.store as? SQLiteVerificationStore)
        let limited = StoredAPIKey.make(name: "trial", scopes: [.verify], countries: nil, startsPerHour: 2, at: Date())
        try await store.insertAPIKey(limited.stored)
        #expect(try await store.apiKeys().first?.key.startsPerHour == 2)
        try await app.test(.router) { client in
            var statuses: [HTTPResponse.Status] = []
            for n in 0..<3 {
                let started = try await client.call(
                    .post, "/v1/verifications", json: #"{"to": "+44740012345\#(n)", "provider": "twilio"}"#,
                    key: limited.secret)
                statuses.append(started.status)
            }
            #expect(statuses == [.created, .created, .tooManyRequests])
            let other = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123459", "provider": "twilio"}"#)
            #expect(other.status == .created)
        }
    }

    @Test("a new key's secret is shown once and only its SHA-256 is kept")
    func onlyTheHash() {
        let made = StoredAPIKey.make(name: "x", scopes: [.verify], countries: nil, at: Date())
        #expect(made.secret.hasPrefix("sk_live_") && made.secret.count == 48)
        #expect(made.stored.hash == APIKeyring.hash(made.secret))
        #expect(made.stored.key.id == "key_" + made.stored.hash.prefix(12))
        #expect(!String(describing: made.stored).contains(made.secret))
    }
}
