import Foundation
import GatewayCore
import GatewayFirebase
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// Firebase phone sign-in through the gateway's API and the sandbox's Firebase emulator.
@Suite("The verification API over the Firebase sandbox")
struct FirebaseAPITests {
    static let proof = #""app_verification": {"type": "recaptcha", "token": "sandbox-recaptcha-token"}"#

    @Test("a Firebase verification runs end to end, and Firebase's tokens come back on approval")
    func endToEnd() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "+447400123456", "provider": "firebase", "locales": ["fr-FR"], \#(Self.proof)}"#)
            #expect(start.status == .created)
            #expect(start.body["provider"] as? String == "firebase")
            let id = try #require(start.body["id"] as? String)
            let message = try #require(runtime.sandbox?.outbox.last(to: "+447400123456"))
            #expect(message.provider == "firebase")

            // sessionInfo stays inside the gateway: not in the verification, not in its event log.
            let fetched = try await client.call(.get, "/v1/verifications/\(id)?include=events")
            let raw = try JSONSerialization.data(withJSONObject: fetched.body)
            #expect(!String(decoding: raw, as: UTF8.self).lowercased().contains("session"))

            let wrong = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "000000"}"#)
            #expect(wrong.status.code == 422)
            #expect(wrong.body.errorCode == "incorrect_code")
            #expect(wrong.body.error?["attempts_remaining"] as? Int == 4)

            let check = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(message.code ?? "")"}"#)
            #expect(check.status == .ok)
            #expect(check.body["status"] as? String == "approved")
            #expect(check.body["token"] is String)
            let tokens = try #require(check.body["provider_tokens"] as? [String: String])
            #expect(tokens["idToken"]?.split(separator: ".").count == 3)
            #expect(tokens["refreshToken"]?.isEmpty == false)
            #expect(tokens["localId"]?.isEmpty == false)
            #expect(tokens["isNewUser"] == "true")
            #expect(tokens["expiresIn"] == "3600")
        }
    }

    @Test("without a proof Firebase is never called, and the answer names the accepted proofs")
    func proofRequired() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123457", "provider": "firebase"}"#)
            #expect(start.status == .badRequest)
            #expect(start.body.errorCode == "app_verification_required")
            let message = start.body.error?["message"] as? String ?? ""
            #expect(message.contains("recaptcha") && message.contains("play_integrity"), "\(message)")
            #expect(runtime.sandbox?.outbox.all.isEmpty == true)
        }
    }

    @Test("a proof Firebase rejects is app_verification_failed")
    func badProof() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json:
                    #"{"to": "+447400123458", "provider": "firebase", "app_verification": {"type": "recaptcha", "token": "invalid"}}"#
            )
            #expect(start.status == .forbidden)
            #expect(start.body.errorCode == "app_verification_failed")
            #expect((start.body.error?["provider"] as? [String: Any])?["code"] as? String == "CAPTCHA_CHECK_FAILED")
            #expect(runtime.sandbox?.outbox.all.isEmpty == true)
        }
    }

    @Test("a resend while the code is still valid sends nothing and counts no send")
    func reentrantResend() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123459", "provider": "firebase", \#(Self.proof)}"#)
            let id = try #require(start.body["id"] as? String)
            let resend = try await client.call(.post, "/v1/verifications/\(id)/resend", json: "{}")
            #expect(resend.status == .ok)
            #expect(resend.body["sends"] as? Int == 1)
            #expect(runtime.sandbox?.outbox.all.count == 1)
            let code = try sandboxCode(runtime, to: "+447400123459")
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.body["status"] as? String == "approved")
        }
    }

    @Test("after the wait a resend needs a fresh proof, and with one sends a new code that signs in")
    func resendWithProof() async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(harness.options())
        try await app.test(.router) { client in
            let to = "+447400123463"
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "\#(to)", "provider": "firebase", \#(Self.proof)}"#)
            let id = try #require(start.body["id"] as? String)
            harness.clock.advance(by: 61)
            let bare = try await client.call(.post, "/v1/verifications/\(id)/resend", json: "{}")
            #expect(bare.status == .badRequest)
            #expect(bare.body.errorCode == "app_verification_required")
            let resend = try await client.call(.post, "/v1/verifications/\(id)/resend", json: "{\(Self.proof)}")
            #expect(resend.status == .ok)
            #expect(resend.body["sends"] as? Int == 2)
            #expect(runtime.sandbox?.outbox.all.filter { $0.to == to }.count == 2)
            let code = try sandboxCode(runtime, to: to)
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.body["status"] as? String == "approved")
        }
    }

    @Test("a Firebase test number needs no proof, sends nothing, and takes its fixed code")
    func testNumber() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+16505550100", "provider": "firebase"}"#)
            #expect(start.status == .created)
            let id = try #require(start.body["id"] as? String)
            #expect(runtime.sandbox?.outbox.all.isEmpty == true)
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "123456"}"#)
            #expect(check.body["status"] as? String == "approved")
        }
    }

    @Test("routing decides between the two sandbox vendors")
    func routing() async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(
            harness.options(
                config: """
                    sandbox: true
                    routing:
                      default: [firebase, twilio]
                      channels: {voice: [twilio]}
                    """))
        try await app.test(.router) { client in
            let sms = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123460", \#(Self.proof)}"#)
            #expect(sms.body["provider"] as? String == "firebase")
            // Without a proof, Firebase is skipped and Twilio sends.
            let bare = try await client.call(.post, "/v1/verifications", json: #"{"to": "+447400123461"}"#)
            #expect(bare.body["provider"] as? String == "twilio")
            let voice = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123462", "channel": "voice", \#(Self.proof)}"#)
            #expect(voice.body["provider"] as? String == "twilio")
            #expect(runtime.sandbox?.outbox.all.map(\.provider) == ["firebase", "twilio", "twilio"])
        }
    }
}
