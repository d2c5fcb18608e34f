import Foundation
import GatewayCore
import GatewayVonage
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// The Vonage plugin through the gateway's API and callback route, against the sandbox's emulator.
@Suite("Vonage through the API")
struct VonageAPITests {
    @Test(
        "sms then voice: the channel times out with nothing done by the client, a signed callback moves the verification to voice"
    )
    func workflowMovesByItself() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "+14155550131", "channel": "sms", "fallback_channels": ["voice"], "provider": "vonage"}"#
            )
            #expect(start.status == .created)
            #expect(start.body["channel"] as? String == "sms")
            let id = try #require(start.body["id"] as? String)
            let emulator = try #require(runtime.sandbox?.mount("vonage")?.emulator as? VonageEmulator)
            harness.clock.advance(by: 21)
            await emulator.tick()
            let moved = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(moved.body["channel"] as? String == "voice")
            #expect((moved.body["fallback_channels"] as? [Any])?.isEmpty == true)
            let voice = try #require(runtime.sandbox?.outbox.last(to: "+14155550131"))
            #expect(voice.channel == "voice" && voice.provider == "vonage")
            let check = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(try #require(voice.code))"}"#)
            #expect(check.body["status"] as? String == "approved")
        }
    }

    @Test("a callback without Vonage's signature is refused with 401 and changes nothing")
    func forgedCallback() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "+14155550132", "channel": "sms", "fallback_channels": ["voice"], "provider": "vonage"}"#
            )
            let id = try #require(start.body["id"] as? String)
            let record = try #require(try await runtime.service.store.record(id: id))
            let reference = try #require(record.providerReference)
            let body = #"{"request_id": "\#(reference)", "type": "summary", "status": "completed"}"#
            let forged = try await client.call(
                .post, "/callbacks/vonage", json: body, key: nil, headers: [.authorization: "Bearer e30.e30.c2ln"])
            #expect(forged.status == .unauthorized)
            let after = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(after.body["status"] as? String == "pending")
        }
    }

    @Test("silent auth: check_url redirects to a code, the check approves it with one attempt, the callbacks agree")
    func silentAuth() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json:
                    #"{"to": "+14155550133", "channel": "silent_auth", "fallback_channels": ["sms"], "provider": "vonage"}"#
            )
            #expect(start.status == .created)
            let id = try #require(start.body["id"] as? String)
            let action = try #require(start.body["next_action"] as? [String: Any])
            let opening = try #require(action["open_url"] as? [String: Any])
            #expect(opening["cellular_only"] as? Bool == true)
            let url = try #require((opening["url"] as? String).flatMap(URL.init(string:)))
            // Before the device followed it there is no code: invalid_state, and the attempt is given back.
            let early = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "1234"}"#)
            #expect(early.body.errorCode == "invalid_state")

            // The device follows check_url and its redirects over mobile data; that completes nothing.
            let opened = try await client.call(.get, url.path(), key: nil)
            #expect(opened.status == .found)
            let network = try #require(opened.headers[.location].flatMap(URL.init(string:)))
            let answer = try await client.call(.get, network.path(), key: nil)
            #expect(answer.status == .ok)
            let code = try #require(answer.body["code"] as? String)
            let pending = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(pending.body["status"] as? String == "pending")
            #expect(pending.body["attempts_remaining"] as? Int == start.body["attempts_remaining"] as? Int)

            // The backend checks the code as any other.
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.status == .ok && check.body["status"] as? String == "approved")
            #expect(check.body["token"] is String)
            // Vonage's status callbacks (completed) follow the answer; the verification stays approved.
            let emulator = try #require(runtime.sandbox?.mount("vonage")?.emulator as? VonageEmulator)
            await emulator.deliverPending()
            #expect(try await client.call(.get, "/v1/verifications/\(id)").body["status"] as? String == "approved")
        }
    }

    @Test("silent auth: a wrong code from the backend ends the verification (Vonage's one attempt)")
    func silentAuthWrongCode() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "+14155550134", "channel": "silent_auth", "provider": "vonage"}"#)
            let id = try #require(start.body["id"] as? String)
            let action = try #require(start.body["next_action"] as? [String: Any])
            let opening = try #require(action["open_url"] as? [String: Any])
            let url = try #require((opening["url"] as? String).flatMap(URL.init(string:)))
            let opened = try await client.call(.get, url.path(), key: nil)
            let network = try #require(opened.headers[.location].flatMap(URL.init(string:)))
            let code = try #require(try await client.call(.get, network.path(), key: nil).body["code"] as? String)
            let wrong = code == "abcdef" ? "abcdeg" : "abcdef"
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(wrong)"}"#)
            #expect(check.body.errorCode == "max_attempts_reached")
            #expect(check.body.error?["attempts_remaining"] as? Int == 0)
            let emulator = try #require(runtime.sandbox?.mount("vonage")?.emulator as? VonageEmulator)
            await emulator.deliverPending()
            let read = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(read.body["status"] as? String == "max_attempts_reached")
        }
    }

    @Test("whatsapp: the sandbox's Vonage sends it from its WhatsApp number, kind whatsapp in the outbox")
    func whatsapp() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json:
                    #"{"to": "+14155550135", "channel": "whatsapp", "fallback_channels": ["sms"], "provider": "vonage"}"#
            )
            #expect(start.status == .created)
            #expect(start.body["channel"] as? String == "whatsapp")
            let id = try #require(start.body["id"] as? String)
            let message = try #require(runtime.sandbox?.outbox.last(to: "+14155550135"))
            #expect(message.kind == .whatsapp && message.channel == "whatsapp" && message.provider == "vonage")
            let check = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(try #require(message.code))"}"#)
            #expect(check.body["status"] as? String == "approved")
        }
    }
}
