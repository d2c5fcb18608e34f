import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Logging

/// Phone second factors (Identity Toolkit v2) and the email and password first factor that leads to them.
///
/// Behaviour follows the Auth Emulator's (`operations.ts`: `mfaSignInStart`, `mfaSignInFinalize`,
/// `mfaEnrollmentStart`, `mfaEnrollmentFinalize`, `signInWithPassword`, `signUp`) and its strings, except where
/// production is stricter and the gateway must cope: the multi-factor starts need an app-verification proof
/// like any send (test numbers excepted), pending credentials expire
/// (``FirebaseEmulator/pendingCredentialLifetime``), ID tokens are RS256-signed and checked, and a code answers
/// only the step (and user) it was sent for. Codes expire, count wrong answers and go to the outbox as phone
/// sign-in codes do.
extension FirebaseEmulator {
    /// A refusal inside a state transaction: what the transaction wrote (a wrong code's count) is kept.
    struct Refusal: Error, Sendable, Equatable {
        var code: String
        var detail: String?

        init(_ code: String, _ detail: String? = nil) {
            self.code = code
            self.detail = detail
        }
    }

    /// The Auth Emulator's admin credential (`Authorization: Bearer owner`), which lets `accounts:signUp` verify
    /// the email and enroll factors as the Admin SDK would.
    static let adminAuthorization = "Bearer owner"

    func multiFactor(_ method: String, _ request: EmulatorRequest) async -> TransportResponse {
        switch method {
        case FirebaseWire.signUpPath: return await signUp(request)
        case FirebaseWire.signInWithPasswordPath: return await signInWithPassword(request)
        case FirebaseWire.mfaEnrollmentStartPath: return await mfaEnrollmentStart(request)
        case FirebaseWire.mfaEnrollmentFinalizePath: return await mfaEnrollmentFinalize(request)
        case FirebaseWire.mfaSignInStartPath: return await mfaSignInStart(request)
        case FirebaseWire.mfaSignInFinalizePath: return await mfaSignInFinalize(request)
        default: return Self.notFound()
        }
    }

    // MARK: the first factor

    /// `accounts:signUp`: an email and password user. A client's user starts with its email unverified (so it
    /// cannot enroll a second factor); the admin credential may verify it, name it and enroll phone factors.
    func signUp(_ request: EmulatorRequest) async -> TransportResponse {
        let admin = request.headerFields[.authorization] == Self.adminAuthorization
        if !admin, let refusal = apiKeyRefusal(request) { return refusal }
        guard let body = request.json(FirebaseWire.FirstFactorRequest.self) else {
            return Self.invalidJSON()
        }
        guard let email = body.email?.trimmingCharacters(in: .whitespaces), !email.isEmpty else {
            return Self.refusal("MISSING_EMAIL")
        }
        guard Self.isEmail(email) else { return Self.refusal("INVALID_EMAIL") }
        guard let password = body.password, !password.isEmpty else { return Self.refusal("MISSING_PASSWORD") }
        guard password.count >= 6 else {
            return Self.refusal("WEAK_PASSWORD", detail: "Password should be at least 6 characters")
        }
        if !admin, body.emailVerified != nil || body.mfaInfo != nil {
            return Self.refusal("INSUFFICIENT_PERMISSION")
        }
        var phones: [(String, String?)] = []
        for factor in body.mfaInfo ?? [] {
            guard let raw = factor.phoneInfo, let number = acceptedNumber(raw) else {
                return Self.refusal("INVALID_PHONE_NUMBER", detail: "Invalid format.")
            }
            guard !phones.contains(where: { $0.0 == number.e164 }) else { return Self.refusal("SECOND_FACTOR_EXISTS") }
            phones.append((number.e164, factor.displayName))
        }
        guard phones.count <= Self.maxSecondFactors else { return Self.refusal("SECOND_FACTOR_LIMIT_EXCEEDED") }
        let enrolled = phones
        let now = clock.now
        let salt = Self.randomString(length: 16, alphanumeric: true)
        let hash = Self.passwordHash(password, salt: salt)
        let verified = body.emailVerified ?? false
        let displayName = body.displayName
        guard
            let created = await withState(
                now: now,
                { state -> Result<FirebaseEmulatorState.Account, Refusal> in
                    if try state.account(email: email) != nil { return .failure(Refusal("EMAIL_EXISTS")) }
                    var localID = Self.randomString(length: 28, alphanumeric: true)
                    while try state.account(localID) != nil {
                        localID = Self.randomString(length: 28, alphanumeric: true)
                    }
                    let factors = enrolled.map { phone, name in
                        FirebaseEmulatorState.Account.Factor(
                            enrollmentID: Self.randomString(length: 28, alphanumeric: true), phoneNumber: phone,
                            displayName: name, enrolledAt: now)
                    }
                    let account = FirebaseEmulatorState.Account(
                        localID: localID, email: email, passwordHash: hash, salt: salt, emailVerified: verified,
                        displayName: displayName, createdAt: now, factors: factors)
                    try state.setAccount(account)
                    return .success(account)
                })
        else { return Self.backendError() }
        switch created {
        case .failure(let refusal): return Self.refusal(refusal.code, detail: refusal.detail)
        case .success(let account):
            let answer = FirebaseWire.FirstFactorResponse(
                kind: "identitytoolkit#SignupNewUserResponse", localId: account.localID, email: account.email,
                displayName: account.displayName)
            return firstFactor(answer, signingIn: admin ? nil : account, now: now)
        }
    }

    /// `accounts:signInWithPassword`: tokens, or for a user with second factors the pending credential and the
    /// factors (numbers obfuscated but for their last four digits, as Firebase lists them after a first factor).
    func signInWithPassword(_ request: EmulatorRequest) async -> TransportResponse {
        if let refusal = apiKeyRefusal(request) { return refusal }
        guard let body = request.json(FirebaseWire.FirstFactorRequest.self) else { return Self.invalidJSON() }
        guard let email = body.email, !email.isEmpty else { return Self.refusal("INVALID_EMAIL") }
        guard let password = body.password, !password.isEmpty else { return Self.refusal("MISSING_PASSWORD") }
        let now = clock.now
        let lifetime = pendingCredentialLifetime
        let credential = Self.randomString(length: Self.pendingCredentialLength)
        guard
            let outcome = await withState(
                now: now,
                {
                    state -> Result<(FirebaseEmulatorState.Account, String?), Refusal> in
                    // One answer for an unknown email and a wrong password (email enumeration protection).
                    guard let account = try state.account(email: email),
                        ConstantTime.equals(Self.passwordHash(password, salt: account.salt), account.passwordHash)
                    else { return .failure(Refusal("INVALID_LOGIN_CREDENTIALS")) }
                    if account.disabled { return .failure(Refusal("USER_DISABLED")) }
                    guard !account.factors.isEmpty else { return .success((account, nil)) }
                    try state.setPendingCredential(
                        credential,
                        FirebaseEmulatorState.PendingCredential(
                            localID: account.localID, signInProvider: "password",
                            expiresAt: now.addingTimeInterval(lifetime)))
                    return .success((account, credential))
                })
        else { return Self.backendError() }
        switch outcome {
        case .failure(let refusal): return Self.refusal(refusal.code, detail: refusal.detail)
        case .success((let account, let pending)):
            var answer = FirebaseWire.FirstFactorResponse(
                kind: "identitytoolkit#VerifyPasswordResponse", localId: account.localID, email: account.email,
                displayName: account.displayName, registered: true)
            guard let pending else { return firstFactor(answer, signingIn: account, now: now) }
            answer.mfaPendingCredential = pending
            answer.mfaInfo = account.factors.map { factor in
                FirebaseWire.MfaEnrollment(
                    mfaEnrollmentId: factor.enrollmentID, displayName: factor.displayName,
                    phoneInfo: Self.obfuscated(factor.phoneNumber), enrolledAt: Self.timestamp(factor.enrolledAt))
            }
            return Self.json(answer)
        }
    }

    /// A first factor's answer, with the tokens of the user `signingIn` (none for an admin's sign-up).
    func firstFactor(
        _ answer: FirebaseWire.FirstFactorResponse, signingIn account: FirebaseEmulatorState.Account?, now: Date
    )
        -> TransportResponse
    {
        var answer = answer
        if let account {
            guard let tokens = tokens(for: account, secondFactor: nil, now: now) else { return Self.backendError() }
            answer.idToken = tokens.idToken
            answer.refreshToken = tokens.refreshToken
            answer.expiresIn = FirebaseWire.LenientString(String(FirebaseIDTokenSigner.lifetime))
        }
        return Self.json(answer)
    }

    // MARK: enrollment

    /// `accounts/mfaEnrollment:start`: sends a code to the number to enroll as the ID token's user's factor.
    func mfaEnrollmentStart(_ request: EmulatorRequest) async -> TransportResponse {
        if let refusal = apiKeyRefusal(request) { return refusal }
        guard let body = request.json(FirebaseWire.StartMfaEnrollmentRequest.self) else { return Self.invalidJSON() }
        let now = clock.now
        let user: FirebaseIDTokenSigner.Claims
        switch verifiedUser(body.idToken, now: now) {
        case .failure(let refusal): return refusal.response
        case .success(let claims): user = claims
        }
        guard let info = body.phoneEnrollmentInfo else {
            return Self.refusal("INVALID_ARGUMENT", detail: "Missing phoneEnrollmentInfo.")
        }
        // Production answers INVALID_PHONE_NUMBER for a missing number too ([EMU]).
        guard let raw = info.phoneNumber, let number = acceptedNumber(raw) else {
            return Self.refusal("INVALID_PHONE_NUMBER", detail: "Invalid format.")
        }
        let send = stepSend(info, now: now)
        let opened = await withState(now: now) { state -> Result<SentCode, Refusal> in
            guard let account = try state.account(user.sub) else { return .failure(Refusal("USER_NOT_FOUND")) }
            if account.disabled { return .failure(Refusal("USER_DISABLED")) }
            guard account.emailVerified else {
                return .failure(
                    Refusal("UNVERIFIED_EMAIL", "Need to verify email first before enrolling second factors."))
            }
            if let refusal = Self.enrollmentRefusal(account, phoneNumber: number.e164) { return .failure(refusal) }
            return try send(
                state, number, FirebaseEmulatorState.SessionStep(localID: account.localID, enrollmentID: nil))
        }
        return answerStart(opened, request: request, now: now, enrollment: true)
    }

    /// `accounts/mfaEnrollment:finalize`: the right code enrolls the number as the user's factor and answers
    /// tokens that reflect it.
    func mfaEnrollmentFinalize(_ request: EmulatorRequest) async -> TransportResponse {
        if let refusal = apiKeyRefusal(request) { return refusal }
        guard let body = request.json(FirebaseWire.FinalizeMfaEnrollmentRequest.self) else { return Self.invalidJSON() }
        let now = clock.now
        let user: FirebaseIDTokenSigner.Claims
        switch verifiedUser(body.idToken, now: now) {
        case .failure(let refusal): return refusal.response
        case .success(let claims): user = claims
        }
        let (code, sessionInfo): (String, String)
        switch Self.codeAndSession(body.phoneVerificationInfo, missing: "Missing phoneVerificationInfo.") {
        case .failure(let refusal): return refusal.response
        case .success(let given): (code, sessionInfo) = given
        }
        let maxWrongCodes = maxWrongCodes
        let enrollmentID = Self.randomString(length: 28, alphanumeric: true)
        let displayName = body.displayName
        let enrolled = await withState(now: now) { state -> Result<(FirebaseEmulatorState.Account, String), Refusal> in
            guard var account = try state.account(user.sub) else { return .failure(Refusal("USER_NOT_FOUND")) }
            if account.disabled { return .failure(Refusal("USER_DISABLED")) }
            let step = FirebaseEmulatorState.SessionStep(localID: account.localID, enrollmentID: nil)
            let checked = try Self.checkCode(
                in: state, sessionInfo: sessionInfo, code: code, maxWrongCodes: maxWrongCodes
            ) { $0.multiFactor == step }
            let session: FirebaseEmulatorState.Session
            switch checked {
            case .failure(let refusal): return .failure(refusal)
            case .success(let checkedSession): session = checkedSession
            }
            try state.setSession(sessionInfo, nil)
            if let refusal = Self.enrollmentRefusal(account, phoneNumber: session.phoneNumber) {
                return .failure(refusal)
            }
            account.factors.append(
                FirebaseEmulatorState.Account.Factor(
                    enrollmentID: enrollmentID, phoneNumber: session.phoneNumber, displayName: displayName,
                    enrolledAt: now))
            try state.setAccount(account)
            return .success((account, enrollmentID))
        }
        return answerFinalize(enrolled, now: now)
    }

    // MARK: sign-in

    /// `accounts/mfaSignIn:start`: sends a code to the number enrolled under `mfaEnrollmentId`, for the user
    /// whose pending credential this is.
    func mfaSignInStart(_ request: EmulatorRequest) async -> TransportResponse {
        if let refusal = apiKeyRefusal(request) { return refusal }
        guard let body = request.json(FirebaseWire.StartMfaSignInRequest.self) else { return Self.invalidJSON() }
        guard let credential = body.mfaPendingCredential, !credential.isEmpty else {
            return Self.refusal(
                "MISSING_MFA_PENDING_CREDENTIAL", detail: "Request does not have MFA pending credential.")
        }
        guard let enrollmentID = body.mfaEnrollmentId, !enrollmentID.isEmpty else {
            return Self.refusal("MISSING_MFA_ENROLLMENT_ID", detail: "No second factor identifier is provided.")
        }
        // Production needs the phone info to know the factor is a phone's (the Auth Emulator does not check).
        guard let info = body.phoneSignInInfo else {
            return Self.refusal("INVALID_ARGUMENT", detail: "MFA provider not supported!")
        }
        let now = clock.now
        let send = stepSend(info, now: now)
        let opened = await withState(now: now) { state -> Result<SentCode, Refusal> in
            guard let pending = try state.pendingCredential(credential),
                let account = try state.account(pending.localID)
            else { return .failure(Refusal("INVALID_MFA_PENDING_CREDENTIAL")) }
            if account.disabled { return .failure(Refusal("USER_DISABLED")) }
            guard let factor = account.factors.first(where: { $0.enrollmentID == enrollmentID }),
                let number = try? PhoneNumber(parsing: factor.phoneNumber)
            else { return .failure(Refusal("MFA_ENROLLMENT_NOT_FOUND")) }
            return try send(
                state, number, FirebaseEmulatorState.SessionStep(localID: account.localID, enrollmentID: enrollmentID))
        }
        return answerStart(opened, request: request, now: now, enrollment: false)
    }

    /// `accounts/mfaSignIn:finalize`: the right code completes the sign-in the pending credential began.
    func mfaSignInFinalize(_ request: EmulatorRequest) async -> TransportResponse {
        if let refusal = apiKeyRefusal(request) { return refusal }
        guard let body = request.json(FirebaseWire.FinalizeMfaSignInRequest.self) else { return Self.invalidJSON() }
        // Not MISSING_MFA_PENDING_CREDENTIAL: the Auth Emulator notes production answers this here.
        guard let credential = body.mfaPendingCredential, !credential.isEmpty else {
            return Self.refusal("MISSING_CREDENTIAL", detail: "Please set MFA Pending Credential.")
        }
        let (code, sessionInfo): (String, String)
        switch Self.codeAndSession(body.phoneVerificationInfo, missing: "MFA provider not supported!") {
        case .failure(let refusal): return refusal.response
        case .success(let given): (code, sessionInfo) = given
        }
        let now = clock.now
        let maxWrongCodes = maxWrongCodes
        let named = body.mfaEnrollmentId.flatMap { $0.isEmpty ? nil : $0 }
        let signedIn = await withState(now: now) { state -> Result<(FirebaseEmulatorState.Account, String), Refusal> in
            guard let pending = try state.pendingCredential(credential),
                let account = try state.account(pending.localID)
            else { return .failure(Refusal("INVALID_MFA_PENDING_CREDENTIAL")) }
            let localID = account.localID
            let checked = try Self.checkCode(
                in: state, sessionInfo: sessionInfo, code: code, maxWrongCodes: maxWrongCodes
            ) {
                session in
                guard let step = session.multiFactor, step.localID == localID, let factor = step.enrollmentID else {
                    return false
                }
                return named == nil || named == factor
            }
            let session: FirebaseEmulatorState.Session
            switch checked {
            case .failure(let refusal): return .failure(refusal)
            case .success(let checkedSession): session = checkedSession
            }
            guard let enrollmentID = session.multiFactor?.enrollmentID,
                account.factors.contains(where: { $0.enrollmentID == enrollmentID })
            else { return .failure(Refusal("MFA_ENROLLMENT_NOT_FOUND")) }
            if account.disabled { return .failure(Refusal("USER_DISABLED")) }
            try state.setSession(sessionInfo, nil)
            return .success((account, enrollmentID))
        }
        return answerFinalize(signedIn, now: now)
    }

    // MARK: the steps' shared paths

    /// A second factor's code as sent: its session, the number, the code, and whether it is a test number's.
    typealias SentCode = (sessionInfo: String, number: PhoneNumber, code: String, test: Bool)
    typealias StepSend =
        @Sendable (FirebaseEmulatorState, PhoneNumber, FirebaseEmulatorState.SessionStep) throws
        -> Result<SentCode, Refusal>

    /// How a second factor's start sends its code inside the step's transaction, once the step found its user and
    /// number: a test number's fixed code with no proof and no count; otherwise a new code, once the proof passes
    /// and the number's hourly quota allows it (the send counted). Opens the session for the step.
    func stepSend(_ info: FirebaseWire.SendVerificationCodeRequest, now: Date) -> StepSend {
        let (proofProblem, newCode) = (Self.proofProblem(info), EmulatorRandom.code())
        let (lifetime, limit, testNumbers) = (codeLifetime, maxSendsPerNumberPerHour, testNumbers)
        return { state, number, step in
            let fixed = testNumbers.code(for: number)
            if fixed == nil {
                if let proofProblem { return .failure(Refusal(proofProblem)) }
                if let limit, try state.recentSends(to: number.e164) >= limit {
                    return .failure(
                        Refusal("QUOTA_EXCEEDED", "Exceeded per phone number quota for sending verification codes."))
                }
                try state.recordSend(to: number.e164, at: now)
            }
            let code = fixed ?? newCode
            let sessionInfo = try Self.openSession(
                in: state, phoneNumber: number.e164, code: code, now: now, lifetime: lifetime,
                isTestNumber: fixed != nil, multiFactor: step)
            return .success((sessionInfo, number, code, fixed != nil))
        }
    }

    /// A start's answer: the code delivered (unless a test number's), the session in the step's field.
    func answerStart(_ opened: Result<SentCode, Refusal>?, request: EmulatorRequest, now: Date, enrollment: Bool)
        -> TransportResponse
    {
        switch opened {
        case nil: return Self.backendError()
        case .failure(let refusal): return Self.refusal(refusal.code, detail: refusal.detail)
        case .success(let sent):
            if !sent.test { deliver(sent.code, to: sent.number, request: request, now: now) }
            let session = FirebaseWire.SendResponse.Session(sessionInfo: sent.sessionInfo)
            return Self.json(
                enrollment
                    ? FirebaseWire.SendResponse(phoneSessionInfo: session)
                    : FirebaseWire.SendResponse(phoneResponseInfo: session))
        }
    }

    /// A finalize's answer: the user's new tokens, with the phone factor it passed or enrolled.
    func answerFinalize(_ result: Result<(FirebaseEmulatorState.Account, String), Refusal>?, now: Date)
        -> TransportResponse
    {
        switch result {
        case nil: return Self.backendError()
        case .failure(let refusal): return Self.refusal(refusal.code, detail: refusal.detail)
        case .success((let account, let enrollmentID)):
            guard let tokens = tokens(for: account, secondFactor: enrollmentID, now: now) else {
                return Self.backendError()
            }
            return Self.json(FirebaseWire.SignInResponse(idToken: tokens.idToken, refreshToken: tokens.refreshToken))
        }
    }

    /// A finalize's code and session, or the answer that refuses their absence (`missing`: the detail of an absent
    /// phone verification info).
    static func codeAndSession(_ info: FirebaseWire.FinalizeMfaPhoneRequestInfo?, missing: String)
        -> Result<(String, String), ResponseBox>
    {
        guard let info else { return .failure(ResponseBox(refusal("INVALID_ARGUMENT", detail: missing))) }
        guard let code = info.code, !code.isEmpty else { return .failure(ResponseBox(refusal("MISSING_CODE"))) }
        guard let sessionInfo = info.sessionInfo, !sessionInfo.isEmpty else {
            return .failure(ResponseBox(refusal("MISSING_SESSION_INFO")))
        }
        return .success((code, sessionInfo))
    }

    /// Why `account` cannot enroll `phoneNumber`: already one of its factors, or as many factors as allowed.
    static func enrollmentRefusal(_ account: FirebaseEmulatorState.Account, phoneNumber: String) -> Refusal? {
        if account.factors.contains(where: { $0.phoneNumber == phoneNumber }) {
            return Refusal("SECOND_FACTOR_EXISTS", "Phone number already enrolled as second factor for this account.")
        }
        return account.factors.count < maxSecondFactors ? nil : Refusal("SECOND_FACTOR_LIMIT_EXCEEDED")
    }

    // MARK: helpers

    static let pendingCredentialLength = 180

    /// Checks a code against a session that `belongs` to the step being finalized: a session of another step or
    /// user is unknown here (`INVALID_SESSION_INFO`), as a used one is. A wrong code counts against the session.
    static func checkCode(
        in state: FirebaseEmulatorState, sessionInfo: String, code: String, maxWrongCodes: Int,
        belongs: (FirebaseEmulatorState.Session) -> Bool
    ) throws -> Result<FirebaseEmulatorState.Session, Refusal> {
        guard var session = try state.session(sessionInfo), belongs(session) else {
            return .failure(Refusal("INVALID_SESSION_INFO"))
        }
        if state.now >= session.expiresAt { return .failure(Refusal("SESSION_EXPIRED")) }
        if session.wrongCodes >= maxWrongCodes {
            return .failure(
                Refusal("TOO_MANY_ATTEMPTS_TRY_LATER", "Too many unsuccessful login attempts. Please try again later."))
        }
        guard ConstantTime.equals(code, session.code) else {
            session.wrongCodes += 1
            try state.setSession(sessionInfo, session)
            return .failure(Refusal("INVALID_CODE"))
        }
        return .success(session)
    }

    /// The claims of a valid ID token of this project whose user may take a second factor, or the answer that
    /// refuses it (`MISSING_ID_TOKEN`, `INVALID_ID_TOKEN`, `TOKEN_EXPIRED`, `UNSUPPORTED_FIRST_FACTOR` for a
    /// phone sign-in's token).
    func verifiedUser(_ idToken: String?, now: Date) -> Result<FirebaseIDTokenSigner.Claims, ResponseBox> {
        guard let idToken, !idToken.isEmpty else { return .failure(ResponseBox(Self.refusal("MISSING_ID_TOKEN"))) }
        guard let signer else { return .failure(ResponseBox(Self.backendError())) }
        let claims: FirebaseIDTokenSigner.Claims
        do {
            claims = try signer.verify(idToken, projectID: projectID, now: now)
        } catch {
            return .failure(ResponseBox(Self.refusal(error == .expired ? "TOKEN_EXPIRED" : "INVALID_ID_TOKEN")))
        }
        guard claims.firebase.signInProvider == "password" else {
            return .failure(
                ResponseBox(
                    Self.refusal("UNSUPPORTED_FIRST_FACTOR", detail: "MFA is not available for the given first factor.")
                ))
        }
        return .success(claims)
    }

    /// An answer carried as a `Result` failure.
    struct ResponseBox: Error {
        var response: TransportResponse

        init(_ response: TransportResponse) { self.response = response }
    }

    /// The tokens of `account` (with the phone factor it passed or enrolled), or `nil` if no key could be made.
    func tokens(for account: FirebaseEmulatorState.Account, secondFactor: String?, now: Date)
        -> (idToken: String, refreshToken: String)?
    {
        let claims = FirebaseIDTokenSigner.Claims(
            projectID: projectID, localID: account.localID, email: account.email,
            emailVerified: account.emailVerified, secondFactor: secondFactor, issuedAt: now)
        guard let idToken = try? signer?.sign(claims) else {
            logger.error("firebase sandbox could not sign an ID token")
            return nil
        }
        return (idToken, Self.randomString(length: Self.refreshTokenLength))
    }

    /// Records a code in the outbox, in the language the request asked for (a sign-in's code, or by default a
    /// second factor's).
    func deliver(
        _ code: String, to number: PhoneNumber, request: EmulatorRequest, now: Date,
        log: Logger.Message = "firebase sandbox sent a second factor code"
    ) {
        let language = FirebaseWire.localeHeader.flatMap { request.headerFields[$0] }
        let sms = Self.smsText(code: code, language: language, projectID: projectID)
        outbox.record(
            SandboxOutbox.Message(
                provider: "firebase", channel: "sms", to: number.e164, code: code, text: sms.text,
                language: sms.language, sentAt: now))
        logger.info(log, metadata: ["to": "\(number.masked)"])
    }

    /// A number the emulator sends to: E.164, valid in its numbering plan unless it is a test number.
    func acceptedNumber(_ raw: String) -> PhoneNumber? {
        guard raw.hasPrefix("+"), let number = try? PhoneNumber(parsing: raw), number.e164 == raw,
            number.isValid || testNumbers.contains(number)
        else { return nil }
        return number
    }

    /// The number as Firebase lists a factor after a first factor: every digit but the last four starred
    /// ([EMU] `obfuscatePhoneNumber`).
    static func obfuscated(_ phoneNumber: String) -> String {
        var digitsSeen = 0
        var characters = Array(phoneNumber)
        for index in characters.indices.reversed() where characters[index].isASCII && characters[index].isNumber {
            digitsSeen += 1
            if digitsSeen > 4 { characters[index] = "*" }
        }
        return String(characters)
    }

    static func passwordHash(_ password: String, salt: String) -> String {
        SHA256.hash(data: Data((salt + ":" + password).utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// `name@domain.tld`, at most 255 characters, no spaces: what Identity Toolkit takes as an email.
    static func isEmail(_ value: String) -> Bool {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard value.count <= 255, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !value.contains(where: \.isWhitespace)
        else { return false }
        return true
    }

    /// RFC 3339 in UTC, as Google writes timestamps (`enrolledAt`).
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }
}
