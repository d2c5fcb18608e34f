import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

@Suite("The verification API over the Twilio sandbox")
struct VerificationAPITests {
    let number = "+14155550100"

    @Test("a start, a wrong code and the right code end approved with a verifiable token")
    func happyPath() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json:
                    #"{"to": "+14155550100", "channel": "sms", "locales": ["es-ES", "en-US"], "client_ref": "order-42"}"#
            )
            #expect(start.status == .created)
            let id = try #require(start.body["id"] as? String)
            #expect(start.body["status"] as? String == "pending")
            #expect(start.body["provider"] as? String == "twilio")
            #expect(start.body["to"] as? String == number)
            #expect(start.body["attempts_remaining"] as? Int == 5)
            #expect(start.body["client_ref"] as? String == "order-42")
            #expect(start.body["content_language"] as? String == "es")

            let wrong = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "000000"}"#)
            let code = try sandboxCode(runtime, to: number)
            if code != "000000" {
                #expect(wrong.status == .unprocessableContent)
                #expect(wrong.body.errorCode == "incorrect_code")
                #expect(wrong.body.error?["attempts_remaining"] as? Int == 4)
                #expect(wrong.body.error?["request_id"] as? String != nil)
            }
            let right = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(right.status == .ok)
            #expect(right.body["status"] as? String == "approved")
            let token = try #require(right.body["token"] as? String)

            let jwks = try await client.call(.get, "/.well-known/jwks.json", key: nil)
            let key = try #require((jwks.body["keys"] as? [[String: Any]])?.first)
            #expect(try Self.verify(token: token, jwk: key))

            let fetched = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(fetched.body["status"] as? String == "approved")
            let again = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(again.status == .conflict)
            #expect(again.body.errorCode == "already_approved")
        }
    }

    @Test("five wrong codes exhaust the attempts and the verification stays closed")
    func maxAttempts() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550101"}"#)
            let id = try #require(start.body["id"] as? String)
            let code = try sandboxCode(runtime, to: "+14155550101")
            let wrong = code == "111111" ? "222222" : "111111"
            for remaining in stride(from: 4, through: 1, by: -1) {
                let result = try await client.call(
                    .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(wrong)"}"#)
                #expect(result.body.errorCode == "incorrect_code")
                #expect(result.body.error?["attempts_remaining"] as? Int == remaining)
            }
            let fifth = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(wrong)"}"#)
            #expect(fifth.status == .tooManyRequests)
            #expect(fifth.body.errorCode == "max_attempts_reached")
            let right = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(right.body.errorCode == "max_attempts_reached")
            let fetched = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(fetched.body["status"] as? String == "max_attempts_reached")
        }
    }

    @Test("resend delivers the same code again, and cancel closes the verification")
    func resendAndCancel() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550102"}"#)
            let id = try #require(start.body["id"] as? String)
            let first = try sandboxCode(runtime, to: "+14155550102")
            let resent = try await client.call(.post, "/v1/verifications/\(id)/resend", json: #"{"channel": "voice"}"#)
            #expect(resent.status == .ok)
            #expect(resent.body["sends"] as? Int == 2)
            #expect(resent.body["channel"] as? String == "voice")
            let messages = runtime.sandbox?.outbox.all.filter { $0.to == "+14155550102" } ?? []
            #expect(messages.count == 2)
            #expect(messages.last?.code == first)
            #expect(messages.last?.channel == "call")

            let canceled = try await client.call(.post, "/v1/verifications/\(id)/cancel")
            #expect(canceled.status == .ok)
            #expect(canceled.body["status"] as? String == "canceled")
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(first)"}"#)
            #expect(check.status == .conflict)
            #expect(check.body.errorCode == "canceled")
            let resendAfter = try await client.call(.post, "/v1/verifications/\(id)/resend")
            #expect(resendAfter.body.errorCode == "canceled")
        }
    }

    @Test("a verification past its ten minutes is expired for get and check")
    func expiry() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550103"}"#)
            let id = try #require(start.body["id"] as? String)
            let code = try sandboxCode(runtime, to: "+14155550103")
            harness.clock.advance(by: 601)
            let fetched = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(fetched.body["status"] as? String == "expired")
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.status == .gone)
            #expect(check.body.errorCode == "expired")
        }
    }

    @Test("an Idempotency-Key replays the first response and never sends twice")
    func idempotency() async throws {
        try await GatewayHarness().run { client, runtime in
            let body = #"{"to": "+14155550104"}"#
            let first = try await client.call(
                .post, "/v1/verifications", json: body, headers: [.idempotencyKey: "order-7"])
            let second = try await client.call(
                .post, "/v1/verifications", json: body, headers: [.idempotencyKey: "order-7"])
            #expect(first.status == .created)
            #expect(second.status == .created)
            #expect(first.body["id"] as? String == second.body["id"] as? String)
            #expect(second.headers[.idempotentReplayed] == "true")
            #expect(runtime.sandbox?.outbox.all.filter { $0.to == "+14155550104" }.count == 1)

            let other = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550105"}"#, headers: [.idempotencyKey: "order-7"])
            #expect(other.status == .conflict)
            #expect(other.body.errorCode == "idempotency_conflict")

            let bad = try await client.call(
                .post, "/v1/verifications", json: body, headers: [.idempotencyKey: String(repeating: "x", count: 300)])
            #expect(bad.body.errorCode == "invalid_request")
        }
    }

    @Test("a vendor outage reaches the client as provider_unavailable with the vendor's code")
    func vendorOutage() async throws {
        try await GatewayHarness().run { client, runtime in
            runtime.sandbox?.mount("twilio")?.emulator.faults.set(.init(serverErrorStatus: 503))
            // Pinned to Twilio: the plugins installed after it (Vonage) would otherwise take the failover.
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550106", "provider": "twilio"}"#)
            #expect(start.status == .badGateway)
            #expect(start.body.errorCode == "provider_unavailable")
            #expect(start.body.error?["retryable"] as? Bool == true)
            let provider = try #require(start.body.error?["provider"] as? [String: Any])
            #expect(provider["id"] as? String == "twilio")
            #expect(provider["status"] as? Int == 503)
        }
    }

    @Test("the fault switch is reachable over HTTP in the sandbox")
    func faultSwitchEndpoint() async throws {
        try await GatewayHarness().run { client, runtime in
            let set = try await client.call(
                .put, "/sandbox/faults/twilio", json: #"{"server_error_status": 500, "remaining": 1}"#, key: nil)
            #expect(set.status == .ok)
            let failed = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550107", "provider": "twilio"}"#)
            #expect(failed.body.errorCode == "provider_unavailable")
            let next = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550107"}"#)
            #expect(next.status == .created)
            let bad = try await client.call(
                .put, "/sandbox/faults/twilio", json: #"{"server_error_status": 200}"#, key: nil)
            #expect(bad.body.errorCode == "invalid_request")
            let unknown = try await client.call(.get, "/sandbox/faults/nobody", key: nil)
            #expect(unknown.status == .notFound)
        }
    }

    @Test("the outbox lists what the emulator sent, oldest first")
    func outbox() async throws {
        try await GatewayHarness().run { client, _ in
            _ = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550108"}"#)
            _ = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550109"}"#)
            let outbox = try await client.call(.get, "/sandbox/outbox", key: nil)
            let messages = try #require(outbox.body["messages"] as? [[String: Any]])
            #expect(messages.map { $0["to"] as? String } == ["+14155550108", "+14155550109"])
            for message in messages {
                #expect(
                    Set(message.keys) == ["provider", "kind", "channel", "to", "code", "text", "language", "sent_at"])
            }
            let one = try await client.call(.get, "/sandbox/outbox?to=%2B14155550109", key: nil)
            let filtered = try #require(one.body["messages"] as? [[String: Any]])
            #expect(filtered.map { $0["to"] as? String } == ["+14155550109"])
        }
    }

    @Test("records and the sandbox survive a restart, and a check after it works")
    func restart() async throws {
        let harness = GatewayHarness()
        let (first, firstRuntime) = try await buildApplication(harness.options())
        let (id, code) = try await first.test(.router) { client in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550110"}"#)
            return (try #require(start.body["id"] as? String), try sandboxCode(firstRuntime, to: "+14155550110"))
        }
        let (app, _) = try await buildApplication(harness.options())
        try await app.test(.router) { client in
            let fetched = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(fetched.body["status"] as? String == "pending")
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.body["status"] as? String == "approved")
        }
    }

    @Test("the outbox survives a restart, so a pending code can be read again; a cleared outbox stays clear")
    func outboxSurvivesRestart() async throws {
        let harness = GatewayHarness()
        let (first, _) = try await buildApplication(harness.options())
        let id = try await first.test(.router) { client in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550111"}"#)
            return try #require(start.body["id"] as? String)
        }
        let (second, secondRuntime) = try await buildApplication(harness.options())
        try await second.test(.router) { client in
            let listed = try await client.call(.get, "/sandbox/outbox?to=%2B14155550111")
            let messages = try #require(listed.body["messages"] as? [[String: Any]])
            #expect(messages.count == 1)
            let code = try sandboxCode(secondRuntime, to: "+14155550111")
            #expect(messages.first?["code"] as? String == code)
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.body["status"] as? String == "approved")
            #expect(try await client.call(.delete, "/sandbox/outbox").status == .ok)
        }
        let (third, thirdRuntime) = try await buildApplication(harness.options())
        try await third.test(.router) { _ in
            #expect(thirdRuntime.sandbox?.outbox.all.isEmpty == true)
        }
    }

    @Test("a start in Spanish is written in Spanish, and the verification and the outbox say so")
    func emulatorWritesTheReportedLanguage() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "+14155550112", "locales": ["es-ES", "en-US"], "provider": "twilio"}"#)
            #expect(start.body["content_language"] as? String == "es")
            let message = try #require(runtime.sandbox?.outbox.last(to: "+14155550112"))
            #expect(message.language == "es")
            #expect(message.text == "Tu código de verificación es: \(message.code ?? "")")
        }
    }

    @Test("get with include=events returns the event log")
    func events() async throws {
        try await GatewayHarness().run { client, _ in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550111"}"#)
            let id = try #require(start.body["id"] as? String)
            let fetched = try await client.call(.get, "/v1/verifications/\(id)?include=events")
            let events = try #require(fetched.body["events"] as? [[String: Any]])
            #expect(events.contains { $0["kind"] as? String == "started" })
            #expect(events.contains { $0["kind"] as? String == "provider_call" })
            let bad = try await client.call(.get, "/v1/verifications/\(id)?include=everything")
            #expect(bad.body.errorCode == "invalid_request")
        }
    }

    static func verify(token: String, jwk: [String: Any]) throws -> Bool {
        let parts = token.split(separator: ".").map(String.init)
        guard parts.count == 3, let x = jwk["x"] as? String, let y = jwk["y"] as? String,
            let xData = base64URL(x), let yData = base64URL(y), let signature = base64URL(parts[2])
        else { return false }
        let key = try P256.Signing.PublicKey(rawRepresentation: xData + yData)
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        return key.isValidSignature(ecdsa, for: Data((parts[0] + "." + parts[1]).utf8))
    }

    static func base64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
