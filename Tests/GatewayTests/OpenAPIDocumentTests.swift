import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

@Suite("The served OpenAPI document matches the server")
struct OpenAPIDocumentTests {
    @Test("every documented operation is served")
    func everyOperationIsServed() async throws {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var operations: [(HTTPRequest.Method, String)] = []
        for (path, methods) in paths {
            for method in methods.keys {
                let concrete = path.replacingOccurrences(of: "{id}", with: "vf_0123456789abcdef0123456789abcdef")
                    .replacingOccurrences(of: "{provider}", with: "twilio")
                    .replacingOccurrences(of: "{action}", with: "none")
                    .replacingOccurrences(of: "{plugin}", with: "twilio")
                    .replacingOccurrences(of: "{number}", with: "%2B14155550100")
                    .replacingOccurrences(of: "{name}", with: "none")
                    .replacingOccurrences(of: "{path}", with: "status")
                    .replacingOccurrences(of: "{prefix}", with: "%2B447400")
                    .replacingOccurrences(of: "{factor_id}", with: "YF0")
                operations.append((HTTPRequest.Method(rawValue: method.uppercased())!, concrete))
            }
        }
        #expect(operations.count == 34)
        let all = operations
        try await GatewayHarness().run { client, _ in
            for (method, uri) in all {
                let result = try await client.call(method, uri, json: method == .get || method == .delete ? nil : "{}")
                let message = result.body.error?["message"] as? String ?? ""
                #expect(!message.hasPrefix("No such endpoint"), "\(method) \(uri) is documented but not served")
                #expect(result.status != .methodNotAllowed, "\(method) \(uri)")
            }
        }
    }

    @Test("the error code enum lists exactly the taxonomy")
    func errorCodes() throws {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any])
        let schemas = (document["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let error = ((schemas?["Error"] as? [String: Any])?["properties"] as? [String: Any])?["error"] as? [String: Any]
        let code = (error?["properties"] as? [String: Any])?["code"] as? [String: Any]
        let documented = Set(code?["enum"] as? [String] ?? [])
        #expect(documented == Set(GatewayError.Code.allCases.map(\.rawValue)))
    }

    @Test("docs/openapi.json is the document the server serves")
    func docsCopyIsCurrent() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/openapi.json")
        let onDisk = try String(contentsOf: file, encoding: .utf8)
        #expect(
            onDisk.trimmingCharacters(in: .whitespacesAndNewlines)
                == OpenAPIDocument.json.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
