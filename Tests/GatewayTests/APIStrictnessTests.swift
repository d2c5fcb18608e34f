import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import gateway

@Suite("The API refuses what its document refuses")
struct APIStrictnessTests {
    /// Sends `body` raw with the test API key and the given headers.
    static func send(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, body: String?,
        headers: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, body: [String: Any], headers: HTTPFields) {
        var headers = headers
        headers[.authorization] = "Bearer \(GatewayHarness.apiKey)"
        return try await client.execute(
            uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }
        ) { response in
            let object =
                (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
                ?? [:]
            return (response.status, object, response.headers)
        }
    }

    @Test(
        "a body that is not declared application/json answers 415",
        arguments: [nil, "application/x-www-form-urlencoded", "text/plain", "application/jsonx"])
    func unsupportedMediaType(_ contentType: String?) async throws {
        try await GatewayHarness().run { client, runtime in
            var headers: HTTPFields = [:]
            if let contentType { headers[.contentType] = contentType }
            let result = try await Self.send(
                client, .post, "/v1/verifications", body: #"{"to": "+14155550100"}"#, headers: headers)
            #expect(result.status == .unsupportedMediaType)
            #expect(result.body.errorCode == "invalid_request")
            #expect(result.body.error?["request_id"] as? String != nil)
            #expect(runtime.sandbox?.outbox.all.isEmpty == true)
        }
    }

    @Test("application/json with parameters is JSON")
    func jsonWithCharset() async throws {
        try await GatewayHarness().run { client, _ in
            let result = try await Self.send(
                client, .post, "/v1/verifications", body: #"{"to": "+14155550100"}"#,
                headers: [.contentType: "Application/JSON; charset=utf-8"])
            #expect(result.status == .created)
        }
    }

    @Test("the media type is read as HTTP spells it: any case, blanks around it, parameters after `;`")
    func mediaTypes() {
        for accepted in [
            "application/json", "APPLICATION/JSON", "Application/Json; charset=utf-8", " application/json ",
            "\tapplication/json\t;charset=utf-8", "application/json;", "application/json ; q=1",
        ] {
            #expect(JSONBodyMiddleware.isJSON(accepted), "\(accepted)")
        }
        for refused in [
            "", " ", ";", "application/jsonx", "application/jso", "xapplication/json", "application json",
            "application\\json", "application/json/", "text/json", "application/problem+json", "application/\u{130}son",
            "ﬁapplication/json", "application/json\u{A0}", "application/ json", "application /json",
        ] {
            #expect(!JSONBodyMiddleware.isJSON(refused), "\(refused)")
        }
    }

    @Test("an empty-bodied cancel and resend need no Content-Type")
    func emptyBodies() async throws {
        try await GatewayHarness().run { client, _ in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550131"}"#)
            let id = try #require(start.body["id"] as? String)
            let resend = try await Self.send(client, .post, "/v1/verifications/\(id)/resend", body: nil)
            #expect(resend.status != .unsupportedMediaType)
            let cancel = try await Self.send(client, .post, "/v1/verifications/\(id)/cancel", body: nil)
            #expect(cancel.status == .ok)
            let typed = try await Self.send(
                client, .post, "/v1/verifications/\(id)/cancel", body: nil, headers: [.contentType: "text/plain"])
            #expect(typed.status == .unsupportedMediaType)
        }
    }

    @Test("vendor callbacks and the emulators keep their form-encoded bodies")
    func callbacksExempt() async throws {
        try await GatewayHarness().run { client, _ in
            let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            let callback = try await Self.send(client, .post, "/callbacks/twilio", body: "a=b", headers: form)
            #expect(callback.status != .unsupportedMediaType)
            let emulator = try await Self.send(
                client, .post, "/sandbox/twilio/v2/Services/VA0/Verifications", body: "To=%2B14155550100", headers: form
            )
            #expect(emulator.status != .unsupportedMediaType)
        }
    }

    @Test(
        "a repeated key answers 400 naming it, at any depth",
        arguments: [
            (#"{"to": "+14155550100", "to": "+447700900123"}"#, "`to`"),
            (#"{"to": "+14155550100", "t\u006f": "+447700900123"}"#, "`to`"),
            (#"{"to": "+14155550100", "client_context": {"ip": "1.2.3.4", "ip": "5.6.7.8"}}"#, "`client_context.ip`"),
            (
                #"{"to": "+14155550100", "channel_options": {"prompt": {"message": "hi", "details": [{"label": "a", "value": "b"}, {"label": "a", "value": "b", "value": "c"}]}}}"#,
                "`channel_options.prompt.details[1].value`"
            ),
        ])
    func duplicateKeys(_ body: String, _ named: String) async throws {
        try await GatewayHarness().run { client, runtime in
            let result = try await client.call(.post, "/v1/verifications", json: body)
            #expect(result.status == .badRequest)
            #expect(result.body.errorCode == "invalid_request")
            let message = result.body.error?["message"] as? String ?? ""
            #expect(message.contains(named), "\(message)")
            #expect(runtime.sandbox?.outbox.all.isEmpty == true)
        }
    }

    @Test("equal values under different objects are not duplicates")
    func sameKeyInSiblings() {
        #expect(
            JSONDuplicateKeyScanner.firstDuplicate(
                in: Data(#"{"a": {"x": 1}, "b": {"x": "a\"x"}, "c": [{"x": 1}, {"x": 2}]}"#.utf8)) == nil)
        #expect(JSONDuplicateKeyScanner.firstDuplicate(in: Data(#"{"a": "\"a\"", "b": {"a": 1}}"#.utf8)) == nil)
        #expect(
            JSONDuplicateKeyScanner.firstDuplicate(in: Data(#"[{"a": 1}, {"a": 1, "b": {"c": [], "c": 2}}]"#.utf8))
                == "[1].b.c")
    }

    @Test(
        "a method a path does not serve answers 405 with Allow",
        arguments: [
            (HTTPRequest.Method.delete, "/v1/verifications", "POST"),
            (.put, "/v1/verifications/vf_0123456789abcdef0123456789abcdef", "GET"),
            (.get, "/v1/verifications/vf_0123456789abcdef0123456789abcdef/check", "POST"),
            (.post, "/healthz", "GET"),
            (.patch, "/sandbox/outbox", "DELETE, GET"),
            (.post, "/sandbox/faults/twilio", "DELETE, GET, PUT"),
            (.get, "/v1/factors/access-tokens", "POST"),
            (.options, "/v1/factors/access-tokens", "POST"),
            (.post, "/v1/factors/FA0123456789abcdef0123456789abcdef", "DELETE, GET"),
        ])
    func methodNotAllowed(_ method: HTTPRequest.Method, _ uri: String, _ allow: String) async throws {
        try await GatewayHarness().run { client, _ in
            let result = try await client.call(method, uri)
            #expect(result.status == .methodNotAllowed)
            #expect(result.headers[.allow] == allow)
            #expect(result.body.errorCode == "invalid_request")
            #expect(result.body.error?["request_id"] as? String != nil)
        }
    }

    @Test("an unknown path is still 404")
    func unknownPath() async throws {
        try await GatewayHarness().run { client, _ in
            let result = try await client.call(.delete, "/v1/verifications/vf_0123456789abcdef0123456789abcdef/other")
            #expect(result.status == .notFound)
            #expect(result.headers[.allow] == nil)
        }
    }

    @Test("a URI over 8 KiB that reaches the router answers 414 in the error shape")
    func longURIThroughRouter() async throws {
        try await GatewayHarness().run { client, _ in
            let result = try await client.call(.get, "/v1/phone-numbers/" + String(repeating: "1", count: 9000))
            #expect(result.status == .uriTooLong)
            #expect(result.body.errorCode == "invalid_request")
        }
    }
}
