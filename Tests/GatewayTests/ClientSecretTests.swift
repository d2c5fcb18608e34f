import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

@Suite("Client secrets: the app's steps of one verification, and nothing else")
struct ClientSecretTests {
    /// Starts a Twilio sms verification with the API key; its id and client secret.
    static func start(_ client: some TestClientProtocol, to number: String) async throws -> (String, String) {
        let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "\#(number)"}"#)
        #expect(start.status == .created)
        let id = try #require(start.body["id"] as? String)
        let secret = try #require(start.body["client_secret"] as? String)
        return (id, secret)
    }

    static func wrong(_ code: String) -> String { code == "000000" ? "111111" : "000000" }

    @Test("a start answers a secret the store keeps only as its hash; the secret reads, checks, resends, approves")
    func appSideSteps() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let number = "+14155550120"
            let (id, secret) = try await Self.start(client, to: number)
            #expect(secret.wholeMatch(of: /vcs_[0-9a-f]{32}_[0-9a-f]{64}/) != nil)
            #expect(secret.hasPrefix("vcs_" + id.dropFirst(3) + "_"))
            let record = try #require(try await runtime.service.store.record(id: id))
            #expect(record.clientSecretHash == Hex.lowercase(SHA256.hash(data: Data(secret.utf8))))
            #expect(!String(describing: record).contains(secret))

            let read = try await client.call(.get, "/v1/verifications/\(id)", key: secret)
            #expect(read.status == .ok)
            #expect(read.body["id"] as? String == id)
            #expect(read.body["client_secret"] == nil)
            let code = try sandboxCode(runtime, to: number)
            let wrong = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(Self.wrong(code))"}"#, key: secret)
            #expect(wrong.status == .unprocessableContent)
            #expect(wrong.body.errorCode == "incorrect_code")
            #expect(wrong.body.error?["attempts_remaining"] as? Int == 4)
            let resend = try await client.call(.post, "/v1/verifications/\(id)/resend", json: "{}", key: secret)
            #expect(resend.status == .ok)
            #expect(resend.body["sends"] as? Int == 2)
            let newCode = try sandboxCode(runtime, to: number)
            let right = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(newCode)"}"#, key: secret)
            #expect(right.status == .ok)
            #expect(right.body["status"] as? String == "approved")
            #expect(right.body["token"] is String)

            // Finished: the secret is useless, for reads too; the API key still reads it.
            for (method, path, json) in Self.appSideSteps(id, code: newCode) {
                let after = try await client.call(method, path, json: json, key: secret)
                #expect(after.status == .unauthorized, "\(method) \(path)")
                #expect(after.body.errorCode == "unauthorized")
                #expect(after.body.error?["request_id"] is String)
            }
            let byKey = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(byKey.body["status"] as? String == "approved")
        }
    }

    static func appSideSteps(_ id: String, code: String) -> [(HTTPRequest.Method, String, String?)] {
        [
            (.get, "/v1/verifications/\(id)", nil),
            (.get, "/v1/verifications/\(id)?refresh=true", nil),
            (.post, "/v1/verifications/\(id)/check", #"{"code": "\#(code)"}"#),
            (.post, "/v1/verifications/\(id)/resend", "{}"),
            (.post, "/v1/verifications/\(id)/challenge", #"{"answer": {"x": 1}}"#),
            (.post, "/v1/verifications/\(id)/cancel", "{}"),
        ]
    }

    @Test("a secret cannot start, list, act, look up, reach admin or read another verification (403)")
    func forbiddenElsewhere() async throws {
        try await GatewayHarness().run { client, _ in
            let (id, secret) = try await Self.start(client, to: "+14155550121")
            let (other, _) = try await Self.start(client, to: "+14155550122")
            let refused: [(HTTPRequest.Method, String, String?)] = [
                (.post, "/v1/verifications", #"{"to": "+14155550123"}"#),
                (.get, "/v1/verifications/\(other)", nil),
                (.post, "/v1/verifications/\(other)/check", #"{"code": "123456"}"#),
                (.post, "/v1/verifications/\(other)/cancel", "{}"),
                (.get, "/v1/verifications/\(id)?include=timeline", nil),
                (.post, "/v1/providers/idaas/actions/verify_id_token", #"{"input": {"id_token": "x"}}"#),
                (.post, "/v1/routing/dry-run", #"{"to": "+14155550123"}"#),
                (.get, "/v1/countries", nil),
                (.get, "/v1/phone-numbers/%2B14155550123", nil),
                (.get, "/v1/factors?identity=user-0001-abcd", nil),
                (.post, "/v1/factors/access-tokens", #"{"identity": "user-0001-abcd"}"#),
                (.get, "/v1/admin/providers", nil),
                (.get, "/v1/admin/blocks", nil),
                (.get, "/metrics", nil),
            ]
            for (method, path, json) in refused {
                // (`/metrics` from outside the loopback, as the harness is, asks for an admin key.)
                let result = try await client.call(method, path, json: json, key: secret)
                #expect(result.status == .forbidden, "\(method) \(path)")
                #expect(result.body.errorCode == "forbidden", "\(method) \(path)")
                #expect(result.body.error?["request_id"] is String)
            }
            // Nothing happened to the other verification, and this one is still the app's.
            let untouched = try await client.call(.get, "/v1/verifications/\(other)")
            #expect(untouched.body["status"] as? String == "pending")
            #expect(untouched.body["attempts_remaining"] as? Int == 5)
            #expect(try await client.call(.get, "/v1/verifications/\(id)", key: secret).status == .ok)
        }
    }

    @Test("a wrong or malformed secret is 401, and the verification is unchanged")
    func wrongSecret() async throws {
        try await GatewayHarness().run { client, _ in
            let (id, secret) = try await Self.start(client, to: "+14155550124")
            let last = secret.last == "0" ? "1" : "0"
            let forged = [
                String(secret.dropLast()) + last,  // this verification's form, one digit off
                "vcs_" + id.dropFirst(3) + "_" + String(repeating: "0", count: 64),
                "vcs_" + id.dropFirst(3),
                "vcs_",
                secret.uppercased().replacingOccurrences(of: "VCS_", with: "vcs_"),
            ]
            for bad in forged {
                let read = try await client.call(.get, "/v1/verifications/\(id)", key: bad)
                #expect(read.status == .unauthorized, "\(bad)")
                #expect(read.body.errorCode == "unauthorized")
                let check = try await client.call(
                    .post, "/v1/verifications/\(id)/check", json: #"{"code": "123456"}"#, key: bad)
                #expect(check.status == .unauthorized, "\(bad)")
            }
            // A secret for a verification that does not exist: 401, saying nothing of it.
            let unknown = "vcs_" + String(repeating: "a", count: 32) + "_" + String(repeating: "0", count: 64)
            let none = try await client.call(
                .get, "/v1/verifications/vf_" + String(repeating: "a", count: 32), key: unknown)
            #expect(none.status == .unauthorized)
            let fetched = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(fetched.body["attempts_remaining"] as? Int == 5)
        }
    }

    @Test("the secret ends with its verification: expired, canceled, or out of attempts (401)")
    func endsWithTheVerification() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let (expiring, expiringSecret) = try await Self.start(client, to: "+14155550125")
            let (canceled, canceledSecret) = try await Self.start(client, to: "+14155550126")
            let (exhausted, exhaustedSecret) = try await Self.start(client, to: "+14155550127")

            let cancel = try await client.call(.post, "/v1/verifications/\(canceled)/cancel", json: "{}")
            #expect(cancel.body["status"] as? String == "canceled")
            let code = try sandboxCode(runtime, to: "+14155550127")
            for _ in 0..<5 {
                _ = try await client.call(
                    .post, "/v1/verifications/\(exhausted)/check", json: #"{"code": "\#(Self.wrong(code))"}"#,
                    key: exhaustedSecret)
            }
            harness.clock.advance(by: 601)
            for (id, secret) in [(expiring, expiringSecret), (canceled, canceledSecret), (exhausted, exhaustedSecret)] {
                for (method, path, json) in Self.appSideSteps(id, code: code) {
                    let result = try await client.call(method, path, json: json, key: secret)
                    #expect(result.status == .unauthorized, "\(method) \(path)")
                    #expect(result.body.errorCode == "unauthorized", "\(method) \(path)")
                }
            }
            let byKey = try await client.call(.get, "/v1/verifications/\(exhausted)")
            #expect(byKey.body["status"] as? String == "max_attempts_reached")
        }
    }

    @Test("client-secret requests count against their IP's limit: the one past it is 429 with Retry-After")
    func perIPLimit() async throws {
        let harness = GatewayHarness()
        let config = """
            sandbox: true
            rate_limits:
              client_secret_requests_per_ip: {limit: 4, window_seconds: 60}
              trusted_proxy_header: X-Forwarded-For
            """
        let (app, runtime) = try await buildApplication(try harness.options(config: config))
        try await app.test(.router) { client in
            let phone: HTTPFields = [.init("X-Forwarded-For")!: "203.0.113.7"]
            let other: HTTPFields = [.init("X-Forwarded-For")!: "203.0.113.8"]
            // The back end's starts and reads with its API key never count.
            let (id, secret) = try await Self.start(client, to: "+14155550140")
            let (otherID, otherSecret) = try await Self.start(client, to: "+14155550141")
            let code = try sandboxCode(runtime, to: "+14155550140")
            // Four requests from the phone's address with a secret: a read, a wrong check, a resend, and a
            // refused one (another verification's secret) — refused ones count too.
            #expect(try await client.call(.get, "/v1/verifications/\(id)", key: secret, headers: phone).status == .ok)
            let wrong = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(Self.wrong(code))"}"#, key: secret,
                headers: phone)
            #expect(wrong.body.errorCode == "incorrect_code")
            let resend = try await client.call(
                .post, "/v1/verifications/\(id)/resend", json: "{}", key: secret, headers: phone)
            #expect(resend.status == .ok)
            let foreign = try await client.call(.get, "/v1/verifications/\(id)", key: otherSecret, headers: phone)
            #expect(foreign.status == .forbidden)
            for _ in 0..<3 {
                #expect(try await client.call(.get, "/v1/verifications/\(id)", headers: phone).status == .ok)
            }

            // The fifth: 429 in the one error shape, for every app-side step, and nothing is spent.
            let newCode = try sandboxCode(runtime, to: "+14155550140")
            for (method, path, json) in Self.appSideSteps(id, code: newCode) {
                let refused = try await client.call(method, path, json: json, key: secret, headers: phone)
                #expect(refused.status == .tooManyRequests, "\(method) \(path)")
                #expect(refused.body.errorCode == "rate_limited", "\(method) \(path)")
                #expect(refused.body.error?["retryable"] as? Bool == true)
                let retryAfter = try #require(refused.headers[.retryAfter].flatMap { Int($0) })
                #expect((1...60).contains(retryAfter) && refused.body.error?["retry_after"] as? Int == retryAfter)
            }
            let byKey = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(byKey.body["status"] as? String == "pending" && byKey.body["attempts_remaining"] as? Int == 4)
            #expect(byKey.body["sends"] as? Int == 2)

            // Another address has its own count; the phone's next window starts again.
            let elsewhere = try await client.call(
                .get, "/v1/verifications/\(otherID)", key: otherSecret, headers: other)
            #expect(elsewhere.status == .ok)
            harness.clock.advance(by: 60)
            let approved = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(newCode)"}"#, key: secret, headers: phone)
            #expect(approved.status == .ok && approved.body["status"] as? String == "approved")
        }
    }

    @Test("the app cancels its own verification with the secret, then the secret is spent")
    func cancelBySecret() async throws {
        try await GatewayHarness().run { client, _ in
            let (id, secret) = try await Self.start(client, to: "+14155550128")
            let cancel = try await client.call(.post, "/v1/verifications/\(id)/cancel", json: "{}", key: secret)
            #expect(cancel.status == .ok)
            #expect(cancel.body["status"] as? String == "canceled")
            #expect(try await client.call(.get, "/v1/verifications/\(id)", key: secret).status == .unauthorized)
        }
    }

    @Test("a replayed start answers the same secret; the stored answer holds none of it")
    func replaySameSecret() async throws {
        try await GatewayHarness().run { client, runtime in
            let headers: HTTPFields = [HTTPField.Name("Idempotency-Key")!: "client-secret-replay-1"]
            let body = #"{"to": "+14155550129"}"#
            let first = try await client.call(.post, "/v1/verifications", json: body, headers: headers)
            let again = try await client.call(.post, "/v1/verifications", json: body, headers: headers)
            #expect(again.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
            let secret = try #require(first.body["client_secret"] as? String)
            #expect(again.body["client_secret"] as? String == secret)
            #expect(again.body["id"] as? String == first.body["id"] as? String)
            // The key's stored answer, as a replay reads it: no secret in it.
            let key = IdempotencyKey(
                scope: "key_" + APIKeyring.hash(GatewayHarness.apiKey).prefix(12), key: "client-secret-replay-1")
            let claim = try await runtime.service.store.claimIdempotencyKey(
                key, fingerprint: Hex.lowercase(SHA256.hash(data: Data(body.utf8))), token: "t", owner: nil,
                at: runtime.service.clock.now, lease: 60, deadOwner: nil)
            guard case .replay(let stored) = claim else {
                Issue.record("expected the stored answer, found \(claim)")
                return
            }
            let storedText = String(decoding: stored.body, as: UTF8.self)
            #expect(storedText.contains(first.body["id"] as? String ?? "-"))
            #expect(!storedText.contains("client_secret") && !storedText.contains("vcs_"))
            let id = try #require(first.body["id"] as? String)
            #expect(try await client.call(.get, "/v1/verifications/\(id)", key: secret).status == .ok)
        }
    }

    @Test("an IDaaS slider answered with the secret: a wrong answer is the challenge's own refusal")
    func challengeBySecret() async throws {
        try await GatewayHarness().run { client, _ in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+8613800138000", "provider": "idaas"}"#)
            let id = try #require(start.body["id"] as? String)
            let secret = try #require(start.body["client_secret"] as? String)
            let answer = try await client.call(
                .post, "/v1/verifications/\(id)/challenge", json: #"{"answer": {"x": 0}}"#, key: secret)
            #expect(answer.status == .forbidden)
            #expect(answer.body.errorCode == "app_verification_failed")
            let read = try await client.call(.get, "/v1/verifications/\(id)", key: secret)
            #expect((read.body["next_action"] as? [String: Any])?["type"] as? String == "solve_challenge")
        }
    }

    @Test("two checks with the right code and one secret at once: one approves, the other is told so")
    func concurrentChecks() async throws {
        try await GatewayHarness().run { client, runtime in
            for round in 0..<3 {
                let number = "+1415555013\(round)"
                let (id, secret) = try await Self.start(client, to: number)
                let code = try sandboxCode(runtime, to: number)
                let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?, String?).self) {
                    group in
                    for _ in 0..<2 {
                        group.addTask {
                            let result = try await client.call(
                                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#, key: secret)
                            return (result.status, result.body["status"] as? String, result.body.errorCode)
                        }
                    }
                    var all: [(HTTPResponse.Status, String?, String?)] = []
                    for try await answer in group { all.append(answer) }
                    return all
                }
                let approved = answers.filter { $0.0 == .ok && $0.1 == "approved" }
                #expect(approved.count == 1, "\(answers)")
                // The other came after the approval: already approved, or (its secret spent by then) unauthorized.
                let other = answers.filter { !($0.0 == .ok) }
                #expect(other.count == 1, "\(answers)")
                #expect(
                    other.allSatisfy {
                        ($0.0 == .conflict && $0.2 == "already_approved")
                            || ($0.0 == .unauthorized && $0.2 == "unauthorized")
                    }, "\(answers)")
                let record = try #require(try await runtime.service.store.record(id: id))
                #expect(record.status == .approved)
                #expect(record.attempts == 1)
            }
        }
    }
}
