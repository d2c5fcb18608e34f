import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

@Suite("Bad input gets the one error shape with the right status")
struct BadInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var method: HTTPRequest.Method = .post
        var uri = "/v1/verifications"
        var body: String?
        var status: HTTPResponse.Status
        var code: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "not JSON", body: "to=+14155550100", status: .badRequest, code: "invalid_request"),
        Case(name: "a JSON array", body: "[1,2]", status: .badRequest, code: "invalid_request"),
        Case(name: "an empty body", body: "", status: .badRequest, code: "invalid_request"),
        Case(
            name: "an unknown field", body: #"{"to": "+14155550100", "colour": "red"}"#, status: .badRequest,
            code: "invalid_request"),
        Case(name: "a missing to", body: #"{"channel": "sms"}"#, status: .badRequest, code: "invalid_request"),
        Case(name: "to as a number", body: #"{"to": 14155550100}"#, status: .badRequest, code: "invalid_request"),
        Case(
            name: "an unknown channel", body: #"{"to": "+14155550100", "channel": "pigeon"}"#, status: .badRequest,
            code: "unsupported_channel"),
        Case(
            name: "a push to an identity with no factor", body: #"{"to": "user-identity-0001", "channel": "push"}"#,
            status: .unprocessableContent, code: "not_enrolled"),
        Case(
            name: "letters in the number", body: #"{"to": "+1415CALLME"}"#, status: .badRequest,
            code: "invalid_phone_number"),
        Case(
            name: "a national number without region", body: #"{"to": "4155550100"}"#, status: .badRequest,
            code: "invalid_phone_number"),
        Case(
            name: "a number of possible length that no range matches", body: #"{"to": "+44740090001"}"#,
            status: .badRequest, code: "invalid_phone_number"),
        Case(
            name: "a too long number", body: #"{"to": "+1415555010012345678"}"#, status: .badRequest,
            code: "invalid_phone_number"),
        Case(
            name: "a bad email", body: #"{"to": "not-an-email", "channel": "email"}"#, status: .badRequest,
            code: "invalid_request"),
        Case(
            name: "a bad locale", body: #"{"to": "+14155550100", "locales": ["english please"]}"#, status: .badRequest,
            code: "invalid_request"),
        Case(
            name: "locales not a list", body: #"{"to": "+14155550100", "locales": "es"}"#, status: .badRequest,
            code: "invalid_request"),
        Case(
            name: "a code length out of range", body: #"{"to": "+14155550100", "code_length": 40}"#,
            status: .badRequest, code: "invalid_request"),
        Case(
            name: "a fractional code length", body: #"{"to": "+14155550100", "code_length": 6.5}"#, status: .badRequest,
            code: "invalid_request"),
        Case(
            name: "an unknown proof type",
            body: #"{"to": "+14155550100", "app_verification": {"type": "vibes", "token": "x"}}"#, status: .badRequest,
            code: "invalid_request"),
        Case(
            name: "an ios receipt without secret",
            body: #"{"to": "+14155550100", "app_verification": {"type": "ios_receipt", "token": "x"}}"#,
            status: .badRequest, code: "invalid_request"),
        Case(
            name: "metadata with a nested object", body: #"{"to": "+14155550100", "metadata": {"a": {"b": 1}}}"#,
            status: .badRequest, code: "invalid_request"),
        Case(
            name: "an unknown forced provider", body: #"{"to": "+14155550100", "provider": "acme"}"#,
            status: .badRequest, code: "invalid_request"),
        Case(
            name: "a malformed verification id", uri: "/v1/verifications/xyz/check", body: #"{"code": "123456"}"#,
            status: .notFound, code: "not_found"),
        Case(
            name: "an unknown verification id", method: .get,
            uri: "/v1/verifications/vf_0123456789abcdef0123456789abcdef", status: .notFound, code: "not_found"),
        Case(name: "an unknown route", method: .get, uri: "/v1/nothing-here", status: .notFound, code: "not_found"),
        Case(
            name: "a wrong method", method: .delete, uri: "/v1/verifications", status: .methodNotAllowed,
            code: "invalid_request"),
        Case(
            name: "an unknown provider action", uri: "/v1/providers/twilio/actions/launch", body: "{}",
            status: .notFound, code: "not_found"),
        Case(
            name: "a body over 64 KiB",
            body: #"{"to": "+14155550100", "client_ref": ""# + String(repeating: "a", count: 70_000) + #""}"#,
            status: .contentTooLarge, code: "invalid_request"),
    ]

    @Test("bad start and lookup requests", arguments: cases)
    func badInput(_ testCase: Case) async throws {
        try await GatewayHarness().run { client, runtime in
            let result = try await client.call(testCase.method, testCase.uri, json: testCase.body)
            #expect(result.status == testCase.status)
            #expect(result.body.errorCode == testCase.code)
            let error = try #require(result.body.error)
            #expect(error["message"] as? String != nil)
            #expect(error["retryable"] as? Bool != nil)
            #expect(error["request_id"] as? String != nil)
            #expect(runtime.sandbox?.outbox.all.isEmpty == true, "a refused request sends nothing")
        }
    }

    @Test("bad check bodies are refused before any vendor call")
    func badCheck() async throws {
        try await GatewayHarness().run { client, _ in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550120"}"#)
            let id = try #require(start.body["id"] as? String)
            for body in [
                #"{"code": 123456}"#, #"{}"#, #"{"code": ""}"#, #"{"code": "12 34"}"#, #"{"code": "1", "extra": 1}"#,
                "nope",
            ] {
                let result = try await client.call(.post, "/v1/verifications/\(id)/check", json: body)
                #expect(result.status == .badRequest, "\(body)")
                #expect(result.body.errorCode == "invalid_request", "\(body)")
            }
            let fetched = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(fetched.body["attempts_remaining"] as? Int == 5, "refused checks cost no attempt")
        }
    }

    @Test("requests without a valid API key are refused with 401")
    func unauthorized() async throws {
        try await GatewayHarness().run { client, _ in
            let missing = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550100"}"#, key: nil)
            #expect(missing.status == .unauthorized)
            #expect(missing.body.errorCode == "unauthorized")
            let wrong = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550100"}"#, key: "sk_wrong")
            #expect(wrong.status == .unauthorized)
            let basic = try await client.call(
                .get, "/v1/verifications/vf_0123456789abcdef0123456789abcdef", key: nil,
                headers: [.authorization: "Basic eDp5"])
            #expect(basic.status == .unauthorized)
        }
    }

    @Test("operations endpoints answer without a key")
    func operations() async throws {
        try await GatewayHarness().run { client, _ in
            #expect(try await client.call(.get, "/healthz", key: nil).body["status"] as? String == "ok")
            #expect(try await client.call(.get, "/readyz", key: nil).body["status"] as? String == "ready")
            let doc = try await client.call(.get, "/openapi.json", key: nil)
            #expect(doc.body["openapi"] as? String == "3.1.0")
        }
    }
}
