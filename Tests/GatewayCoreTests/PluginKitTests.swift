import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@Suite("Plugin kit: the vendor HTTP pipeline")
struct VendorHTTPClientTests {
    static let send = VendorOperation("send", sendMayHaveHappened: true)
    static let read = VendorOperation("read")

    static func client(
        _ transport: any HTTPTransport, logs: CapturedLogs = CapturedLogs(), serverErrorMaySend: Bool = false
    ) -> VendorHTTPClient {
        VendorHTTPClient(
            vendor: "Acme",
            context: ProviderContext(
                providerID: "acme-eu", settings: [:], transport: transport, logger: logs.logger()),
            baseURL: "https://api.acme.test", serverErrorMaySend: serverErrorMaySend)
    }

    static func mapped(_ answer: VendorErrorAnswer) -> GatewayError {
        GatewayError(
            .forVendorStatus(answer.status), "mapped",
            vendor: .init(providerID: "acme-eu", code: "E\(answer.status)", httpStatus: answer.status),
            retryAfter: answer.retryAfter)
    }

    @Test("no answer: a timeout or reset after a send may have sent; a refused connection never did")
    func transportFailures() async {
        for (failure, code, sent) in [
            (TransportError.timeout, GatewayError.Code.providerTimeout, true),
            (.connectionReset("reset"), .providerUnavailable, true),
            (.connectFailed("refused"), .providerUnavailable, false),
        ] {
            let client = Self.client(StubTransport.failing(failure))
            let error = await expectAsyncGatewayError(code) {
                try await client.send(.post, "/v1/send", operation: Self.send, mapError: Self.mapped)
            }
            #expect(error?.sendMayHaveHappened == sent, "\(failure)")
            let read = await expectAsyncGatewayError(code) {
                try await client.send(.get, "/v1/read", operation: Self.read, mapError: Self.mapped)
            }
            #expect(read?.sendMayHaveHappened == false, "a read never sends")
        }
    }

    @Test("an error answer goes through the plugin's mapping with Retry-After; a 5xx keeps the send only when told")
    func errorAnswers() async {
        var headers = HTTPFields()
        headers[.retryAfter] = " 7 "
        let stub = StubTransport.answer(status: 503, body: #"{"code": 1}"#, headers: headers)
        let plain = await expectAsyncGatewayError(.providerUnavailable) {
            try await Self.client(stub).send(.post, "/v1/send", operation: Self.send, mapError: Self.mapped)
        }
        #expect(plain?.retryAfter == 7 && plain?.sendMayHaveHappened == false && plain?.vendor?.code == "E503")
        let unsure = await expectAsyncGatewayError(.providerUnavailable) {
            try await Self.client(stub, serverErrorMaySend: true).send(
                .post, "/v1/send", operation: Self.send, mapError: Self.mapped)
        }
        #expect(unsure?.sendMayHaveHappened == true)
        let refused = await expectAsyncGatewayError(.providerRejected) {
            try await Self.client(StubTransport.answer(status: 400, body: "{}"), serverErrorMaySend: true).send(
                .post, "/v1/send", operation: Self.send, mapError: Self.mapped)
        }
        #expect(refused?.sendMayHaveHappened == false)
    }

    @Test("a 2xx it cannot read is provider_error, with the send possible after a send; logs name no body or URL")
    func malformedAndLogs() async throws {
        let logs = CapturedLogs()
        let client = Self.client(StubTransport.answer(status: 200, body: #"{"to": "+14155550100"}"#), logs: logs)
        struct Answer: Decodable { var id: String }
        let response = try await client.send(
            .post, "/v1/send?key=secret-key", operation: Self.send, mapError: Self.mapped)
        let error = await expectAsyncGatewayError(.providerError) {
            try client.decode(Answer.self, from: response, operation: Self.send)
        }
        #expect(error?.sendMayHaveHappened == true && error?.vendor?.httpStatus == 200)
        #expect(client.malformed(Self.read, httpStatus: 200).sendMayHaveHappened == false)
        _ = await expectAsyncGatewayError(.providerTimeout) {
            try await Self.client(StubTransport.failing(.timeout), logs: logs).send(
                .post, "/v1/send?key=secret-key", operation: Self.send, mapError: Self.mapped)
        }
        let text = logs.messages.joined(separator: "\n")
        #expect(text.contains("acme answered with an unreadable body") && text.contains("acme.operation=send"))
        #expect(text.contains("acme call failed without an answer") && text.contains("transport.error=timeout"))
        #expect(!text.contains("4155550100") && !text.contains("secret-key"))
    }

    @Test("the request goes to the base URL plus the path with the plugin's headers and a user agent")
    func request() async throws {
        let recorder = RecordingTransport(StubTransport.answer(status: 204, body: ""))
        var headers = HTTPFields()
        headers[.authorization] = "Basic x"
        _ = try await Self.client(recorder).send(
            .delete, "/v2/items/1", headers: headers, operation: Self.read, mapError: Self.mapped)
        let sent = try #require(recorder.requests.first)
        #expect(sent.url.absoluteString == "https://api.acme.test/v2/items/1" && sent.method == .delete)
        #expect(
            sent.headerFields[.authorization] == "Basic x" && sent.headerFields[.userAgent] == "verification-gateway")
    }
}

@Suite("Plugin kit: error tables, settings, JWS")
struct PluginKitTableTests {
    static let table = VendorErrorTable(
        vendor: "Acme",
        rows: [
            VendorErrorRow(
                code: "busy", httpStatus: 409, operation: "start", name: "Busy", mapsTo: .concurrentVerification,
                source: "acme.md §1"),
            VendorErrorRow(code: "busy", httpStatus: 409, name: "Busy", mapsTo: .invalidState, source: "acme.md §1"),
            VendorErrorRow(
                code: "gone", httpStatus: 410, operation: "check", name: "Gone", mapsTo: .maxAttemptsReached,
                source: "acme.md §2"),
            VendorErrorRow(
                code: "ACME.LOGIN.", match: .prefix, name: "Login", mapsTo: .denied, retryable: true,
                source: "acme.md §3"),
            VendorErrorRow(
                vocabulary: "v1", code: "6", operation: "check", name: "Not found", mapsTo: .notFound,
                source: "acme.md §4"),
        ])

    @Test("a row is found by code and status on the operation, then on any operation, then by status on the operation")
    func lookup() {
        #expect(Self.table.row(code: "busy", httpStatus: 409, operation: "start")?.mapsTo == .concurrentVerification)
        #expect(Self.table.row(code: "busy", httpStatus: 409, operation: "check")?.mapsTo == .invalidState)
        #expect(
            Self.table.row(code: "busy", httpStatus: 400, operation: "check") == nil, "the status is part of the key")
        #expect(Self.table.row(code: "unknown", httpStatus: 410, operation: "check")?.mapsTo == .maxAttemptsReached)
        #expect(Self.table.row(code: nil, httpStatus: 410, operation: "start") == nil)
        #expect(Self.table.row(code: "ACME.LOGIN.0007")?.isRetryable == true)
        #expect(Self.table.row(code: "6", operation: "check") == nil, "another vocabulary")
        #expect(Self.table.row(vocabulary: "v1", code: "6", httpStatus: 200, operation: "check")?.mapsTo == .notFound)
    }

    @Test("a mapped error names the situation and keeps the vendor's code; max attempts leaves none")
    func error() {
        let error = Self.table.error(
            .maxAttemptsReached, detail: "Acme HTTP 410 #gone", vendorCode: "gone", httpStatus: 410, providerID: "acme")
        #expect(error.message == "Too many wrong codes; Acme ended the verification (Acme HTTP 410 #gone).")
        #expect(
            error.attemptsRemaining == 0 && error.vendor == .init(providerID: "acme", code: "gone", httpStatus: 410))
        let custom = VendorErrorTable(vendor: "Acme", rows: [], summaries: [.notFound: "Acme lost it"])
        #expect(
            custom.error(.notFound, detail: "x", vendorCode: nil, httpStatus: 404, providerID: "a").message
                == "Acme lost it (x).")
    }

    static let specs: [SettingSpec] = [
        .text("account", "Account id.", check: { $0.hasPrefix("AC") }, reason: "must start with AC"),
        .secret("token", "Token."),
        .url("base_url", "Base URL."),
        .choice("api", "API.", ["v2", "v1"]),
        .integer("length", "Length.", in: 4...10),
    ]

    enum API: String { case v2, v1 }

    @Test("settings: every problem at once, typed reads, trailing slashes trimmed, secrets marked")
    func settings() {
        var settings = PluginSettings(
            ["account": "XX1", "base_url": "ftp://host", "api": "v3", "length": "11"], specs: Self.specs,
            providerID: "p")
        settings.require(false, "give a or b")
        #expect(
            settings.problems == [
                "provider p: setting `account` must start with AC", "provider p: missing setting `token`",
                "provider p: setting `base_url` must be an http or https URL",
                "provider p: setting `api` must be v2 or v1",
                "provider p: setting `length` must be a whole number from 4 to 10", "provider p: give a or b",
            ])
        #expect(throws: ConfigurationError.self) { try settings.validate() }
        let good = PluginSettings(
            [
                "account": "AC1", "token": "t", "base_url": "https://api.acme.test//", "api": "v1", "length": "6",
                "x": "",
            ],
            specs: Self.specs, providerID: "p")
        #expect(good.problems.isEmpty)
        #expect(good.url("base_url", default: "") == "https://api.acme.test" && good.int("length") == 6)
        #expect(good.choice("api", default: API.v2) == .v1 && good["x"] == nil)
        #expect(Self.specs.filter(\.isSecret).map(\.name) == ["token"])
    }

    /// A stand-in primitive (the core has no crypto): the signature is the input reversed.
    static let reversed = JWSAlgorithm(
        name: "XS1", sign: { Data($0.reversed()) }, verify: { signature, input in signature == Data(input.reversed()) })

    @Test("JWS: sorted header with alg and typ, base64url parts, parse and verify; tampering or another alg fails")
    func jws() throws {
        struct Claims: Codable, Equatable {
            var sub: String
            var n: Int
        }
        let token = try JWS.sign(Claims(sub: "a/b", n: 1), header: ["kid": "k1"], with: Self.reversed)
        let parsed = try #require(JWS.parse(token))
        #expect(parsed.header == ["alg": "XS1", "kid": "k1", "typ": "JWT"] && parsed.algorithm == "XS1")
        #expect(parsed.claims(Claims.self) == Claims(sub: "a/b", n: 1))
        #expect(parsed.isSigned(by: Self.reversed))
        #expect(
            String(decoding: try #require(Base64URL.decode(token.split(separator: ".")[0])), as: UTF8.self)
                == #"{"alg":"XS1","kid":"k1","typ":"JWT"}"#)
        let other = JWSAlgorithm(name: "XS2", sign: Self.reversed.sign, verify: Self.reversed.verify)
        #expect(!parsed.isSigned(by: other))
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Data(#"{"n":2,"sub":"a/b"}"#.utf8))
        #expect(JWS.parse(parts.joined(separator: "."))?.isSigned(by: Self.reversed) == false)
        #expect(JWS.parse("a.b") == nil && JWS.parse(token + "+") == nil && JWS.parse("e30.e30.a=b") == nil)
    }
}
