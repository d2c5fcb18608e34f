import Foundation
import GatewayCore
import GatewayNexmo
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// The Vonage plugin through the gateway's API and callback route, against the sandbox's emulator.
@Suite("Vonage through the API")
struct VonageAPITests {
    @Test("sms then voice: the channel times out with nothing done by the client, a signed callback moves the verification to voice")
    func workflowMovesByItself() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "+14155550131", "channel": "sms", "fallback_channels": ["voice"], "provider": "vonage"}"#)
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
                json: #"{"to": "+14155550132", "channel": "sms", "fallback_channels": ["voice"], "provider": "vonage"}"#)
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
}
