import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayFirebase

@Suite("Firebase provider against the emulator")
struct FirebaseProviderTests {
    // MARK: happy path

    @Test("a start sends a code and keeps sessionInfo in the state, never as the reference")
    func startKeepsSessionInState() async throws {
        let h = try FirebaseHarness()
        let result = try await h.start()

        let sessionInfo = try #require(result.state["session_info"])
        #expect(sessionInfo.count == FirebaseEmulator.sessionInfoLength)
        #expect(result.state["sent_at"] == String(h.clock.now.timeIntervalSince1970))
        #expect(result.reference != sessionInfo)
        #expect(result.reference?.hasPrefix("sha256:") == true)
        #expect(result.status == .pending)
        #expect(result.channel == .sms)
        #expect(result.sentNothing == false)
        let messages = h.outbox.all
        #expect(messages.count == 1)
        #expect(messages.first?.provider == "firebase")
        #expect(messages.first?.channel == "sms")
        #expect(messages.first?.to == FirebaseHarness.number)
    }

    @Test("the code from the outbox approves, with Firebase's tokens, and the spent session leaves the state")
    func happyPath() async throws {
        let h = try FirebaseHarness()
        let result = try await h.start()
        let check = try await h.provider.check(FirebaseHarness.verification(result), code: try h.code())

        #expect(check.status == .approved)
        #expect(check.tokens["idToken"]?.stringValue?.split(separator: ".").count == 3)
        #expect(check.tokens["refreshToken"]?.stringValue?.isEmpty == false)
        #expect(check.tokens["localId"]?.stringValue?.count == 28)
        #expect(check.tokens["isNewUser"] == "true")
        #expect(check.tokens["expiresIn"] == "3600")
        #expect(check.state?["session_info"] == nil)
        #expect(check.state?["sent_at"] == result.state["sent_at"])
    }

    @Test("the code from the Auth Emulator's verificationCodes endpoint approves too")
    func codeFromVerificationCodesEndpoint() async throws {
        let h = try FirebaseHarness()
        let result = try await h.start()
        let response = try #require(await h.raw(.get, FirebaseHarness.codesPath, query: nil))
        let listing = try JSONDecoder().decode(FirebaseWire.VerificationCodesResponse.self, from: response.body)
        let entry = try #require(listing.verificationCodes.first { $0.sessionInfo == result.state["session_info"] })
        #expect(entry.phoneNumber == FirebaseHarness.number)

        let check = try await h.provider.check(FirebaseHarness.verification(result), code: entry.code)
        #expect(check.status == .approved)
    }

    @Test("the same phone signs in as the same user; isNewUser is true only the first time")
    func sameUserTwice() async throws {
        let h = try FirebaseHarness()
        let first = try await h.start()
        let firstCheck = try await h.provider.check(FirebaseHarness.verification(first), code: try h.code())
        let second = try await h.start()
        let secondCheck = try await h.provider.check(FirebaseHarness.verification(second), code: try h.code())

        #expect(firstCheck.tokens["isNewUser"] == "true")
        #expect(secondCheck.tokens["isNewUser"] == "false")
        #expect(firstCheck.tokens["localId"] == secondCheck.tokens["localId"])
    }

    // MARK: the request on the wire

    struct ProofCase: Sendable, CustomTestStringConvertible {
        var proof: AppVerificationProof
        var fields: [String: String]
        var testDescription: String { proof.kind.rawValue }
    }

    static let proofCases: [ProofCase] = [
        ProofCase(
            proof: AppVerificationProof(kind: .recaptcha, token: "rc-token"), fields: ["recaptchaToken": "rc-token"]),
        ProofCase(
            proof: AppVerificationProof(kind: .recaptchaEnterprise, token: "ent-token"),
            fields: [
                "captchaResponse": "ent-token", "clientType": "CLIENT_TYPE_WEB",
                "recaptchaVersion": "RECAPTCHA_ENTERPRISE",
            ]),
        ProofCase(
            proof: AppVerificationProof(kind: .iosReceipt, token: "receipt", secret: "secret"),
            fields: ["iosReceipt": "receipt", "iosSecret": "secret"]),
        ProofCase(
            proof: AppVerificationProof(kind: .playIntegrity, token: "pi-token"),
            fields: ["playIntegrityToken": "pi-token"]),
    ]

    @Test(
        "a reCAPTCHA Enterprise proof carries the client type of the app's platform, web when none is named",
        arguments: [
            (ClientContext.Platform?.none, "CLIENT_TYPE_WEB"), (.web, "CLIENT_TYPE_WEB"), (.ios, "CLIENT_TYPE_IOS"),
            (.android, "CLIENT_TYPE_ANDROID"),
        ])
    func clientType(platform: ClientContext.Platform?, clientType: String) async throws {
        let h = try FirebaseHarness()
        var request = try FirebaseHarness.sms(proof: AppVerificationProof(kind: .recaptchaEnterprise, token: "ent"))
        request.clientContext = ClientContext(platform: platform)
        _ = try await h.provider.start(request)
        let body = try jsonObject(try #require(h.transport.requests.first).body)
        #expect(body["clientType"] as? String == clientType)
        #expect(FirebaseWire.clientTypes.contains(clientType))
    }

    @Test("each proof kind goes in its Identity Toolkit field, with the key in the query", arguments: proofCases)
    func proofOnTheWire(_ proofCase: ProofCase) async throws {
        let h = try FirebaseHarness(settings: ["ios_bundle_id": "com.example.app"])
        let result = try await h.start(proof: proofCase.proof)
        #expect(result.state["session_info"] != nil)

        let request = try #require(h.transport.requests.first)
        #expect(request.method == .post)
        #expect(
            request.url.path(percentEncoded: false)
                == "/sandbox/firebase/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode")
        #expect(request.url.query(percentEncoded: false) == "key=\(FirebaseSandbox.apiKey)")
        #expect(request.headerFields[.contentType] == "application/json")
        let body = try jsonObject(request.body)
        var expected: [String: String] = proofCase.fields
        expected["phoneNumber"] = FirebaseHarness.number
        #expect(body.mapValues { "\($0)" } == expected)
        let bundle = try #require(HTTPField.Name("X-Ios-Bundle-Identifier"))
        #expect(request.headerFields[bundle] == (proofCase.proof.kind == .iosReceipt ? "com.example.app" : nil))
    }

    @Test("the first locale's language goes in X-Firebase-Locale and is reported as the content language")
    func localeHeader() async throws {
        let h = try FirebaseHarness()
        let result = try await h.start(locales: ["es-ES", "en-US"])

        let name = try #require(HTTPField.Name("X-Firebase-Locale"))
        #expect(h.transport.requests.first?.headerFields[name] == "es")
        #expect(result.contentLanguage == "es")
        #expect(h.outbox.all.first?.text.contains("código de verificación") == true)
    }

    @Test("without locales no X-Firebase-Locale is sent and no content language is claimed")
    func noLocale() async throws {
        let h = try FirebaseHarness()
        let result = try await h.start()
        let name = try #require(HTTPField.Name("X-Firebase-Locale"))
        #expect(h.transport.requests.first?.headerFields[name] == nil)
        #expect(result.contentLanguage == nil)
    }

    @Test(
        "the language is the first usable preference's language subtag",
        arguments: [
            (["pt_BR"], "pt"), (["zh-Hant-TW", "en"], "zh"), (["*", "fr-CA"], "fr"), (["", "DE"], "de"),
            (["1234"], nil), ([], nil),
        ] as [([String], String?)])
    func languageChoice(_ preferences: [String], _ expected: String?) {
        #expect(FirebaseWire.language(from: preferences) == expected)
    }

    // MARK: checks

    @Test("a wrong code is pending, not final, and the right code still approves after it")
    func wrongCodeIsPending() async throws {
        let h = try FirebaseHarness()
        let verification = try FirebaseHarness.verification(try await h.start())
        let code = try h.code()
        let wrong = code == "000000" ? "111111" : "000000"

        #expect(try await h.provider.check(verification, code: wrong).status == .pending)
        #expect(try await h.provider.check(verification, code: code).status == .approved)
    }

    @Test("a code checked after the emulator's 5-minute lifetime is expired")
    func expiredCode() async throws {
        let h = try FirebaseHarness()
        let verification = try FirebaseHarness.verification(try await h.start())
        h.clock.advance(by: FirebaseEmulator.defaultCodeLifetime + 1)

        let error = await expectGatewayError(.expired) { try await h.provider.check(verification, code: try h.code()) }
        #expect(error?.vendor?.code == "SESSION_EXPIRED")
        #expect(error?.vendor?.httpStatus == 400)
    }

    @Test("after 5 wrong codes the session answers TOO_MANY_ATTEMPTS_TRY_LATER, read as rate_limited")
    func tooManyAttempts() async throws {
        let h = try FirebaseHarness()
        let verification = try FirebaseHarness.verification(try await h.start())
        let code = try h.code()
        let wrong = code == "000000" ? "111111" : "000000"
        for _ in 0..<FirebaseEmulator.defaultMaxWrongCodes {
            #expect(try await h.provider.check(verification, code: wrong).status == .pending)
        }

        let error = await expectGatewayError(.rateLimited) { try await h.provider.check(verification, code: code) }
        #expect(error?.vendor?.code == "TOO_MANY_ATTEMPTS_TRY_LATER")
        #expect(error?.message.contains("unsuccessful") == false, "Google's detail text never reaches the caller")
    }

    @Test("a sessionInfo already used is expired")
    func usedSession() async throws {
        let h = try FirebaseHarness()
        let verification = try FirebaseHarness.verification(try await h.start())
        let code = try h.code()
        #expect(try await h.provider.check(verification, code: code).status == .approved)

        let error = await expectGatewayError(.expired) { try await h.provider.check(verification, code: code) }
        #expect(error?.vendor?.code == "INVALID_SESSION_INFO")
    }

    @Test("a check without a code is invalid_request and calls nothing")
    func checkWithoutCode() async throws {
        let h = try FirebaseHarness()
        let verification = try FirebaseHarness.verification(try await h.start())
        let before = h.transport.requests.count
        for code in [""] {
            await expectGatewayError(.invalidRequest) { try await h.provider.check(verification, code: code) }
        }
        #expect(h.transport.requests.count == before)
    }

    @Test("a state without sessionInfo is an internal error, not a call with an empty session")
    func stateWithoutSession() async throws {
        let h = try FirebaseHarness()
        let verification = ProviderVerification(
            destination: .phone(try PhoneNumber(parsing: FirebaseHarness.number)), channel: .sms, reference: nil,
            state: [:])
        await expectGatewayError(.internal) { try await h.provider.check(verification, code: "123456") }
        #expect(h.transport.requests.isEmpty)
    }

    @Test("a temporary proof instead of tokens (phone linked elsewhere) approves with the proof")
    func temporaryProof() async throws {
        let body = #"{"temporaryProof":"tp-1","temporaryProofExpiresIn":"3600","phoneNumber":"+16505553434"}"#
        let h = try FirebaseHarness(transport: StubTransport.json(body))
        let verification = ProviderVerification(
            destination: .phone(try PhoneNumber(parsing: FirebaseHarness.number)), channel: .sms, reference: nil,
            state: ["session_info": "opaque"])
        let check = try await h.provider.check(verification, code: "123456")
        #expect(check.status == .approved)
        #expect(
            check.tokens == [
                "temporaryProof": "tp-1", "temporaryProofExpiresIn": "3600", "phoneNumber": "+16505553434",
            ])
    }

    @Test("an absent isNewUser (proto3 JSON omits false) reads as false; a numeric expiresIn is accepted")
    func absentIsNewUser() async throws {
        let body = #"{"idToken":"a.b.c","refreshToken":"r","expiresIn":3600,"localId":"uid"}"#
        let h = try FirebaseHarness(transport: StubTransport.json(body))
        let verification = ProviderVerification(
            destination: .phone(try PhoneNumber(parsing: FirebaseHarness.number)), channel: .sms, reference: nil,
            state: ["session_info": "opaque"])
        let check = try await h.provider.check(verification, code: "123456")
        #expect(
            check.tokens == [
                "idToken": "a.b.c", "refreshToken": "r", "expiresIn": "3600", "localId": "uid", "isNewUser": "false",
            ])
    }

    // MARK: app verification

    @Test("a start without a proof is refused before Firebase is called")
    func missingProofRefusedLocally() async throws {
        let h = try FirebaseHarness()
        await expectGatewayError(.appVerificationRequired) { try await h.start(proof: nil) }
        #expect(h.transport.requests.isEmpty)
        #expect(h.provider.requiresAppVerification(for: try FirebaseHarness.sms(proof: nil)))
    }

    @Test("the emulator's answer to a send without a proof is MISSING_CLIENT_IDENTIFIER: app_verification_required")
    func missingProofAtTheVendor() async throws {
        let h = try FirebaseHarness()
        let response = await h.raw(.post, FirebaseHarness.sendPath, json: #"{"phoneNumber":"+16505553434"}"#)
        #expect(response?.status == .badRequest)
        let refusal = try envelope(response)
        #expect(refusal.error.message == "MISSING_CLIENT_IDENTIFIER")
        let mapped = FirebaseErrorMapping.map(
            envelope: refusal, httpStatus: 400, retryAfter: nil, providerID: "firebase")
        #expect(mapped.code == .appVerificationRequired)
        #expect(h.outbox.all.isEmpty)
    }

    @Test(
        "proofs the provider cannot send are refused locally",
        arguments: [
            AppVerificationProof(kind: .captcha, token: "slider"),
            AppVerificationProof(kind: .iosReceipt, token: "receipt"),
            AppVerificationProof(kind: .recaptcha, token: ""),
        ])
    func unusableProofs(_ proof: AppVerificationProof) async throws {
        let h = try FirebaseHarness()
        await expectGatewayError(.appVerificationRequired) { try await h.start(proof: proof) }
        #expect(h.transport.requests.isEmpty)
    }

    @Test(
        "the rejected token `invalid` is app_verification_failed and sends nothing",
        arguments: [
            (AppVerificationProof.Kind.recaptcha, "CAPTCHA_CHECK_FAILED"),
            (.recaptchaEnterprise, "CAPTCHA_CHECK_FAILED"),
            (.playIntegrity, "INVALID_APP_CREDENTIAL"),
            (.iosReceipt, "INVALID_APP_CREDENTIAL"),
        ])
    func rejectedProof(_ kind: AppVerificationProof.Kind, _ vendorCode: String) async throws {
        let h = try FirebaseHarness()
        let proof = AppVerificationProof(kind: kind, token: FirebaseSandbox.rejectedProofToken, secret: "secret")
        let error = await expectGatewayError(.appVerificationFailed) { try await h.start(proof: proof) }
        #expect(error?.vendor?.code == vendorCode)
        #expect(error?.sendMayHaveHappened == false)
        #expect(h.outbox.all.isEmpty)
    }

    // MARK: resend

    @Test("a resend within the wait sends nothing and keeps the same sessionInfo")
    func reentrantResend() async throws {
        let h = try FirebaseHarness()
        let started = try await h.start()
        let calls = h.transport.requests.count
        h.clock.advance(by: 59)

        let resent = try await h.provider.resend(FirebaseHarness.verification(started), request: ResendRequest())
        #expect(resent.state == started.state)
        #expect(resent.reference == started.reference)
        #expect(resent.sentNothing)
        #expect(h.outbox.all.count == 1)
        #expect(h.transport.requests.count == calls)
        let check = try await h.provider.check(FirebaseHarness.verification(resent), code: try h.code())
        #expect(check.status == .approved, "the first code is still the one to type")
    }

    @Test("a resend after the wait without a proof asks for one and calls nothing")
    func resendAfterWait() async throws {
        let h = try FirebaseHarness()
        let started = try await h.start()
        let calls = h.transport.requests.count
        h.clock.advance(by: 60)

        let error = await expectGatewayError(.appVerificationRequired) {
            try await h.provider.resend(FirebaseHarness.verification(started), request: ResendRequest())
        }
        #expect(error?.message.contains("send `app_verification` with the resend") == true)
        #expect(h.transport.requests.count == calls)
        #expect(h.outbox.all.count == 1)
    }

    @Test("a resend after the wait with a fresh proof sends a new code and replaces the sessionInfo")
    func resendAfterWaitWithProof() async throws {
        let h = try FirebaseHarness()
        let started = try await h.start()
        h.clock.advance(by: 60)

        let resent = try await h.provider.resend(
            FirebaseHarness.verification(started),
            request: ResendRequest(appVerification: AppVerificationProof(kind: .recaptcha, token: "fresh-token")))
        #expect(!resent.sentNothing)
        #expect(resent.reference != started.reference)
        #expect(resent.state["session_info"] != started.state["session_info"])
        #expect(h.outbox.all.count == 2)
        let secondCode = try h.code()
        let check = try await h.provider.check(FirebaseHarness.verification(resent), code: secondCode)
        #expect(check.status == .approved)
    }

    @Test("resend_after_seconds sets the wait; 0 means every resend needs a new proof")
    func configuredWait() async throws {
        let h = try FirebaseHarness(settings: ["resend_after_seconds": "0"])
        let started = try await h.start()
        await expectGatewayError(.appVerificationRequired) {
            try await h.provider.resend(FirebaseHarness.verification(started), request: ResendRequest())
        }

        let patient = try FirebaseHarness(settings: ["resend_after_seconds": "300"])
        let kept = try await patient.start()
        patient.clock.advance(by: 299)
        #expect(
            try await patient.provider.resend(FirebaseHarness.verification(kept), request: ResendRequest()).sentNothing)
    }

    @Test("a resend over another channel is unsupported_channel")
    func resendOtherChannel() async throws {
        let h = try FirebaseHarness()
        let started = try await h.start()
        await expectGatewayError(.unsupportedChannel) {
            try await h.provider.resend(FirebaseHarness.verification(started), request: ResendRequest(channel: .voice))
        }
    }

    // MARK: quota and vendor failures

    @Test("the per-number quota answers QUOTA_EXCEEDED: provider_rate_limited, safe to fail over")
    func quota() async throws {
        let h = try FirebaseHarness(maxSendsPerNumberPerHour: 2)
        _ = try await h.start()
        _ = try await h.start()

        let error = await expectGatewayError(.providerRateLimited) { try await h.start() }
        #expect(error?.vendor?.code == "QUOTA_EXCEEDED")
        #expect(error?.sendMayHaveHappened == false)
        #expect(h.outbox.all.count == 2)
        _ = try await h.start("+16505553435")
        h.clock.advance(by: 3601)
        _ = try await h.start()
        #expect(h.outbox.all.count == 4)
    }

    @Test("a 5xx in Google's envelope is provider_unavailable", arguments: [500, 502, 503, 504])
    func serverErrors(_ status: Int) async throws {
        let h = try FirebaseHarness()
        h.emulator.faults.set(FaultSwitch.Faults(serverErrorStatus: status))
        let error = await expectGatewayError(.providerUnavailable) { try await h.start() }
        #expect(error?.vendor?.httpStatus == status)
        #expect(error?.sendMayHaveHappened == false)
        #expect(h.outbox.all.isEmpty)
    }

    @Test("a 2xx with a body that is not Identity Toolkit's JSON is provider_error; after a send it may have happened")
    func malformedBody() async throws {
        let h = try FirebaseHarness()
        h.emulator.faults.set(FaultSwitch.Faults(malformedBody: true, remaining: 1))
        let startError = await expectGatewayError(.providerError) { try await h.start() }
        #expect(startError?.sendMayHaveHappened == true)

        let verification = try FirebaseHarness.verification(try await h.start())
        h.emulator.faults.set(FaultSwitch.Faults(malformedBody: true, remaining: 1))
        await expectGatewayError(.providerError) { try await h.provider.check(verification, code: try h.code()) }
    }

    /// Timeouts and resets are the conformance suite's (`transportFailuresMapToProviderErrors`).
    @Test("a refused connection is provider_unavailable that did not send")
    func connectionRefused() async throws {
        let refused = try FirebaseHarness(
            transport: StubTransport { _ throws(TransportError) in
                throw .connectFailed("connection refused")
            })
        let error = await expectGatewayError(.providerUnavailable) { try await refused.start() }
        #expect(error?.sendMayHaveHappened == false)
    }

    @Test("a wrong API key is provider_auth_failed, read from Google's keyInvalid reason")
    func wrongAPIKey() async throws {
        let h = try FirebaseHarness(settings: ["api_key": "AIzaSyD-not-the-sandbox-key-00000000000"])
        let error = await expectGatewayError(.providerAuthFailed) { try await h.start() }
        #expect(error?.vendor?.code == "keyInvalid")
        #expect(error?.vendor?.httpStatus == 400)
    }
}
