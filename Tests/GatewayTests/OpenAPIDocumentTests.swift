import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import Yams

@testable import gateway

/// `Sources/gateway/openapi.yaml` is the API's one description: these hold it and the server to each other.
@Suite("The OpenAPI document and the server agree")
struct OpenAPIDocumentTests {
    /// The document as the server serves it at `/openapi.json`, parsed.
    static func document() throws -> [String: Any] {
        let json = try OpenAPIDocument.json.get()
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    static var yamlFile: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/gateway/openapi.yaml")
    }

    /// Documented operations: `GET /v1/verifications/{id}` and so on.
    static func documentedOperations() throws -> Set<String> {
        let paths = try #require(try document()["paths"] as? [String: [String: Any]])
        return Set(paths.flatMap { path, methods in methods.keys.map { "\($0.uppercased()) \(path)" } })
    }

    /// Paths a middleware serves before routing, so the router's table does not list them: the vendor
    /// callbacks, and the browser redirects of a provider that takes them (CAMARA). (The sandbox's emulators under
    /// `/sandbox/<plugin>/` are the vendors' APIs, not this one.)
    static let servedBeforeRouting: Set<String> = [
        "POST /callbacks/{provider}", "POST /callbacks/{provider}/{path}", "GET /callbacks/{provider}",
    ]

    @Test("every route the router registers is documented, and every documented operation is registered")
    func routesMatchTheDocument() async throws {
        let documented = try Self.documentedOperations()
        try await GatewayHarness().run { _, runtime in
            let served = Set(
                runtime.routes.patterns.flatMap { route in
                    route.methods.map { "\($0.rawValue) \(route.path)" }
                })
            #expect(served.count > 25)
            #expect(served.subtracting(documented).sorted() == [], "served but not in openapi.yaml")
            #expect(
                documented.subtracting(served).subtracting(Self.servedBeforeRouting).sorted() == [],
                "in openapi.yaml but not served")
        }
    }

    @Test("every documented operation answers, with neither 404 nor 405")
    func everyOperationIsServed() async throws {
        var operations: [(HTTPRequest.Method, String)] = []
        for operation in try Self.documentedOperations() {
            let parts = operation.split(separator: " ", maxSplits: 1).map(String.init)
            // Only a provider that takes browser redirects answers a GET callback.
            let provider = operation == "GET /callbacks/{provider}" ? "camara" : "twilio"
            let concrete = parts[1].replacingOccurrences(of: "{id}", with: "vf_0123456789abcdef0123456789abcdef")
                .replacingOccurrences(of: "{provider}", with: provider)
                .replacingOccurrences(of: "{action}", with: "none")
                .replacingOccurrences(of: "{plugin}", with: "twilio")
                .replacingOccurrences(of: "{number}", with: "%2B14155550100")
                .replacingOccurrences(of: "{name}", with: "none")
                .replacingOccurrences(of: "{path}", with: "status")
                .replacingOccurrences(of: "{prefix}", with: "%2B447400")
                .replacingOccurrences(of: "{factor_id}", with: "YF0")
            operations.append((try #require(HTTPRequest.Method(rawValue: parts[0])), concrete))
        }
        #expect(operations.count == 49)
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

    /// The `enum` of `components.schemas.<name>`.
    static func schemaEnum(_ name: String) throws -> Set<String> {
        let schemas = try #require((try document()["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let schema = try #require(schemas[name] as? [String: Any], "components.schemas.\(name)")
        return Set(try #require(schema["enum"] as? [String], "components.schemas.\(name).enum"))
    }

    @Test("the error code enum lists exactly the taxonomy")
    func errorCodes() throws {
        #expect(try Self.schemaEnum("ErrorCode") == Set(GatewayError.Code.allCases.map(\.rawValue)))
        // Error.error.code is that enum, not a copy of it.
        let schemas = (try Self.document()["components"] as? [String: Any])?["schemas"] as? [String: Any]
        let error = ((schemas?["Error"] as? [String: Any])?["properties"] as? [String: Any])?["error"] as? [String: Any]
        let code = (error?["properties"] as? [String: Any])?["code"] as? [String: Any]
        #expect(code?["$ref"] as? String == "#/components/schemas/ErrorCode")
    }

    @Test("the channel, status, region, proof and second-factor enums are the Swift enums")
    func enumsMatchTheCode() throws {
        #expect(try Self.schemaEnum("Channel") == Set(Channel.allCases.map(\.rawValue)))
        #expect(try Self.schemaEnum("VerificationStatus") == Set(VerificationStatus.allCases.map(\.rawValue)))
        // `001` (non-geographic numbers) is libphonenumber's, not a region a client names.
        let regions = PhoneRegion.all.map(\.code).filter { $0.count == 2 }
        #expect(regions.count > 200)
        #expect(try Self.schemaEnum("Region") == Set(regions))
        #expect(try Self.schemaEnum("AppVerificationType") == Set(AppVerificationProof.Kind.allCases.map(\.rawValue)))
        #expect(try Self.schemaEnum("MultiFactorType") == Set(MultiFactor.Kind.allCases.map(\.rawValue)))
        // No schema repeats the channel or status list instead of referring to it.
        let text = try OpenAPIDocument.json.get()
        let channels = "[" + Channel.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ",") + "]"
        let statuses = "[" + VerificationStatus.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ",") + "]"
        #expect(text.components(separatedBy: channels).count == 2)
        #expect(text.components(separatedBy: statuses).count == 2)
    }

    @Test("/openapi.yaml is the file, byte for byte, and /openapi.json is its content")
    func servedDocumentsAreTheFile() async throws {
        let file = try Data(contentsOf: Self.yamlFile)
        // YAML 1.1 as Yams's loader reads it (PyYAML, which scripts/schemathesis_check.sh compares, reads the same).
        let loaded = try #require(try Yams.load(yaml: String(decoding: file, as: UTF8.self)))
        let expected = try JSONSerialization.data(withJSONObject: Self.plain(loaded), options: [.sortedKeys])
        try await GatewayHarness().run { client, _ in
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/yaml; charset=utf-8")
                #expect(Data(response.body.readableBytesView) == file, "the embedded openapi.yaml is out of date")
            }
            try await client.execute(uri: "/openapi.json", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                let served = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
                let normalized = try JSONSerialization.data(withJSONObject: served, options: [.sortedKeys])
                #expect(normalized == expected)
                #expect((served as? [String: Any])?["openapi"] as? String == "3.1.0")
            }
        }
    }

    /// Yams's loaded values with `String` keys, as JSONSerialization takes them (a date fails the test).
    static func plain(_ value: Any) -> Any {
        switch value {
        case let mapping as [AnyHashable: Any]:
            Dictionary(uniqueKeysWithValues: mapping.map { ("\($0.key.base)", plain($0.value)) })
        case let sequence as [Any]: sequence.map(plain)
        case is Date: "a YAML date"
        default: value
        }
    }

    @Test("the JSON keeps the file's key order")
    func keyOrder() throws {
        let json = try OpenAPIDocument.json.get()
        let top = ["\"openapi\"", "\"info\"", "\"servers\"", "\"security\"", "\"paths\"", "\"components\""]
        let offsets = top.compactMap { json.range(of: $0)?.lowerBound }
        #expect(offsets.count == top.count)
        #expect(offsets == offsets.sorted())
    }

    @Test("the converter types scalars as YAML 1.1 and refuses what JSON cannot say")
    func converter() throws {
        let json = try OpenAPIDocument.convert(
            yaml: """
                a: [1, -2, 0.5, true, no, 'NO', "x\\"y", null, ~, 1e3]
                b: {c: "tab\\there", d: 'é', e: '2026-01-01'}
                """)
        #expect(
            json
                == #"{"a":[1,-2,0.5,true,false,"NO","x\"y",null,null,1000.0],"b":{"c":"tab\there","d":"é","e":"2026-01-01"}}"#
        )
        for bad in ["a: 1\na: 2", "a: 2026-01-01", "a: .inf", "? [1]\n: 2", "a: [", ""] {
            #expect(throws: OpenAPIDocument.ConversionError.self, "\(bad)") {
                try OpenAPIDocument.convert(yaml: bad)
            }
        }
    }
}
