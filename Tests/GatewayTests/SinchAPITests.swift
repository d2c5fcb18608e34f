import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// Sinch through the gateway's API, the sandbox's Sinch emulator and the callback route.
@Suite("The verification API over the Sinch sandbox")
struct SinchAPITests {
    @Test("seamless: open_url, no check, and the emulator's signed result event approves through /callbacks/sinch")
    func seamless() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "+46701234569", "provider": "sinch", "channel": "silent_auth"}"#)
            #expect(start.status == .created)
            let id = try #require(start.body["id"] as? String)
            let action = try #require(start.body["next_action"] as? [String: Any])
            #expect(action["type"] as? String == "open_url")
            let opening = try #require(action["open_url"] as? [String: Any])
            #expect(opening["cellular_only"] as? Bool == true)
            let url = try #require((opening["url"] as? String).flatMap(URL.init(string:)))
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "1234"}"#)
            #expect(check.body.errorCode == "invalid_state")

            // The device opens the URL over mobile data: the emulator completes and calls the gateway back.
            let opened = try await client.call(.get, url.path(), key: nil)
            #expect(opened.status == .ok && opened.body["status"] as? String == "SUCCESSFUL")
            let read = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(read.body["status"] as? String == "approved")
            #expect(read.body["token"] is String)
            let events = try await client.call(.get, "/v1/verifications/\(id)?include=events")
            let raw = String(decoding: try JSONSerialization.data(withJSONObject: events.body), as: UTF8.self)
            #expect(raw.contains("callback"))
        }
    }

    @Test("a flash call: intercept_call, and the caller number checks as the code")
    func flashCall() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "+46701234568", "provider": "sinch", "channel": "flashcall"}"#)
            let id = try #require(start.body["id"] as? String)
            #expect((start.body["next_action"] as? [String: Any])?["type"] as? String == "intercept_call")
            let call = try #require(runtime.sandbox?.outbox.last(to: "+46701234568"))
            #expect(call.kind == .flashCall)
            let wrong = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "+46100000000"}"#)
            #expect(wrong.body.errorCode == "incorrect_code")
            let right = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(call.code ?? "")"}"#)
            #expect(right.status == .ok && right.body["status"] as? String == "approved")
        }
    }

    @Test("an unsigned or wrongly signed callback at /callbacks/sinch is 401 and changes nothing")
    func badCallback() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+46701234567", "provider": "sinch", "locales": ["sv"]}"#)
            let id = try #require(start.body["id"] as? String)
            #expect(start.body["content_language"] as? String == "sv-SE")
            let status = try await client.call(
                .post, "/v1/providers/sinch/actions/status_by_reference", json: #"{"input": {"reference": "\#(id)"}}"#)
            let sinchID = try #require((status.body["output"] as? [String: Any])?["id"] as? String)
            let event = #"{"event": "VerificationResultEvent", "id": "\#(sinchID)", "status": "SUCCESSFUL"}"#
            var headers = HTTPFields()
            headers[.authorization] = "Application \(GatewaySandboxSinch.key):bm90LWEtc2lnbmF0dXJl"
            headers[HTTPField.Name("x-timestamp")!] = "2030-03-17T17:46:40Z"
            let forged = try await client.call(.post, "/callbacks/sinch", json: event, key: nil, headers: headers)
            #expect(forged.status == .unauthorized)
            let unsigned = try await client.call(.post, "/callbacks/sinch", json: event, key: nil)
            #expect(unsigned.status == .unauthorized)
            let read = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(read.body["status"] as? String == "pending")
        }
    }
}

/// The sandbox application key, as the startup banner prints it (kept here so the test reads as a vendor would).
enum GatewaySandboxSinch {
    static let key = "5a4db0c0-5a4d-4b0c-8a4d-b0c05a4d0001"
}
