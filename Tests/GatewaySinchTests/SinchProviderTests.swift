import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewaySinch

@Suite("Sinch provider against its emulator")
struct SinchProviderTests {
    @Test("an SMS start is signed, carries the reference and languages, and the right code approves")
    func sms() async throws {
        let harness = try SinchHarness()
        let (verification, result, message) = try await harness.start(.sms, locales: ["es-MX", "sv"])
        let sent = try #require(harness.recorder.requests.first)
        #expect(sent.method == .post && sent.url.path() == SinchSandbox.mountPath + "/verification/v1/verifications")
        let auth = try #require(sent.headerFields[.authorization])
        #expect(auth.hasPrefix("Application " + SinchSandbox.applicationKey + ":"))
        #expect(sent.headerFields[SinchSigning.timestampHeader] == "2027-01-15T08:00:00Z")
        #expect(sent.headerFields[.acceptLanguage] == "es-MX, sv;q=0.9")
        let body = json(sent.body)
        #expect(body["method"] as? String == "sms")
        #expect(body["reference"] as? String == "vf_0123456789abcdef")
        #expect((body["identity"] as? [String: Any])?["endpoint"] as? String == SinchHarness.phone)
        // Sweden has no Spanish template: the emulator negotiates Swedish, and the provider reports it.
        #expect(result.contentLanguage == "sv-SE")
        #expect(result.reference?.count == 19 && result.channel == .sms && result.nextAction == nil)
        let code = try #require(message?.code)
        #expect(
            message?.kind == .sms && message?.language == "sv-SE" && message?.text.contains("verifieringskod") == true)
        let wrong = try await harness.provider.check(verification, code: SinchHarness.wrong(code))
        #expect(wrong.status == .pending)
        let right = try await harness.provider.check(verification, code: code)
        #expect(right.status == .approved)
        let report = try #require(harness.recorder.requests.last)
        #expect(report.method == .put && report.url.path().hasSuffix("/verifications/id/" + (result.reference ?? "")))
        #expect((json(report.body)["sms"] as? [String: Any])?["code"] as? String == code)
        // The emulator reported the approval with a signed result event, which the provider read.
        let event = try #require(harness.gateway.deliveries.last)
        #expect(event.status == .ok)
        #expect(event.updates.first?.target == .reference(result.reference ?? ""))
        #expect(event.updates.first?.change.status == .approved)
    }

    @Test("a US number gets en-US whatever it asks for: Content-Language can differ from the request")
    func languageOverride() async throws {
        let harness = try SinchHarness()
        let (_, result, message) = try await harness.start(.sms, to: "+14155550100", locales: ["es-US", "es"])
        #expect(result.contentLanguage == "en-US")
        #expect(message?.language == "en-US")
        let spain = try await harness.start(.sms, to: "+34612345678", locales: ["es"], id: "vf_spain")
        #expect(spain.result.contentLanguage == "es-ES")
    }

    @Test("a flash call answers intercept_call with Sinch's CLI filter, and the check reports the caller as cli")
    func flashCall() async throws {
        let harness = try SinchHarness(settings: ["flash_call_interception_timeout": "30"])
        let (verification, result, message) = try await harness.start(.flashcall)
        #expect(
            json(try #require(harness.recorder.requests.first).body)["flashCallOptions"] as? [String: Int]
                == ["interceptionTimeout": 30])
        guard case .interceptCall(let call) = result.nextAction else {
            Issue.record("expected intercept_call, got \(String(describing: result.nextAction))")
            return
        }
        let cli = try #require(message?.code)
        #expect(message?.kind == .flashCall)
        #expect(call.timeoutSeconds == 30)
        #expect(try Regex(call.callerPattern).wholeMatch(in: cli) != nil)
        #expect(result.expiresAt == harness.clock.now.addingTimeInterval(120))
        #expect(try await harness.provider.check(verification, code: "+46109999999").status == .pending)
        #expect(try await harness.provider.check(verification, code: cli).status == .approved)
        let report = json(try #require(harness.recorder.requests.last).body)
        #expect(report["method"] as? String == "flashcall")
        #expect((report["flashCall"] as? [String: Any])?["cli"] as? String == cli)
        await expectGatewayError(.invalidRequest) { try await harness.provider.check(verification, code: "12ab") }
    }

    @Test("a callout speaks the code and the check reports it as callout.code", arguments: [Channel.voice, .whatsapp])
    func codeChannels(_ channel: Channel) async throws {
        let harness = try SinchHarness()
        let (verification, _, message) = try await harness.start(channel)
        #expect(message?.kind == (channel == .voice ? .voice : .whatsapp))
        let method = channel == .voice ? "callout" : "whatsapp"
        #expect(json(try #require(harness.recorder.requests.first).body)["method"] as? String == method)
        let code = try #require(message?.code)
        #expect(try await harness.provider.check(verification, code: code).status == .approved)
        #expect(
            (json(try #require(harness.recorder.requests.last).body)[method] as? [String: Any])?["code"] as? String
                == code)
    }

    @Test("seamless answers open_url over cellular, refuses a check, and completes when the URL is fetched")
    func seamless() async throws {
        let harness = try SinchHarness()
        let (verification, result, message) = try await harness.start(.silentAuth)
        guard case .openURL(let opening) = result.nextAction else {
            Issue.record("expected open_url")
            return
        }
        #expect(opening.cellularOnly)
        #expect(message?.kind == .silentAuth && message?.code == nil)
        await expectGatewayError(.invalidState) { try await harness.provider.check(verification, code: "1234") }
        #expect(try await harness.provider.status(verification).status == nil)
        // The device opens the URL: here, straight at the emulator, under its mount.
        let url = try #require(URL(string: opening.url))
        #expect(url.path().hasPrefix(SinchSandbox.mountPath + "/seamless/"))
        let path = String(url.path().dropFirst(SinchSandbox.mountPath.count))
        let answer = await harness.emulator.handle(
            EmulatorRequest(method: .get, path: path, query: nil, headerFields: [:], body: Data()))
        guard case .response(let response) = answer else {
            Issue.record("no answer")
            return
        }
        #expect(response.status == .ok)
        #expect(harness.gateway.deliveries.last?.updates.first?.change.status == .approved)
        let change = try await harness.provider.status(verification)
        #expect(change.status == .approved && change.nextAction == .clear)
        // A wrong token is not the verification's.
        let forged = await harness.emulator.handle(
            EmulatorRequest(method: .get, path: path.dropLast(4) + "0000", query: nil, headerFields: [:], body: Data()))
        if case .response(let refused) = forged { #expect(refused.status == .notFound) }
    }

    @Test("a code past its time reports FAIL/Expired, which is expired")
    func expired() async throws {
        let harness = try SinchHarness(settings: ["sms_expiry_seconds": "300"])
        let (verification, result, message) = try await harness.start()
        #expect(
            json(try #require(harness.recorder.requests.first).body)["smsOptions"] as? [String: String]
                == ["expiry": "00:05:00"])
        #expect(result.expiresAt == harness.clock.now.addingTimeInterval(300))
        harness.clock.advance(by: 301)
        let code = try #require(message?.code)
        #expect(try await harness.provider.check(verification, code: code).status == .expired)
        let change = try await harness.provider.status(verification)
        #expect(change.status == .expired && change.reason == "FAIL: Expired")
    }

    @Test("Sinch's fraud engine denies: the report says DENIED/Fraud, which blocks the verification")
    func denied() async throws {
        let harness = try SinchHarness()
        let (verification, _, message) = try await harness.start(.sms, to: SinchSandbox.fraudNumber)
        #expect(message == nil)
        #expect(try await harness.provider.check(verification, code: "1234").status == .blocked)
        let change = try await harness.provider.status(verification)
        #expect(change.status == .blocked && change.reason == "DENIED: Fraud")
        #expect(harness.gateway.deliveries.last?.updates.first?.change.status == .blocked)
    }

    @Test("a resend starts a new Sinch verification with a new reference; Sinch aborts the old one")
    func resend() async throws {
        let harness = try SinchHarness()
        let (first, _, message) = try await harness.start()
        let resent = try await harness.provider.resend(first, request: ResendRequest(channel: .voice))
        #expect(resent.reference != first.reference && resent.channel == .voice)
        #expect(
            json(try #require(harness.recorder.requests.last).body)["reference"] as? String == "vf_0123456789abcdef-2")
        #expect(try resent.state.decode(SinchProvider.State.self).starts == 2)
        // The old code is gone with its verification.
        let old = try await harness.provider.status(first)
        #expect(old.status == .canceled && old.reason == "ABORTED")
        #expect(try await harness.provider.check(first, code: try #require(message?.code)).status == .canceled)
        var second = first
        second.reference = resent.reference
        second.state = resent.state
        second.channel = .voice
        let code = try #require(harness.outbox.last(to: SinchHarness.phone)?.code)
        #expect(try await harness.provider.check(second, code: code).status == .approved)
        // A third start uses -3.
        _ = try await harness.provider.resend(second, request: ResendRequest())
        #expect(
            json(try #require(harness.recorder.requests.last).body)["reference"] as? String == "vf_0123456789abcdef-3")
    }

    @Test("status by reference (the gateway id) and by identity, as vendor actions and as the refresh fallback")
    func statusLookups() async throws {
        let harness = try SinchHarness()
        let (verification, result, message) = try await harness.start()
        let byReference = try await harness.provider.perform(
            action: "status_by_reference", input: ["reference": .string("vf_0123456789abcdef")])
        #expect(byReference["id"] == .string(result.reference ?? "") && byReference["status"] == .string("PENDING"))
        #expect(
            harness.recorder.requests.last?.url.path().hasSuffix("/verifications/reference/vf_0123456789abcdef") == true
        )
        _ = try await harness.provider.check(verification, code: try #require(message?.code))
        let byIdentity = try await harness.provider.perform(
            action: "status_by_identity", input: ["number": .string(SinchHarness.phone)])
        #expect(byIdentity["status"] == .string("SUCCESSFUL") && byIdentity["gateway_status"] == .string("approved"))
        #expect(harness.recorder.requests.last?.url.path().hasSuffix("/verifications/sms/number/+46701234567") == true)
        var unknownID = verification
        unknownID.reference = nil
        #expect(try await harness.provider.status(unknownID).status == .approved)
        #expect(harness.recorder.requests.last?.url.path().contains("/reference/") == true)
        await expectGatewayError(.notFound) {
            try await harness.provider.perform(action: "status_by_reference", input: ["reference": .string("vf_other")])
        }
        await expectGatewayError(.invalidRequest) {
            try await harness.provider.perform(action: "status_by_id", input: ["id": .string("../x")])
        }
    }

    @Test("Basic authentication is an option, and the emulator takes it")
    func basic() async throws {
        let harness = try SinchHarness(settings: ["auth": "basic"])
        let (verification, _, message) = try await harness.start()
        let sent = try #require(harness.recorder.requests.first)
        #expect(sent.headerFields[.authorization]?.hasPrefix("Basic ") == true)
        #expect(sent.headerFields[SinchSigning.timestampHeader] == nil)
        #expect(try await harness.provider.check(verification, code: try #require(message?.code)).status == .approved)
    }

    @Test("channels Sinch lacks are refused before any call")
    func unsupported() async throws {
        let harness = try SinchHarness()
        await expectGatewayError(.unsupportedChannel) {
            try await harness.provider.start(
                StartVerification(destination: .email("a@example.com"), channel: .email))
        }
        #expect(harness.recorder.requests.isEmpty)
    }
}
