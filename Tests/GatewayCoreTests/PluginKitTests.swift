import Crypto
import Foundation
import GatewayCore
import GatewayKitCrypto
import GatewayTestSupport
import HTTPTypes
import Testing
import _CryptoExtras

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
                providerID: "acme-eu", settings: [:], transport: transport, clock: SystemClock(), logger: logs.logger()),
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
                "provider p: setting `api` must be `v2` or `v1`",
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

@Suite("Plugin kit: wire plumbing")
struct VendorWireTests {
    @Test("Basic credentials written and read back, a Bearer token read, whatever the scheme's case")
    func basic() {
        let header = VendorHTTPClient.basicAuthorization("AC1", "to:ken")
        #expect(header == "Basic " + Data("AC1:to:ken".utf8).base64EncodedString())
        #expect(VendorHTTPClient.basicCredentials(header).map { [$0.user, $0.password] } == ["AC1", "to:ken"])
        let lower = "basic  " + Data("k:s".utf8).base64EncodedString()
        #expect(VendorHTTPClient.basicCredentials(lower).map { [$0.user, $0.password] } == ["k", "s"])
        #expect(VendorHTTPClient.bearerToken("bearer  eyJ.x.y ") == "eyJ.x.y")
        #expect(VendorHTTPClient.bearerToken(header) == nil && VendorHTTPClient.bearerToken("Bearer") == nil)
        for bad in [nil, "Bearer x", "Basic", "Basic !!!", "Basic " + Data("no-colon".utf8).base64EncodedString()] {
            #expect(VendorHTTPClient.basicCredentials(bad) == nil, "\(bad ?? "nil")")
        }
    }

    @Test("a form body is encoded with its content type; no form sends no body")
    func form() async throws {
        let recorder = RecordingTransport(StubTransport.answer(status: 200, body: "{}"))
        let client = VendorHTTPClientTests.client(recorder)
        _ = try await client.send(
            .post, "/v1/send", form: [("To", "+1 415"), ("Code", "a&b")], operation: VendorHTTPClientTests.send,
            mapError: VendorHTTPClientTests.mapped)
        _ = try await client.send(
            .get, "/v1/read", form: nil, operation: VendorHTTPClientTests.read, mapError: VendorHTTPClientTests.mapped)
        let (post, get) = (recorder.requests[0], recorder.requests[1])
        #expect(String(decoding: post.body, as: UTF8.self) == "To=%2B1%20415&Code=a%26b")
        #expect(post.headerFields[.contentType] == "application/x-www-form-urlencoded")
        #expect(get.body.isEmpty && get.headerFields[.contentType] == nil)
    }

    @Test("a required field of a 2xx answer: present and valid, or provider_error with the send kept")
    func required() throws {
        let client = VendorHTTPClientTests.client(StubTransport.failing(.timeout))
        let response = TransportResponse(status: .accepted, headerFields: [:], body: Data())
        #expect(try client.required("VE1", VendorHTTPClientTests.send, in: response) == "VE1")
        for value in [nil, ""] as [String?] {
            let error = expectGatewayError(.providerError) {
                try client.required(value, where: { !$0.isEmpty }, VendorHTTPClientTests.send, in: response)
            }
            #expect(error?.sendMayHaveHappened == true && error?.vendor?.httpStatus == 202)
        }
    }

    @Test("callbacks: a bad signature is logged by its reason and refused; an unreadable body is invalid_request")
    func callbacks() throws {
        let logs = CapturedLogs()
        let client = VendorHTTPClientTests.client(StubTransport.failing(.timeout), logs: logs)
        let refused = client.refusedCallback("stale iat")
        #expect(refused.code == .unauthorized && refused.message.contains("Acme signature"))
        #expect(
            logs.messages.contains { $0.hasPrefix("acme callback refused") && $0.contains("acme.refusal=stale iat") })
        struct Event: Decodable { var id: String }
        #expect(try client.callbackBody(Event.self, from: Data(#"{"id": "e1"}"#.utf8)).id == "e1")
        expectGatewayError(.invalidRequest) { try client.callbackBody(Event.self, from: Data("{}".utf8)) }
    }

    @Test("a stored reference reaches a URL only in the vendor's shape; a channel or destination that does not fit")
    func referencesAndFits() throws {
        let client = VendorHTTPClientTests.client(StubTransport.failing(.timeout))
        func verification(_ reference: String?) -> ProviderVerification {
            ProviderVerification(destination: .email("a@b.test"), channel: .email, reference: reference, state: .empty)
        }
        #expect(try client.reference(of: verification("VE1")) { $0.hasPrefix("VE") } == "VE1")
        for bad in [nil, "../x"] as [String?] {
            expectGatewayError(.internal) { try client.reference(of: verification(bad)) { $0.hasPrefix("VE") } }
        }
        #expect(try client.url("/v1/x?a=b").absoluteString == "https://api.acme.test/v1/x?a=b")
        #expect(GatewayError.unsupported(.push, by: "Acme").code == .unsupportedChannel)
        let phone = Destination.phone(try PhoneNumber(parsing: "+14155550100"))
        try phone.requireFits(.sms)
        try Destination.email("a@b.test").requireFits(.email)
        try Destination.identity("user-1").requireFits(.push)
        for (destination, channel) in [(phone, Channel.email), (.email("a@b.test"), .sms), (phone, .push)] {
            expectGatewayError(.invalidRequest) { try destination.requireFits(channel) }
        }
    }

    struct Made: ContextProvider {
        let id: String
        var capabilities: ProviderCapabilities { ProviderCapabilities(channels: [.sms]) }
        init(context: ProviderContext) throws(ConfigurationError) {
            try PluginSettings(context.settings, specs: VendorWireTests.specs, providerID: context.providerID)
                .validate()
            id = context.providerID
        }
        func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult { throw .internal() }
        func check(_ verification: ProviderVerification, code: String) async throws(GatewayError)
            -> ProviderCheckResult
        { throw .internal() }
    }

    static let specs: [SettingSpec] = [.seconds("ttl", "Lifetime.", in: 1...60)]

    @Test("a plugin made from a provider type, and settings in seconds")
    func pluginFromType() throws {
        let plugin = GatewayPlugin(
            id: "acme", displayName: "Acme", settings: Self.specs, provider: Made.self,
            makeEmulator: { _ in fatalError("not started") }, sandboxSettings: { _ in [:] })
        func context(_ ttl: String) -> ProviderContext {
            ProviderContext(
                providerID: "acme-eu", settings: ["ttl": ttl], transport: StubTransport.failing(.timeout),
                clock: SystemClock(), logger: .quiet)
        }
        #expect(try plugin.makeProvider(context("30")).id == "acme-eu")
        do {
            _ = try plugin.makeProvider(context("90"))
            Issue.record("90 seconds was taken")
        } catch {
            #expect(error.problems == ["provider acme-eu: setting `ttl` must be 1 to 60 seconds"])
        }
    }

    static let table = VendorErrorTable(
        vendor: "Acme",
        rows: [
            VendorErrorRow(
                code: "40001", httpStatus: 400, name: "Bad parameter", mapsTo: .invalidRequest, source: "§1"),
            VendorErrorRow(vocabulary: "v1", code: "40001", name: "Other", mapsTo: .notFound, source: "§2"),
        ])

    @Test("a code-keyed table: the code decides whatever the status, else the status; the message names both")
    func codeOnly() {
        #expect(Self.table.row(anyStatus: "40001")?.name == "Bad parameter")
        #expect(Self.table.row(anyStatus: "40001", vocabulary: "v1")?.mapsTo == .notFound)
        let known = Self.table.error(code: "40001", httpStatus: 503, retryAfter: 3, providerID: "acme")
        #expect(known.code == .invalidRequest && known.retryAfter == 3)
        #expect(known.message == "Acme rejected the request as invalid (Acme 40001: Bad parameter).")
        #expect(known.vendor == .init(providerID: "acme", code: "40001", httpStatus: 503))
        let unknown = Self.table.error(code: "99", httpStatus: 429, providerID: "acme")
        #expect(unknown.code == .providerRateLimited && unknown.message.hasSuffix("(Acme 99, HTTP 429)."))
        let none = Self.table.error(code: nil, httpStatus: 500, providerID: "acme")
        #expect(none.code == .providerUnavailable && none.message == "Acme is unavailable (HTTP 500).")
        #expect(Self.table.summary(of: .deliveryFailed) == "Acme could not deliver the code")
    }

    @Test(
        "language tags: the exact tag, else its language, else a variant of it, ignoring case and underscores",
        arguments: [
            (["xx-YY", "pt_br"], ["en", "pt", "pt-BR"], "pt-BR"), (["es-MX"], ["en", "es"], "es"),
            (["de"], ["de-at", "de-de"], "de-at"), ([" fr-CA ", "de"], ["fr", "de"], "fr"),
            (["", "sv-SE"], ["sv"], "sv"), (["ja"], ["en-us"], nil), ([], ["en"], nil),
        ] as [([String], [String], String?)])
    func languages(_ preferences: [String], _ supported: [String], _ expected: String?) {
        #expect(LanguageTags.firstMatch(preferences, in: supported) == expected)
    }

    @Test("dates: ISO 8601 written with whole seconds and read with any fraction or offset; UTC forms")
    func dates() throws {
        let date = Date(timeIntervalSince1970: 1_767_323_045.123_456)
        #expect(VendorDate.iso8601(date) == "2026-01-02T03:04:05Z")
        #expect(VendorDate.utc(date, separator: " ") == "2026-01-02 03:04:05")
        #expect(VendorDate.utc(date, milliseconds: true) == "2026-01-02T03:04:05.123")
        #expect(VendorDate.parseISO8601("2026-01-02T03:04:05Z") == Date(timeIntervalSince1970: 1_767_323_045))
        let micro = try #require(VendorDate.parseISO8601(" 2026-01-02T04:04:05.123456+01:00 "))
        #expect(abs(micro.timeIntervalSince1970 - 1_767_323_045.123) < 0.001)
        #expect(VendorDate.parseISO8601("2026-01-02T03:04:05.5Z") == Date(timeIntervalSince1970: 1_767_323_045.5))
        #expect(VendorDate.parseISO8601("yesterday") == nil && VendorDate.parseISO8601(nil) == nil)
    }

    @Test("ISO 8601 written by hand is Foundation's text, second for second, across years, leap days and fractions")
    func iso8601AgreesWithFoundation() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: false)
        var generator = SystemRandomNumberGenerator()
        var instants: [Double] = [
            0, -0.5, -1, 86_399.999_999, 951_782_400, 951_868_799.75, 4_107_542_399, -62_135_596_800,
            -62_135_596_800.5, -11_676_096_000, -11_676_096_000.5, -11_676_096_001, 253_402_300_799, 253_402_300_799.9,
            253_402_300_800, -62_135_596_801, 1e12, -1e12,
            1_767_323_045.123_456, 1_767_323_045.999_999_9,
        ]
        for _ in 0..<20_000 {
            instants.append(Double.random(in: -62_135_596_800...253_402_300_799, using: &generator))
            // Whole seconds and their neighbours, where the fraction's rounding would show.
            let whole = Double(Int64.random(in: -100_000_000...5_000_000_000, using: &generator))
            instants.append(contentsOf: [whole, whole.nextUp, whole.nextDown])
        }
        for instant in instants {
            let date = Date(timeIntervalSince1970: instant)
            #expect(VendorDate.iso8601(date) == date.formatted(style), "at \(instant)")
        }
    }

    @Test("ISO 8601 read by hand is what Foundation reads, and anything off the exact form is left to Foundation")
    func iso8601ReadAgreesWithFoundation() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: false)
        var generator = SystemRandomNumberGenerator()
        var texts = [
            "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2000-02-29T12:00:00Z",
            "1600-01-01T00:00:00Z", "1599-12-31T23:59:59Z", "9999-12-31T23:59:59Z", "2026-13-01T00:00:00Z",
            "2026-04-31T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
            "2026-01-01T00:00:60Z", "2026-01-01t00:00:00z", "2026-01-01T00:00:00+00:00", " 2026-01-01T00:00:00Z",
            "2026-01-01T00:00:0aZ", "2026-1-01T00:00:00Z", "", "2026-01-01 00:00:00Z",
        ]
        for _ in 0..<20_000 {
            let instant = Double.random(in: -11_676_096_000...253_402_300_799, using: &generator)
            texts.append(Date(timeIntervalSince1970: instant).formatted(style))
        }
        for text in texts {
            #expect(
                VendorDate.parseISO8601(text)
                    == (try? Date(text.trimmingCharacters(in: .whitespaces), strategy: style)), "\(text)")
            if let fast = VendorDate.parseWholeSecondsUTC(text) {
                #expect(fast == (try? Date(text, strategy: style)), "\(text)")
            }
        }
    }

    @Test("a JSON answer: sorted keys, unescaped slashes, its content type and extra headers")
    func jsonAnswer() {
        var extra = HTTPFields()
        extra[.contentLanguage] = "sv-SE"
        let answer = TransportResponse.json(
            ["b": "x/y", "a": "1"], status: 201, contentType: "application/json; charset=utf-8", headers: extra)
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"a":"1","b":"x/y"}"#)
        #expect(answer.status.code == 201 && answer.headerFields[.contentType] == "application/json; charset=utf-8")
        #expect(answer.headerFields[.contentLanguage] == "sv-SE")
        #expect(TransportResponse.json(["a": 1]).headerFields[.contentType] == "application/json")
    }

    @Test("JWS algorithms over swift-crypto: each signs what it verifies, a public key only verifies")
    func algorithms() throws {
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let p256 = P256.Signing.PrivateKey()
        let pairs: [(JWSAlgorithm, JWSAlgorithm)] = [
            (.rs256(signingWith: rsa), .rs256(verifyingWith: rsa.publicKey)),
            (.es256(signingWith: p256), .es256(verifyingWith: p256.publicKey)),
            (.hs256(secret: Data("s3cret".utf8)), .hs256(secret: Data("s3cret".utf8))),
        ]
        for (signer, checker) in pairs {
            let token = try JWS.sign(["sub": "u1"] as JSONValue, with: signer)
            let parsed = try #require(JWS.parse(token))
            #expect(parsed.algorithm == signer.name && parsed.isSigned(by: checker), "\(signer.name)")
            #expect(!parsed.isSigned(by: .hs256(secret: Data("other".utf8))), "\(signer.name)")
        }
        #expect(throws: GatewayError.self) { try JWSAlgorithm.rs256(verifyingWith: rsa.publicKey).sign(Data()) }
        #expect(throws: GatewayError.self) { try JWSAlgorithm.es256(verifyingWith: p256.publicKey).sign(Data()) }
        let es = try JWSAlgorithm.es256(signingWith: p256).sign(Data("x".utf8))
        #expect(es.count == 64, "raw r‖s")
    }
}
