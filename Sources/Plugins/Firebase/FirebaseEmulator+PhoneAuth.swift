import Foundation
import GatewayCore
import Logging

extension FirebaseEmulator {
    // MARK: accounts:sendVerificationCode

    /// Checks the key, the number and the app proof (test numbers need none), applies the per-number
    /// quota, opens a session with a new 6-digit code and "sends" it to the outbox.
    func sendVerificationCode(_ request: EmulatorRequest) async -> TransportResponse {
        if let refusal = apiKeyRefusal(request) { return refusal }
        guard let body = request.json(FirebaseWire.SendVerificationCodeRequest.self)
        else { return Self.invalidJSON() }
        // The Auth Emulator checks only the leading +; production parses the number. The gateway always
        // sends E.164, so anything else is refused the way both answer.
        guard let raw = body.phoneNumber, raw.hasPrefix("+"), let number = try? PhoneNumber(parsing: raw),
            number.e164 == raw
        else { return Self.refusal("INVALID_PHONE_NUMBER", detail: "Invalid format.") }
        let now = clock.now
        let fixed = testNumbers.code(for: number)
        // Production parses the number and refuses one no numbering plan knows; test numbers are fictional
        // by design and exempt.
        if fixed == nil, !number.isValid {
            return Self.refusal("INVALID_PHONE_NUMBER", detail: "Invalid format.")
        }
        let lifetime = codeLifetime
        if let fixed {
            guard
                let sessionInfo = await withState(
                    now: now,
                    { state in
                        return try Self.openSession(
                            in: state, phoneNumber: number.e164, code: fixed, now: now, lifetime: lifetime,
                            isTestNumber: true)
                    })
            else { return Self.backendError() }
            logger.info("firebase sandbox test number: nothing sent", metadata: ["to": "\(number.masked)"])
            return Self.json(FirebaseWire.SendResponse(sessionInfo: sessionInfo))
        }
        if let refusal = Self.proofRefusal(body) { return refusal }
        let code = EmulatorRandom.code()
        let limit = maxSendsPerNumberPerHour
        guard
            let opened = await withState(
                now: now,
                { state -> String? in
                    if let limit, try state.recentSends(to: number.e164) >= limit {
                        return nil
                    }
                    try state.recordSend(to: number.e164, at: now)
                    return try Self.openSession(
                        in: state, phoneNumber: number.e164, code: code, now: now, lifetime: lifetime,
                        isTestNumber: false)
                })
        else { return Self.backendError() }
        guard let sessionInfo = opened else {
            return Self.refusal(
                "QUOTA_EXCEEDED", detail: "Exceeded per phone number quota for sending verification codes.")
        }
        deliver(code, to: number, request: request, now: now, log: "firebase sandbox sent a code")
        return Self.json(FirebaseWire.SendResponse(sessionInfo: sessionInfo))
    }

    static func openSession(
        in state: FirebaseEmulatorState, phoneNumber: String, code: String, now: Date, lifetime: TimeInterval,
        isTestNumber: Bool, multiFactor: FirebaseEmulatorState.SessionStep? = nil
    ) throws -> String {
        var sessionInfo = randomString(length: sessionInfoLength)
        while try state.session(sessionInfo) != nil { sessionInfo = randomString(length: sessionInfoLength) }
        try state.setSession(
            sessionInfo,
            FirebaseEmulatorState.Session(
                phoneNumber: phoneNumber, code: code, createdAt: now, expiresAt: now.addingTimeInterval(lifetime),
                isTestNumber: isTestNumber, multiFactor: multiFactor))
        return sessionInfo
    }

    /// The answer to a send without an acceptable proof, or `nil` when the proof passes (docs/vendors/firebase.md §2.1:
    /// reCAPTCHA Enterprise needs its client type and version; otherwise one of the receipt+secret pair,
    /// a reCAPTCHA token or a Play Integrity token). A SafetyNet token alone is `INVALID_APP_CREDENTIAL`: Google
    /// shut SafetyNet down, so no token of it can be valid (the sandbox's reading; Firebase documents no
    /// answer for one).
    static func proofRefusal(_ body: FirebaseWire.SendVerificationCodeRequest) -> TransportResponse? {
        proofProblem(body).map { refusal($0) }
    }

    /// The server string ``proofRefusal(_:)`` answers, or `nil` when the proof passes.
    static func proofProblem(_ body: FirebaseWire.SendVerificationCodeRequest) -> String? {
        func present(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        let rejected = FirebaseSandbox.rejectedProofToken
        if let captcha = present(body.captchaResponse) {
            guard present(body.clientType) != nil else { return "MISSING_CLIENT_TYPE" }
            guard let version = present(body.recaptchaVersion) else { return "MISSING_RECAPTCHA_VERSION" }
            guard version == FirebaseWire.recaptchaEnterprise else { return "INVALID_RECAPTCHA_VERSION" }
            return captcha == rejected ? "CAPTCHA_CHECK_FAILED" : nil
        }
        if let token = present(body.recaptchaToken) {
            return token == rejected ? "CAPTCHA_CHECK_FAILED" : nil
        }
        if let receipt = present(body.iosReceipt) {
            guard let secret = present(body.iosSecret) else { return "MISSING_APP_CREDENTIAL" }
            return receipt == rejected || secret == rejected ? "INVALID_APP_CREDENTIAL" : nil
        }
        if let token = present(body.playIntegrityToken) {
            return token == rejected ? "INVALID_APP_CREDENTIAL" : nil
        }
        if present(body.safetyNetToken) != nil { return "INVALID_APP_CREDENTIAL" }
        return "MISSING_CLIENT_IDENTIFIER"
    }

    // MARK: accounts:signInWithPhoneNumber

    private enum SignInOutcome: Sendable {
        case refused(String, detail: String?)
        case signedIn(phoneNumber: String, localID: String, isNewUser: Bool)
    }

    /// Checks the code of a session. A right code spends the session and signs the number's user in
    /// (creating it the first time); a wrong one counts against the session.
    func signInWithPhoneNumber(_ request: EmulatorRequest) async -> TransportResponse {
        if let refusal = apiKeyRefusal(request) { return refusal }
        guard
            let body = request.json(FirebaseWire.SignInWithPhoneNumberRequest.self)
        else { return Self.invalidJSON() }
        func present(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        if present(body.temporaryProof) != nil {
            // The emulator never issues temporary proofs, so none is valid.
            return Self.refusal(
                present(body.phoneNumber) == nil ? "MISSING_PHONE_NUMBER" : "INVALID_TEMPORARY_PROOF")
        }
        guard let sessionInfo = present(body.sessionInfo) else { return Self.refusal("MISSING_SESSION_INFO") }
        guard let code = present(body.code) else { return Self.refusal("MISSING_CODE") }
        let now = clock.now
        let maxWrongCodes = maxWrongCodes
        let localID = Self.randomString(length: 28, alphanumeric: true)
        guard
            let outcome = await withState(
                now: now,
                { state -> SignInOutcome in
                    // A second factor's code signs nobody in by phone.
                    guard var session = try state.session(sessionInfo), session.multiFactor == nil else {
                        return .refused("INVALID_SESSION_INFO", detail: nil)
                    }
                    if now >= session.expiresAt { return .refused("SESSION_EXPIRED", detail: nil) }
                    if session.wrongCodes >= maxWrongCodes {
                        return .refused(
                            "TOO_MANY_ATTEMPTS_TRY_LATER",
                            detail: "Too many unsuccessful login attempts. Please try again later.")
                    }
                    guard ConstantTime.equals(code, session.code) else {
                        session.wrongCodes += 1
                        try state.setSession(sessionInfo, session)
                        return .refused("INVALID_CODE", detail: nil)
                    }
                    try state.setSession(sessionInfo, nil)
                    if let user = try state.user(session.phoneNumber) {
                        return .signedIn(phoneNumber: session.phoneNumber, localID: user.localID, isNewUser: false)
                    }
                    let user = FirebaseEmulatorState.User(localID: localID, createdAt: now)
                    try state.setUser(session.phoneNumber, user)
                    return .signedIn(phoneNumber: session.phoneNumber, localID: user.localID, isNewUser: true)
                })
        else { return Self.backendError() }
        switch outcome {
        case .refused(let code, let detail):
            return Self.refusal(code, detail: detail)
        case .signedIn(let phoneNumber, let localID, let isNewUser):
            let claims = FirebaseIDTokenSigner.Claims(
                projectID: projectID, localID: localID, phoneNumber: phoneNumber, issuedAt: now)
            guard let idToken = try? signer?.sign(claims) else {
                logger.error("firebase sandbox could not sign an ID token")
                return Self.error(
                    500, message: "Internal error encountered.", status: "INTERNAL", reason: "backendError")
            }
            return Self.json(
                FirebaseWire.SignInResponse(
                    idToken: idToken, refreshToken: Self.randomString(length: Self.refreshTokenLength),
                    expiresIn: FirebaseWire.LenientString(String(FirebaseIDTokenSigner.lifetime)), localId: localID,
                    isNewUser: isNewUser, phoneNumber: phoneNumber))
        }
    }
}
