import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayFirebase

/// Email and password users and their phone second factors, straight on the emulator.
extension FirebaseHarness {
    static let signUpPath = "/identitytoolkit.googleapis.com/v1/accounts:signUp"
    static let passwordPath = "/identitytoolkit.googleapis.com/v1/accounts:signInWithPassword"
    static let mfaSignInStartPath = "/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start"
    static let mfaSignInFinalizePath = "/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize"
    static let enrollStartPath = "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:start"
    static let enrollFinalizePath = "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:finalize"
    static let password = "correct horse battery"

    /// An admin sign-up (the Auth Emulator's `Bearer owner`): a user with its email verified and `phones`
    /// enrolled as second factors.
    func admitUser(_ email: String, phones: [String] = [], verified: Bool = true) async throws {
        let factors = phones.map { #"{"phoneInfo": "\#($0)", "displayName": "phone \#($0.suffix(2))"}"# }
        let body = #"""
            {"email": "\#(email)", "password": "\#(Self.password)", "emailVerified": \#(verified),
             "mfaInfo": [\#(factors.joined(separator: ","))]}
            """#
        let response = try #require(
            await raw(.post, Self.signUpPath, query: nil, json: body, headers: [.authorization: "Bearer owner"]))
        #expect(response.status == .ok, "\(String(decoding: response.body, as: UTF8.self))")
    }

    /// The first factor: `accounts:signInWithPassword`'s answer.
    func passwordSignIn(_ email: String) async throws -> [String: Any] {
        let response = try #require(
            await raw(.post, Self.passwordPath, json: #"{"email": "\#(email)", "password": "\#(Self.password)"}"#))
        #expect(response.status == .ok)
        return try jsonObject(response.body)
    }

    /// The pending credential and the first factor's enrollment id of a user with second factors.
    func pendingSignIn(_ email: String) async throws -> (credential: String, enrollmentID: String) {
        let answer = try await passwordSignIn(email)
        let credential = try #require(answer["mfaPendingCredential"] as? String)
        let factors = try #require(answer["mfaInfo"] as? [[String: Any]])
        return (credential, try #require(factors.first?["mfaEnrollmentId"] as? String))
    }

    /// The ID token of a user without second factors.
    func idToken(_ email: String) async throws -> String {
        try #require(try await passwordSignIn(email)["idToken"] as? String)
    }

    static func multiFactorStart(
        _ number: String, _ step: MultiFactor, proof: AppVerificationProof? = .recaptcha
    ) throws -> StartVerification {
        var request = try sms(number, proof: proof)
        request.multiFactor = step
        return request
    }
}

/// The claims of a JWT, unverified (the tests read what the emulator put in its tokens).
func claims(of token: String) throws -> [String: Any] {
    let parts = token.split(separator: ".")
    try #require(parts.count == 3)
    return try jsonObject(try #require(Base64URL.decode(parts[1])))
}

@Suite("Firebase multi-factor sign-in and enrollment")
struct FirebaseMultiFactorTests {
    static let phone = "+447400123401"

    // MARK: the emulator

    @Test("a user with a second factor gets a pending credential and its factors, the numbers obfuscated")
    func firstFactor() async throws {
        let h = try FirebaseHarness()
        try await h.admitUser("mfa@example.com", phones: [Self.phone])
        let answer = try await h.passwordSignIn("mfa@example.com")
        #expect(answer["idToken"] == nil)
        #expect((answer["mfaPendingCredential"] as? String)?.isEmpty == false)
        let factors = try #require(answer["mfaInfo"] as? [[String: Any]])
        #expect(factors.count == 1)
        #expect(factors.first?["phoneInfo"] as? String == "+********3401")
        #expect((factors.first?["mfaEnrollmentId"] as? String)?.count == 28)

        try await h.admitUser("plain@example.com")
        let plain = try await h.passwordSignIn("plain@example.com")
        #expect(plain["mfaPendingCredential"] == nil)
        #expect((plain["idToken"] as? String)?.split(separator: ".").count == 3)

        let wrong = try envelope(
            await h.raw(
                .post, FirebaseHarness.passwordPath, json: #"{"email": "mfa@example.com", "password": "nope!!"}"#))
        #expect(wrong.error.message == "INVALID_LOGIN_CREDENTIALS")
        // Only the admin credential may verify an email or enroll factors at sign-up.
        let client = try envelope(
            await h.raw(
                .post, FirebaseHarness.signUpPath,
                json: #"{"email": "x@example.com", "password": "secret1", "emailVerified": true}"#))
        #expect(client.error.message == "INSUFFICIENT_PERMISSION")
    }

    @Test("mfaSignIn:start answers the Auth Emulator's strings for what it lacks or does not know")
    func signInStartRefusals() async throws {
        let h = try FirebaseHarness()
        try await h.admitUser("mfa@example.com", phones: [Self.phone])
        let (credential, enrollment) = try await h.pendingSignIn("mfa@example.com")
        let cases: [(String, String)] = [
            (
                #"{"mfaEnrollmentId": "\#(enrollment)", "phoneSignInInfo": {"recaptchaToken": "t"}}"#,
                "MISSING_MFA_PENDING_CREDENTIAL : Request does not have MFA pending credential."
            ),
            (
                #"{"mfaPendingCredential": "\#(credential)", "phoneSignInInfo": {"recaptchaToken": "t"}}"#,
                "MISSING_MFA_ENROLLMENT_ID : No second factor identifier is provided."
            ),
            (
                #"{"mfaPendingCredential": "nope", "mfaEnrollmentId": "\#(enrollment)", "phoneSignInInfo": {"recaptchaToken": "t"}}"#,
                "INVALID_MFA_PENDING_CREDENTIAL"
            ),
            (
                #"{"mfaPendingCredential": "\#(credential)", "mfaEnrollmentId": "nope", "phoneSignInInfo": {"recaptchaToken": "t"}}"#,
                "MFA_ENROLLMENT_NOT_FOUND"
            ),
            (
                #"{"mfaPendingCredential": "\#(credential)", "mfaEnrollmentId": "\#(enrollment)", "phoneSignInInfo": {}}"#,
                "MISSING_CLIENT_IDENTIFIER"
            ),
            (
                #"{"mfaPendingCredential": "\#(credential)", "mfaEnrollmentId": "\#(enrollment)"}"#,
                "INVALID_ARGUMENT : MFA provider not supported!"
            ),
            (
                #"{"mfaPendingCredential": "\#(credential)", "mfaEnrollmentId": "\#(enrollment)", "phoneSignInInfo": {"safetyNetToken": "sn"}}"#,
                "INVALID_APP_CREDENTIAL"
            ),
        ]
        for (body, message) in cases {
            let answer = try envelope(await h.raw(.post, FirebaseHarness.mfaSignInStartPath, json: body))
            #expect(answer.error.code == 400)
            #expect(answer.error.message == message, "\(body)")
        }
        #expect(h.outbox.all.isEmpty)
        // The pending credential lasts five minutes.
        h.clock.advance(by: FirebaseEmulator.defaultPendingCredentialLifetime + 1)
        let late = try envelope(
            await h.raw(
                .post, FirebaseHarness.mfaSignInStartPath,
                json:
                    #"{"mfaPendingCredential": "\#(credential)", "mfaEnrollmentId": "\#(enrollment)", "phoneSignInInfo": {"recaptchaToken": "t"}}"#
            ))
        #expect(late.error.message == "INVALID_MFA_PENDING_CREDENTIAL")
    }

    @Test("a second factor's code answers only its own step: phone sign-in and the other step refuse it")
    func sessionsStayInTheirStep() async throws {
        let h = try FirebaseHarness()
        try await h.admitUser("mfa@example.com", phones: [Self.phone])
        let (credential, enrollment) = try await h.pendingSignIn("mfa@example.com")
        let start = try #require(
            await h.raw(
                .post, FirebaseHarness.mfaSignInStartPath,
                json:
                    #"{"mfaPendingCredential": "\#(credential)", "mfaEnrollmentId": "\#(enrollment)", "phoneSignInInfo": {"recaptchaToken": "t"}}"#
            ))
        #expect(start.status == .ok)
        let session = try #require(
            (try jsonObject(start.body)["phoneResponseInfo"] as? [String: Any])?["sessionInfo"] as? String)
        let code = try h.code(to: Self.phone)
        let byPhone = try envelope(
            await h.raw(.post, FirebaseHarness.signInPath, json: #"{"sessionInfo": "\#(session)", "code": "\#(code)"}"#)
        )
        #expect(byPhone.error.message == "INVALID_SESSION_INFO")
        // A phone sign-in's session cannot finalize a second factor either.
        let phoneSend = try #require(
            await h.raw(
                .post, FirebaseHarness.sendPath, json: #"{"phoneNumber": "\#(Self.phone)", "recaptchaToken": "t"}"#))
        let phoneSession = try #require(try jsonObject(phoneSend.body)["sessionInfo"] as? String)
        let crossed = try envelope(
            await h.raw(
                .post, FirebaseHarness.mfaSignInFinalizePath,
                json:
                    #"{"mfaPendingCredential": "\#(credential)", "phoneVerificationInfo": {"sessionInfo": "\#(phoneSession)", "code": "\#(try h.code(to: Self.phone))"}}"#
            ))
        #expect(crossed.error.message == "INVALID_SESSION_INFO")
        let missing = try envelope(
            await h.raw(
                .post, FirebaseHarness.mfaSignInFinalizePath,
                json: #"{"phoneVerificationInfo": {"sessionInfo": "\#(session)", "code": "\#(code)"}}"#))
        #expect(missing.error.message == "MISSING_CREDENTIAL : Please set MFA Pending Credential.")
        // The sign-in's own session still finalizes once.
        let finalize =
            #"{"mfaPendingCredential": "\#(credential)", "mfaEnrollmentId": "\#(enrollment)", "phoneVerificationInfo": {"sessionInfo": "\#(session)", "code": "\#(code)"}}"#
        let done = try #require(await h.raw(.post, FirebaseHarness.mfaSignInFinalizePath, json: finalize))
        #expect(done.status == .ok)
        let idToken = try #require(try jsonObject(done.body)["idToken"] as? String)
        let firebase = try #require(try claims(of: idToken)["firebase"] as? [String: Any])
        #expect(firebase["sign_in_second_factor"] as? String == "phone")
        #expect(firebase["second_factor_identifier"] as? String == enrollment)
        let again = try envelope(await h.raw(.post, FirebaseHarness.mfaSignInFinalizePath, json: finalize))
        #expect(again.error.message == "INVALID_SESSION_INFO")
    }

    @Test("enrollment refuses what Firebase refuses: an unverified email, a phone first factor, a bad or expired token")
    func enrollmentRefusals() async throws {
        let h = try FirebaseHarness()
        try await h.admitUser("unverified@example.com", verified: false)
        let unverified = try await h.idToken("unverified@example.com")
        let body = { (token: String) in
            #"{"idToken": "\#(token)", "phoneEnrollmentInfo": {"phoneNumber": "\#(Self.phone)", "recaptchaToken": "t"}}"#
        }
        let email = try envelope(await h.raw(.post, FirebaseHarness.enrollStartPath, json: body(unverified)))
        #expect(email.error.message == "UNVERIFIED_EMAIL : Need to verify email first before enrolling second factors.")

        // A phone sign-in's user cannot take a second factor.
        let started = try await h.start(FirebaseHarness.testNumber, proof: nil)
        let phoneUser = try await h.provider.check(
            FirebaseHarness.verification(started, to: FirebaseHarness.testNumber), code: FirebaseHarness.testCode)
        let phoneToken = try #require(phoneUser.tokens["idToken"]?.stringValue)
        let first = try envelope(await h.raw(.post, FirebaseHarness.enrollStartPath, json: body(phoneToken)))
        #expect(first.error.message == "UNSUPPORTED_FIRST_FACTOR : MFA is not available for the given first factor.")

        try await h.admitUser("verified@example.com")
        let token = try await h.idToken("verified@example.com")
        let tampered = String(token.dropLast(4)) + (token.hasSuffix("AAAA") ? "BBBB" : "AAAA")
        #expect(
            try envelope(await h.raw(.post, FirebaseHarness.enrollStartPath, json: body(tampered))).error.message
                == "INVALID_ID_TOKEN")
        #expect(
            try envelope(await h.raw(.post, FirebaseHarness.enrollStartPath, json: #"{"phoneEnrollmentInfo": {}}"#))
                .error.message == "MISSING_ID_TOKEN")
        h.clock.advance(by: TimeInterval(FirebaseIDTokenSigner.lifetime) + 1)
        #expect(
            try envelope(await h.raw(.post, FirebaseHarness.enrollStartPath, json: body(token))).error.message
                == "TOKEN_EXPIRED")
        #expect(h.outbox.all.isEmpty)
    }

    @Test("a number enrolled twice is SECOND_FACTOR_EXISTS; past the limit, SECOND_FACTOR_LIMIT_EXCEEDED")
    func enrollmentLimits() async throws {
        let h = try FirebaseHarness()
        try await h.admitUser("one@example.com", phones: [Self.phone])
        // A user with factors signs in with them, so its token comes from a finished second factor.
        let (credential, enrollment) = try await h.pendingSignIn("one@example.com")
        let signIn = try await h.provider.start(
            FirebaseHarness.multiFactorStart(
                Self.phone, .signIn(pendingCredential: credential, enrollmentID: enrollment)))
        let approved = try await h.provider.check(
            FirebaseHarness.verification(signIn, to: Self.phone), code: try h.code(to: Self.phone))
        let token = try #require(approved.tokens["idToken"]?.stringValue)
        let twice = await expectGatewayError(.invalidRequest) {
            try await h.provider.start(
                FirebaseHarness.multiFactorStart(Self.phone, .enroll(idToken: token, displayName: nil)))
        }
        #expect(twice?.vendor?.code == "SECOND_FACTOR_EXISTS")

        let phones = (1...FirebaseEmulator.maxSecondFactors).map { "+4474001234\(10 + $0)" }
        try await h.admitUser("full@example.com", phones: phones)
        let full = try await h.pendingSignIn("full@example.com")
        let fullSignIn = try await h.provider.start(
            FirebaseHarness.multiFactorStart(
                phones[0], .signIn(pendingCredential: full.credential, enrollmentID: full.enrollmentID)))
        let fullToken = try #require(
            try await h.provider.check(
                FirebaseHarness.verification(fullSignIn, to: phones[0]), code: try h.code(to: phones[0])
            )
            .tokens["idToken"]?.stringValue)
        let over = await expectGatewayError(.invalidRequest) {
            try await h.provider.start(
                FirebaseHarness.multiFactorStart(Self.phone, .enroll(idToken: fullToken, displayName: nil)))
        }
        #expect(over?.vendor?.code == "SECOND_FACTOR_LIMIT_EXCEEDED")
    }

    // MARK: the provider

    @Test("every string that ends a step at a check has a row, and the row blames the caller's input")
    func endingStrings() {
        for value in FirebaseProvider.endsMultiFactorStep {
            let row = FirebaseErrorMapping.rows.first { $0.value == value }
            #expect(row?.mapsTo.errorClass == .caller, "\(value)")
        }
    }

    @Test("an enrollment sends the code to `to`, finalizes with the display name and approves with new tokens")
    func enrollment() async throws {
        let h = try FirebaseHarness()
        try await h.admitUser("new@example.com")
        let token = try await h.idToken("new@example.com")
        let started = try await h.provider.start(
            FirebaseHarness.multiFactorStart(Self.phone, .enroll(idToken: token, displayName: "Work phone")))
        #expect(!started.sentNothing)
        let start = try #require(h.transport.requests.last)
        #expect(start.url.path.hasSuffix("/v2/accounts/mfaEnrollment:start"))
        let body = try jsonObject(start.body)
        #expect(body["idToken"] as? String == token)
        let info = try #require(body["phoneEnrollmentInfo"] as? [String: Any])
        #expect(info["phoneNumber"] as? String == Self.phone)
        #expect(info["recaptchaToken"] as? String == "sandbox-recaptcha-token")
        // The ID token is kept for the check, never as the reference.
        #expect(started.reference?.hasPrefix("sha256:") == true)

        let verification = try FirebaseHarness.verification(started, to: Self.phone)
        let wrong = try h.code(to: Self.phone) == "000000" ? "111111" : "000000"
        #expect(try await h.provider.check(verification, code: wrong).status == .pending)
        let result = try await h.provider.check(verification, code: try h.code(to: Self.phone))
        #expect(result.status == .approved)
        #expect(Set(result.tokens.keys) == ["idToken", "refreshToken"])
        let finalize = try jsonObject(try #require(h.transport.requests.last).body)
        #expect(finalize["displayName"] as? String == "Work phone")
        let spent = try #require(result.state).decode(FirebaseVerificationState.self)
        #expect(spent.sessionInfo == nil)
        #expect(spent.multiFactor?.idToken == nil)
        #expect(spent.multiFactor?.kind == .enroll)

        // The user now signs in with the factor.
        let answer = try await h.passwordSignIn("new@example.com")
        let factors = try #require(answer["mfaInfo"] as? [[String: Any]])
        #expect(factors.first?["displayName"] as? String == "Work phone")
    }

    @Test(
        "a sign-in's second factor: mfaSignIn:start with the proof, the code to the enrolled number, tokens on approval"
    )
    func signIn() async throws {
        let h = try FirebaseHarness()
        try await h.admitUser("mfa@example.com", phones: [Self.phone])
        let (credential, enrollment) = try await h.pendingSignIn("mfa@example.com")
        let started = try await h.provider.start(
            FirebaseHarness.multiFactorStart(
                Self.phone, .signIn(pendingCredential: credential, enrollmentID: enrollment),
                proof: AppVerificationProof(kind: .playIntegrity, token: "pi")))
        let body = try jsonObject(try #require(h.transport.requests.last).body)
        #expect(body["mfaPendingCredential"] as? String == credential)
        #expect(body["mfaEnrollmentId"] as? String == enrollment)
        #expect(body["phoneSignInInfo"] as? [String: String] == ["playIntegrityToken": "pi"])
        let result = try await h.provider.check(
            FirebaseHarness.verification(started, to: Self.phone), code: try h.code(to: Self.phone))
        #expect(result.status == .approved)
        let idToken = try #require(result.tokens["idToken"]?.stringValue)
        let firebase = try #require(try claims(of: idToken)["firebase"] as? [String: Any])
        #expect(firebase["second_factor_identifier"] as? String == enrollment)
        #expect(try #require(result.state).decode(FirebaseVerificationState.self).multiFactor?.pendingCredential == nil)
    }

    @Test("without a proof a second factor is app_verification_required, unless the number is a test number")
    func proofs() async throws {
        let h = try FirebaseHarness()
        try await h.admitUser("mfa@example.com", phones: [Self.phone])
        let (credential, enrollment) = try await h.pendingSignIn("mfa@example.com")
        let step = MultiFactor.signIn(pendingCredential: credential, enrollmentID: enrollment)
        await expectGatewayError(.appVerificationRequired) {
            try await h.provider.start(FirebaseHarness.multiFactorStart(Self.phone, step, proof: nil))
        }

        try await h.admitUser("test@example.com", phones: [FirebaseHarness.testNumber])
        let test = try await h.pendingSignIn("test@example.com")
        let started = try await h.provider.start(
            FirebaseHarness.multiFactorStart(
                FirebaseHarness.testNumber,
                .signIn(pendingCredential: test.credential, enrollmentID: test.enrollmentID),
                proof: nil))
        #expect(started.sentNothing)
        #expect(h.outbox.all.isEmpty)
        let result = try await h.provider.check(
            FirebaseHarness.verification(started, to: FirebaseHarness.testNumber), code: FirebaseHarness.testCode)
        #expect(result.status == .approved)
    }

    @Test("a pending credential that expired before the check ends the verification as expired")
    func expiredCredentialAtCheck() async throws {
        let h = try FirebaseHarness()
        try await h.admitUser("mfa@example.com", phones: [Self.phone])
        let (credential, enrollment) = try await h.pendingSignIn("mfa@example.com")
        h.clock.advance(by: 120)
        let started = try await h.provider.start(
            FirebaseHarness.multiFactorStart(
                Self.phone, .signIn(pendingCredential: credential, enrollmentID: enrollment)))
        // The code (5 minutes from the start) is still valid; the credential (5 minutes from the first factor) not.
        h.clock.advance(by: FirebaseEmulator.defaultPendingCredentialLifetime - 60)
        let error = await expectGatewayError(.expired) {
            try await h.provider.check(
                FirebaseHarness.verification(started, to: Self.phone), code: try h.code(to: Self.phone))
        }
        #expect(error?.vendor?.code == "INVALID_MFA_PENDING_CREDENTIAL")
    }

    @Test("after the wait a resend starts the step again with a fresh proof and keeps the step's inputs")
    func resend() async throws {
        let h = try FirebaseHarness()
        try await h.admitUser("mfa@example.com", phones: [Self.phone])
        let (credential, enrollment) = try await h.pendingSignIn("mfa@example.com")
        let started = try await h.provider.start(
            FirebaseHarness.multiFactorStart(
                Self.phone, .signIn(pendingCredential: credential, enrollmentID: enrollment)))
        let first = try h.code(to: Self.phone)
        h.clock.advance(by: 61)
        let resent = try await h.provider.resend(
            FirebaseHarness.verification(started, to: Self.phone), request: ResendRequest(appVerification: .recaptcha))
        #expect(!resent.sentNothing)
        #expect(try #require(h.transport.requests.last).url.path.hasSuffix("/v2/accounts/mfaSignIn:start"))
        #expect(h.outbox.all.filter { $0.to == Self.phone }.count == 2)
        let state = try resent.state.decode(FirebaseVerificationState.self)
        #expect(state.multiFactor?.pendingCredential == credential)
        let latest = try h.code(to: Self.phone)
        let verification = try FirebaseHarness.verification(resent, to: Self.phone)
        if latest != first { #expect(try await h.provider.check(verification, code: first).status == .pending) }
        #expect(try await h.provider.check(verification, code: latest).status == .approved)
    }
}
