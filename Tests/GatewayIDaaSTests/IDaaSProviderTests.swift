import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Synchronization
import Testing

@testable import GatewayIDaaS

/// The provider built through the plugin with the sandbox settings, against the emulator in process.
struct IDaaSProviderHarness: EmulatorHarness {
    static let mount = "/sandbox/idaas"
    static let number = "+8613800138000"
    static let context = ClientContext(
        ipAddress: "203.0.113.7",
        userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15",
        deviceID: "device-42")

    let base: IDaaSEmulatorHarness
    let transport: RecordingTransport
    let provider: IDaaSProvider
    let logs = CapturedLogs()
    var emulator: IDaaSEmulator { base.emulator }
    var outbox: SandboxOutbox { base.outbox }
    var clock: ManualClock { base.clock }

    init(
        settings extra: [String: String] = [:], requestTimeout: Duration = .seconds(5),
        transport custom: ((any HTTPTransport) -> any HTTPTransport)? = nil, base: IDaaSEmulatorHarness = .init()
    ) throws {
        self.base = base
        let inner = InProcessTransport(emulator: base.emulator, pathPrefix: Self.mount)
        transport = RecordingTransport(custom?(inner) ?? inner)
        var settings = IDaaSPlugin.plugin.sandboxSettings(try #require(URL(string: "http://gateway.test\(Self.mount)")))
        settings["area_codes_preload"] = "false"
        settings.merge(extra) { _, new in new }
        provider = try IDaaSProvider(
            context: ProviderContext(
                providerID: "idaas", settings: settings, transport: transport, clock: base.clock,
                logger: logs.logger(), requestTimeout: requestTimeout))
    }

    static func request(_ number: String = number, context: ClientContext = context) throws -> StartVerification {
        StartVerification(
            destination: .phone(try PhoneNumber(parsing: number)), channel: .sms, locales: ["zh-CN"],
            clientContext: context)
    }

    /// A verification after `prepare`, as the engine stores it.
    func prepared(_ number: String = number) async throws -> (ProviderVerification, NextAction.Challenge) {
        let challenge = try #require(try await provider.prepare(try Self.request(number)))
        return (
            ProviderVerification(
                destination: .phone(try PhoneNumber(parsing: number)), channel: .sms, reference: challenge.reference,
                state: challenge.state),
            challenge.challenge
        )
    }

    func state(_ verification: ProviderVerification) throws -> IDaaSVerificationState {
        try verification.state.decode(IDaaSVerificationState.self)
    }

    /// The x of the open slider, read from the sandbox (tests only).
    func answer(_ verification: ProviderVerification) async throws -> Double {
        try await base.answer(try #require(try state(verification).captchaToken))
    }

    func submit(_ verification: ProviderVerification, x: Double) async throws -> ProviderStartResult {
        try await provider.submitChallenge(verification, answer: ChallengeAnswer(answer: ["x": .number(x)]))
    }

    /// A verification whose SMS is sent, with its code.
    func sent(_ number: String = number) async throws -> (ProviderVerification, String) {
        var (verification, _) = try await prepared(number)
        let result = try await submit(verification, x: try await answer(verification))
        #expect(result.nextAction == nil && !result.sentNothing)
        verification.state = result.state
        return (verification, try #require(outbox.last(to: number)?.code))
    }

    func header(_ request: TransportRequest, _ name: String) -> String? {
        HTTPField.Name(name).flatMap { request.headerFields[$0] }
    }
}

extension NextAction.Challenge {
    var background: String? { data["background_png_base64"]?.stringValue }
}

@Suite("IDaaS provider")
struct IDaaSProviderTests {
    typealias H = IDaaSProviderHarness

    @Test("a start reads the area codes, fetches a slider and answers solve_challenge with both PNGs; nothing is sent")
    func prepareSendsNothing() async throws {
        let h = try H()
        #expect(h.provider.capabilities.servedRegions == ["CN", "HK", "MO", "TW"])
        let (verification, challenge) = try await h.prepared()
        #expect(challenge.kind == "slider_captcha")
        let backgroundText = try #require(challenge.background)
        let background = try #require(Data(base64Encoded: backgroundText))
        let pieceText = try #require(challenge.data["piece_png_base64"]?.stringValue)
        let piece = try #require(Data(base64Encoded: pieceText))
        let decodedBackground = try DecodedPNG(background)
        let decodedPiece = try DecodedPNG(piece)
        #expect(
            abs(
                Double(DecodedPNG.solve(background: decodedBackground, piece: decodedPiece))
                    - (try await h.answer(verification))) <= 1)
        #expect(challenge.expiresAt != nil)
        #expect(h.transport.paths == [H.mount + IDaaSWire.areaCodesPath, H.mount + IDaaSWire.captchaPath])
        #expect(h.outbox.messages(to: H.number).isEmpty)
        #expect(try h.state(verification).mobile == "+86-13800138000")
        // The tenant's list now declares the regions.
        #expect(h.provider.capabilities.servedRegions == ["CN", "HK", "MO", "TW", "SG"])
        // A check before the slider is refused without a call.
        await expectGatewayError(.invalidState) { try await h.provider.check(verification, code: "123456") }
    }

    @Test("a number outside the tenant's area codes is refused before any call; a form its regex refuses too")
    func areaCodes() async throws {
        let h = try H()
        _ = try await h.prepared()
        let calls = h.transport.requests.count
        await expectGatewayError(.unsupportedDestination) {
            try await h.provider.prepare(try H.request("+16505553434"))
        }
        await expectGatewayError(.invalidPhoneNumber) { try await h.provider.prepare(try H.request("+861012345678")) }
        #expect(h.transport.requests.count == calls)
        // Singapore is in the tenant's list, though not in the default regions.
        let (singapore, _) = try await h.prepared("+6591234567")
        #expect(try h.state(singapore).mobile == "+65-91234567")
    }

    @Test(
        "the full flow: slider verified with the verification's own number, SMS with the captcha token, login, verified tokens"
    )
    func fullFlow() async throws {
        let h = try H()
        let (verification, code) = try await h.sent()
        let verify = try #require(h.transport.requests.first { $0.url.path().hasSuffix(IDaaSWire.captchaVerifyPath) })
        let verifyBody = try SnakeCaseJSON.decoder.decode(IDaaSWire.CaptchaVerifyRequest.self, from: verify.body)
        #expect(verifyBody.sender == "+86-13800138000")
        #expect(verifyBody.pointJson?.hasSuffix(",\"y\":5.0}") == true)
        let send = try #require(h.transport.requests.first { $0.url.path().hasSuffix(IDaaSWire.smsSendPath) })
        let sendBody = try SnakeCaseJSON.decoder.decode(IDaaSWire.SMSSendRequest.self, from: send.body)
        #expect(sendBody.type == "LOGIN_SMS" && sendBody.mobile == "+86-13800138000")
        #expect(sendBody.captchaToken?.hasPrefix(verifyBody.token ?? "-") == true)
        let result = try await h.provider.check(verification, code: code)
        #expect(result.status == .approved)
        #expect(result.tokens["session_token"]?.stringValue?.isEmpty == false)
        #expect(result.tokens["expire"] == .number(Double(IDaaSEmulator.sessionLifetime)))
        #expect(result.tokens["id_token"]?.stringValue?.split(separator: ".").count == 3)
        // The same device headers on every call, taken from the client context.
        let sdk = h.transport.requests.filter {
            $0.url.path().contains("/api/v2/sdk/") && !$0.url.path().hasSuffix("country-codes")
        }
        #expect(sdk.count == 4)
        for request in sdk {
            #expect(h.header(request, "X-client-id") == IDaaSSandbox.clientID)
            #expect(h.header(request, "X-device-fingerprint") == "device-42")
            #expect(h.header(request, "X-operating-sys-version") == "iOS 17.4")
            #expect(h.header(request, "X-device-ip") == "203.0.113.7")
            #expect(h.header(request, "X-agent")?.hasPrefix("Mozilla/5.0 (iPhone") == true)
            #expect(h.header(request, "X-L") == "zh")
        }
        // The logs never carry the device values or the number.
        let text = h.logs.messages.joined(separator: "\n")
        #expect(!text.contains("device-42") && !text.contains("203.0.113.7") && !text.contains("Mozilla"))
        #expect(!text.contains("13800138000"))
    }

    @Test("without a client context the documented defaults are sent, and a stable fingerprint")
    func defaults() async throws {
        let h = try H()
        _ = try await h.provider.prepare(try H.request(context: ClientContext()))
        _ = try await h.provider.prepare(try H.request(context: ClientContext()))
        let captchas = h.transport.requests.filter { $0.url.path().hasSuffix(IDaaSWire.captchaPath) }
        #expect(captchas.count == 2)
        #expect(h.header(captchas[0], "X-operating-sys-version") == IDaaSConfiguration.defaultOSValue)
        #expect(h.header(captchas[0], "X-agent") == IDaaSConfiguration.defaultAgentValue)
        #expect(h.header(captchas[0], "X-device-ip") == nil)
        let fingerprint = try #require(h.header(captchas[0], "X-device-fingerprint"))
        #expect(fingerprint == h.header(captchas[1], "X-device-fingerprint"))
        #expect(!fingerprint.contains("13800138000"))
    }

    @Test("a wrong slider answers a fresh challenge with a new image and never sends an SMS")
    func wrongSlider() async throws {
        let h = try H()
        let (verification, challenge) = try await h.prepared()
        let x = try await h.answer(verification)
        let result = try await h.submit(verification, x: x > 150 ? x - 60 : x + 60)
        #expect(result.sentNothing)
        guard case .solveChallenge(let fresh) = result.nextAction else {
            Issue.record("expected a fresh challenge")
            return
        }
        #expect(fresh.background != challenge.background)
        #expect(try result.state.decode(IDaaSVerificationState.self).captchaToken != h.state(verification).captchaToken)
        #expect(!h.transport.paths.contains(H.mount + IDaaSWire.smsSendPath))
        #expect(h.outbox.messages(to: H.number).isEmpty)
        // A malformed answer is the caller's.
        await expectGatewayError(.invalidRequest) {
            try await h.provider.submitChallenge(verification, answer: ChallengeAnswer(answer: ["x": "left"]))
        }
    }

    @Test("a captcha token cannot send to another number: the refusal answers a fresh slider, no SMS")
    func captchaTokenForAnotherNumber() async throws {
        // A transport that rewrites the SMS send to another number, as a tampering client would.
        let h = try H { inner in
            StubRewrite(inner: inner)
        }
        let (verification, _) = try await h.prepared()
        let result = try await h.submit(verification, x: try await h.answer(verification))
        #expect(result.sentNothing)
        if case .solveChallenge = result.nextAction {} else { Issue.record("expected a fresh challenge") }
        #expect(h.outbox.messages(to: H.number).isEmpty && h.outbox.messages(to: "+8613900139000").isEmpty)
    }

    @Test("wrong code is pending; repeated wrong codes lock the user; an expired code expires")
    func codes() async throws {
        let h = try H()
        let (verification, code) = try await h.sent()
        let wrong = code == "000000" ? "111111" : "000000"
        for _ in 1..<IDaaSEmulator.defaultMaxWrongCodes {
            #expect(try await h.provider.check(verification, code: wrong).status == .pending)
        }
        let locked = await expectGatewayError(.accountLocked) { try await h.provider.check(verification, code: wrong) }
        #expect(locked?.vendor?.code == "IDAAS.SDK.LOGIN.1003")
        let other = try H()
        let (late, lateCode) = try await other.sent()
        other.clock.advance(by: IDaaSEmulator.defaultCodeLifetime + 1)
        let expired = await expectGatewayError(.expired) { try await other.provider.check(late, code: lateCode) }
        #expect(expired?.vendor?.code == "IDAAS.SDK.CAPTCHA.0008")
    }

    @Test(
        "MFA_AUTH, PASSWORD_EXPIRED and ACCESS_DENIED end as denied; PASSWORD_WARN approves",
        arguments: IDaaSSandbox.statuses.sorted { $0.key < $1.key })
    func statuses(_ entry: (key: String, value: String)) async throws {
        let h = try H()
        let (verification, code) = try await h.sent(entry.key)
        if entry.value == "PASSWORD_WARN" {
            let result = try await h.provider.check(verification, code: code)
            #expect(result.status == .approved && result.tokens["status"] == "PASSWORD_WARN")
        } else {
            let error = await expectGatewayError(.denied) { try await h.provider.check(verification, code: code) }
            #expect(error?.vendor?.code == entry.value)
            #expect(error?.message.contains(entry.value) == true)
        }
    }

    @Test("an ID token signed by another key is never approved; verify_id_token refuses it")
    func badSignature() async throws {
        // The JWKS comes from another emulator, whose key did not sign the tokens.
        let rogue = IDaaSEmulator(context: EmulatorContext(clock: SystemClock(), logger: .quiet))
        let h = try H { inner in
            JWKSFrom(inner: inner, keys: InProcessTransport(emulator: rogue, pathPrefix: H.mount))
        }
        let (verification, code) = try await h.sent()
        let error = await expectGatewayError(.providerError) { try await h.provider.check(verification, code: code) }
        #expect(error?.message.contains("did not verify (no tenant key matches the token)") == true)
        // The same token handed in by a client.
        let good = try H()
        let (v2, c2) = try await good.sent()
        let token = try #require(try await good.provider.check(v2, code: c2).tokens["id_token"]?.stringValue)
        let verified = try await good.provider.perform(action: "verify_id_token", input: ["id_token": .string(token)])
        #expect(verified["valid"] == true)
        #expect(verified["phone_number"] == .string(H.number))
        await expectGatewayError(.invalidToken) {
            try await h.provider.perform(action: "verify_id_token", input: ["id_token": .string(token)])
        }
        var tampered = token.split(separator: ".").map(String.init)
        tampered[1] = Base64URL.encode(Data(#"{"aud":"sandbox-idaas-client-0001","exp":9999999999}"#.utf8))
        let forged = await expectGatewayError(.invalidToken) {
            try await good.provider.perform(
                action: "verify_id_token", input: ["id_token": .string(tampered.joined(separator: "."))])
        }
        #expect(forged?.message.contains("signature does not verify") == true)
        await expectGatewayError(.invalidToken) {
            try await good.provider.perform(action: "verify_id_token", input: ["id_token": "abc"])
        }
        // Expired, and for another audience.
        good.clock.advance(by: TimeInterval(IDaaSEmulator.idTokenLifetime + 120))
        let expired = await expectGatewayError(.invalidToken) {
            try await good.provider.perform(action: "verify_id_token", input: ["id_token": .string(token)])
        }
        #expect(expired?.message.contains("expired") == true)
        let otherAudience = try H(settings: ["client_id": "another-app"], base: good.base)
        good.clock.advance(by: -TimeInterval(IDaaSEmulator.idTokenLifetime + 120))
        let audience = await expectGatewayError(.invalidToken) {
            try await otherAudience.provider.perform(action: "verify_id_token", input: ["id_token": .string(token)])
        }
        #expect(audience?.message.contains("audience") == true)
    }

    @Test("refresh_id_token rotates the session token; the old one is invalid_token")
    func refresh() async throws {
        let h = try H()
        #expect(h.provider.actions.map(\.name) == ["refresh_id_token", "verify_id_token"])
        let (verification, code) = try await h.sent()
        let session = try #require(try await h.provider.check(verification, code: code).tokens["session_token"])
        let refreshed = try await h.provider.perform(action: "refresh_id_token", input: ["session_token": session])
        #expect(refreshed["session_token"] != nil && refreshed["session_token"] != session)
        #expect(refreshed["expire"]?.numberValue == Double(IDaaSEmulator.sessionLifetime))
        #expect(refreshed["id_token"]?.stringValue != nil)
        let old = await expectGatewayError(.invalidToken) {
            try await h.provider.perform(action: "refresh_id_token", input: ["session_token": session])
        }
        #expect(old?.vendor?.code == "IDAAS.SDK.PARAM.0023")
        await expectGatewayError(.invalidRequest) {
            try await h.provider.perform(action: "refresh_id_token", input: [:])
        }
        await expectGatewayError(.notFound) { try await h.provider.perform(action: "nothing", input: [:]) }
    }

    @Test("a resend needs a new slider; the sent code checks meanwhile; solving it sends a new code")
    func resend() async throws {
        let h = try H()
        var (verification, first) = try await h.sent()
        let result = try await h.provider.resend(verification, request: ResendRequest())
        #expect(result.sentNothing)
        guard case .solveChallenge = result.nextAction else {
            Issue.record("expected a slider")
            return
        }
        #expect(h.outbox.messages(to: H.number).count == 1)
        verification.state = result.state
        // The slider is open, and the code already sent still checks (a wrong one is still pending).
        let stillSent = first == "000000" ? "111111" : "000000"
        #expect(try await h.provider.check(verification, code: stillSent).status == .pending)
        let solved = try await h.submit(verification, x: try await h.answer(verification))
        #expect(!solved.sentNothing)
        #expect(h.outbox.messages(to: H.number).count == 2)
        verification.state = solved.state
        let second = try #require(h.outbox.last(to: H.number)?.code)
        if first != second { #expect(try await h.provider.check(verification, code: first).status == .pending) }
        #expect(try await h.provider.check(verification, code: second).status == .approved)
        // The delivered code approves with a resend's slider open.
        let other = try H()
        var (open, code) = try await other.sent()
        open.state = try await other.provider.resend(open, request: ResendRequest()).state
        #expect(try other.state(open).captchaToken != nil)
        #expect(try await other.provider.check(open, code: code).status == .approved)
        await expectGatewayError(.unsupportedChannel) {
            try await h.provider.resend(verification, request: ResendRequest(channel: .voice))
        }
    }

    @Test("5xx, malformed body, timeouts, a wrong client id and missing device headers")
    func failures() async throws {
        let h = try H()
        h.emulator.faults.set(.init(serverErrorStatus: 503))
        let unavailable = await expectGatewayError(.providerUnavailable) {
            try await h.provider.prepare(try H.request())
        }
        #expect(unavailable?.vendor?.httpStatus == 503)
        h.emulator.faults.set(.init(malformedBody: true))
        await expectGatewayError(.providerError) { try await h.provider.prepare(try H.request()) }
        h.emulator.faults.clear()
        // A timeout on the SMS send may have sent it.
        let slow = try H(requestTimeout: .milliseconds(200))
        let (verification, _) = try await slow.prepared()
        let x = try await slow.answer(verification)
        slow.emulator.faults.set(.init(latencyMilliseconds: 400, remaining: 1))
        let timeout = await expectGatewayError(.providerTimeout) { try await slow.submit(verification, x: x) }
        #expect(timeout?.sendMayHaveHappened == false)
        // Only the send is slow: the verify passes, then the send times out.
        let sendSlow = try H(requestTimeout: .milliseconds(200)) { inner in SlowSend(inner: inner) }
        let (v3, _) = try await sendSlow.prepared()
        let sendTimeout = await expectGatewayError(.providerTimeout) {
            try await sendSlow.submit(v3, x: try await sendSlow.answer(v3))
        }
        #expect(sendTimeout?.sendMayHaveHappened == true)
        let wrongClient = try H(settings: ["client_id": "another-app"])
        await expectGatewayError(.providerAuthFailed) { try await wrongClient.provider.prepare(try H.request()) }
        // A tenant that wants the OS under another header name: the device information is incomplete.
        let renamed = try H(settings: ["os_header": "X-os"])
        let incomplete = await expectGatewayError(.invalidRequest) {
            try await renamed.provider.prepare(try H.request())
        }
        #expect(incomplete?.vendor?.code == "IDAAS.SDK.PARAM.0001")
        // An undeliverable number.
        let (undeliverable, _) = try await h.prepared(IDaaSSandbox.undeliverable)
        await expectGatewayError(.deliveryFailed) {
            try await h.submit(undeliverable, x: try await h.answer(undeliverable))
        }
    }

    @Test("settings: every problem at once, paths and formats honoured")
    func settings() async throws {
        let problems = IDaaSPlugin.plugin.problems(
            in: ["base_url": "ftp://x", "mobile_format": "odd", "captcha_path": "api", "language": "fr"],
            providerID: "idaas")
        #expect(problems.count == 5)
        let moved = try H(settings: ["captcha_path": "/api/v2/sdk/other-captcha"])
        await expectGatewayError(.providerRejected) { try await moved.provider.prepare(try H.request()) }
        let e164 = try H(settings: ["mobile_format": "e164"])
        let (verification, _) = try await e164.prepared()
        #expect(try e164.state(verification).mobile == "+8613800138000")
    }
}

/// Rewrites every SMS send to another number.
struct StubRewrite: HTTPTransport {
    let inner: any HTTPTransport

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        var request = request
        if request.url.path().hasSuffix(IDaaSWire.smsSendPath),
            var body = try? SnakeCaseJSON.decoder.decode(IDaaSWire.SMSSendRequest.self, from: request.body)
        {
            body.mobile = "+86-13900139000"
            request.body = (try? SnakeCaseJSON.encoder.encode(body)) ?? request.body
        }
        return try await inner.send(request, timeout: timeout)
    }
}

/// Serves the JWKS from another emulator.
struct JWKSFrom: HTTPTransport {
    let inner: any HTTPTransport
    let keys: any HTTPTransport

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        if request.url.path().hasSuffix(IDaaSWire.jwksPath) { return try await keys.send(request, timeout: timeout) }
        return try await inner.send(request, timeout: timeout)
    }
}

/// Never answers the SMS send in time.
struct SlowSend: HTTPTransport {
    let inner: any HTTPTransport

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        if request.url.path().hasSuffix(IDaaSWire.smsSendPath) { throw .timeout }
        return try await inner.send(request, timeout: timeout)
    }
}

@Suite("IDaaS area codes for the country picker")
struct IDaaSCountryListTests {
    typealias H = IDaaSProviderHarness

    final class Reads: Sendable {
        let count = Mutex(0)
    }

    /// A provider whose tenant answers `json` for the area codes and counts the reads.
    static func tenant(_ json: String, reads: Reads = Reads()) throws -> H {
        try H(transport: { _ in
            StubTransport { _ in
                reads.count.withLock { $0 += 1 }
                return TransportResponse(
                    status: .ok, headerFields: [.contentType: "application/json"], body: Data(json.utf8))
            }
        })
    }

    @Test("the sandbox tenant's list comes back in its order, with names, regexes and CN preferred")
    func sandboxList() async throws {
        let h = try H()
        let list = try #require(try await h.provider.countryList())
        #expect(list.entries.map(\.region) == ["CN", "HK", "MO", "TW", "SG"])
        #expect(list.preferredRegion == "CN")
        #expect(list.entries.filter(\.preferred).map(\.region) == ["CN"])
        let china = try #require(list.entries.first)
        #expect(china.callingCode == 86)
        #expect(china.mobilePattern == #"^(\+86){0,1}\-?1\d{10}$"#)
        #expect(china.mobilePatternInput == "+86-<number>")
        #expect(china.displayName(for: "zh-Hant") == "中國大陸")
        #expect(china.displayName(for: "ZH-cn") == "中国大陆")
        #expect(china.displayName(for: "fr") == nil)
    }

    @Test("an area code preferred by number, a list without a preference, and an entry that is no calling code")
    func tenantVariants() async throws {
        let byAreaCode = try Self.tenant(
            #"""
            {"phoneAreaCodeDefinitions": [
              {"areaCode": "86", "countryCode": "cn", "mobileRegex": "^1\\d{10}$", "displayMapping": {"en": "China"}},
              {"areaCode": "1", "countryCode": "US", "areaCodeSuffixes": ["684"]},
              {"areaCode": "abc", "countryCode": "XX"}],
             "preferredAreaCode": "1"}
            """#)
        let list = try #require(try await byAreaCode.provider.countryList())
        #expect(list.entries.map(\.region) == ["CN", "US"])
        #expect(list.preferredRegion == "US")
        #expect(list.entries.last?.callingCodeSuffixes == ["684"])
        #expect(list.entries.last?.mobilePattern == nil)

        let none = try Self.tenant(#"{"phoneAreaCodeDefinitions": [{"areaCode": "65", "countryCode": "SG"}]}"#)
        let plain = try #require(try await none.provider.countryList())
        #expect(plain.preferredRegion == nil)
        #expect(plain.entries.map(\.preferred) == [false])
    }

    @Test("the list is the cached one: read once within area_codes_cache_seconds")
    func cached() async throws {
        let reads = Reads()
        let h = try Self.tenant(
            #"{"phoneAreaCodeDefinitions": [{"areaCode": "65", "countryCode": "SG"}]}"#, reads: reads)
        _ = try await h.provider.countryList()
        _ = try await h.provider.countryList()
        #expect(reads.count.withLock { $0 } == 1)
        h.clock.advance(by: 3601)
        _ = try await h.provider.countryList()
        #expect(reads.count.withLock { $0 } == 2)
    }
}
