import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Logging

/// Firebase phone sign-in (Identity Toolkit v1) behind the gateway's provider contract.
///
/// A start calls `accounts:sendVerificationCode` with the client's app-verification proof and keeps the
/// returned `sessionInfo` in the verification's state (never as its reference: it is the bearer of the
/// session). A check calls `accounts:signInWithPhoneNumber`; approval carries Firebase's tokens.
/// A start with a ``GatewayCore/MultiFactor`` step is a phone second factor instead (Identity Toolkit v2,
/// `FirebaseProvider+MultiFactor.swift`). Firebase has no cancel or status call.
struct FirebaseProvider: VendorHTTPProvider, ResendingProvider {
    static let capabilities = ProviderCapabilities(
        channels: [.sms], appVerificationKinds: [.recaptcha, .recaptchaEnterprise, .iosReceipt, .playIntegrity],
        requiresAppVerification: true, multiFactorKinds: [.signIn, .enroll], issuesTokens: true,
        resendKeepsCode: false)

    let configuration: FirebaseConfiguration
    let client: VendorHTTPClient

    var capabilities: ProviderCapabilities { Self.capabilities }

    init(context: ProviderContext) throws(ConfigurationError) {
        configuration = try FirebaseConfiguration(settings: context.settings, providerID: context.providerID)
        client = VendorHTTPClient(vendor: "Firebase", context: context, baseURL: configuration.baseURL)
    }

    /// A test number needs no proof: Firebase's own checks do not apply to them ([TESTNUM]).
    func requiresAppVerification(for request: StartVerification) -> Bool { !isTestNumber(request) }

    // MARK: start

    /// A new start always calls Firebase, even for a number whose earlier code is still on its way: it
    /// carries a fresh proof and starts a new verification, and the REST method has no deduplication field
    /// (docs/vendors/firebase.md §5). Repeated starts are throttled by the gateway's own per-destination limits.
    /// A start with a second-factor step starts that step instead (`FirebaseProvider+MultiFactor.swift`).
    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        guard request.channel == .sms else {
            throw GatewayError(.unsupportedChannel, "Firebase phone sign-in sends codes by SMS only.")
        }
        guard let number = request.destination.phoneNumber else {
            throw GatewayError(.invalidRequest, "Firebase phone sign-in needs a phone number.")
        }
        let language = FirebaseWire.language(from: request.locales)
        let sentAt = clock.now
        // Firebase answers a test number without a proof and without an SMS, and signs it in for real (a user and
        // tokens), so its session is opened at Firebase like any other ([TESTNUM], second factors too).
        let testNumber = configuration.testNumbers.contains(number)
        var proof: AppVerificationProof?
        if !testNumber {
            // The engine refuses this before calling (`requiresAppVerification(for:)`); kept for direct callers.
            guard let given = request.appVerification else {
                throw GatewayError(
                    .appVerificationRequired,
                    "Firebase needs an app verification proof: send `app_verification` with type one of: "
                        + Self.acceptedKinds + ".")
            }
            proof = given
        }
        let sessionInfo = try await sendVerificationCode(
            to: number, step: request.multiFactor, proof: proof, platform: request.clientContext.platform,
            language: language)
        var metadata: Logger.Metadata = ["provider.id": "\(id)", "to": "\(number.masked)"]
        metadata["multi_factor"] = request.multiFactor.map { "\($0.kind.rawValue)" }
        logger.info(testNumber ? "firebase test number: nothing sent" : "firebase code sent", metadata: metadata)
        let state = FirebaseVerificationState(
            sessionInfo: sessionInfo, sentAt: sentAt, testNumber: testNumber,
            multiFactor: request.multiFactor.map { FirebaseMultiFactorState($0) })
        return ProviderStartResult(
            reference: Self.reference(for: sessionInfo), state: try ProviderState(state), contentLanguage: language,
            channel: .sms, sentNothing: testNumber)
    }

    /// Sends a code and returns its `sessionInfo`: `accounts:sendVerificationCode`, or the start of the second-factor
    /// `step`. A sign-in's code goes to the number enrolled under the enrollment id (Firebase takes no number for
    /// it); an enrollment's to `number`. The proof goes in the same fields (v2's `StartMfaPhoneRequestInfo`).
    func sendVerificationCode(
        to number: PhoneNumber, step: MultiFactor?, proof: AppVerificationProof?, platform: ClientContext.Platform?,
        language: String?
    ) async throws(GatewayError) -> String {
        var info = FirebaseWire.SendVerificationCodeRequest(phoneNumber: number.e164)
        if let proof { try Self.add(proof, platform: platform, to: &info) }
        let (path, operation, body): (String, VendorOperation, any Encodable)
        switch step {
        case nil:
            (path, operation, body) = (FirebaseWire.sendVerificationCodePath, .send, info)
        case .signIn(let credential, let enrollmentID):
            info.phoneNumber = nil
            (path, operation) = (FirebaseWire.mfaSignInStartPath, .mfaSignInStart)
            body = FirebaseWire.StartMfaSignInRequest(
                mfaPendingCredential: credential, mfaEnrollmentId: enrollmentID, phoneSignInInfo: info)
        case .enroll(let idToken, _):
            (path, operation) = (FirebaseWire.mfaEnrollmentStartPath, .mfaEnrollmentStart)
            body = FirebaseWire.StartMfaEnrollmentRequest(idToken: idToken, phoneEnrollmentInfo: info)
        }
        let response = try await call(
            path, body: body, headers: sendHeaders(proof: proof, language: language), operation: operation)
        let answer = try? JSONDecoder().decode(FirebaseWire.SendResponse.self, from: response.body)
        guard
            let sessionInfo = (answer?.phoneResponseInfo ?? answer?.phoneSessionInfo)?.sessionInfo
                ?? answer?.sessionInfo,
            !sessionInfo.isEmpty
        else {
            // A 2xx means Firebase accepted the send: never fail over after it.
            throw client.malformed(operation, httpStatus: response.status.code)
        }
        return sessionInfo
    }

    /// The headers of a call that sends a code: the SMS's language, and the bundle id an `ios_receipt` needs.
    func sendHeaders(proof: AppVerificationProof?, language: String?) -> HTTPFields {
        var headers = HTTPFields()
        if let language, let name = FirebaseWire.localeHeader { headers[name] = language }
        if let proof, proof.kind == .iosReceipt, let bundle = configuration.iosBundleID,
            let name = FirebaseWire.iosBundleHeader
        {
            headers[name] = bundle
        }
        return headers
    }

    /// Puts the proof in the field Identity Toolkit takes for its kind (docs/vendors/firebase.md §2.1), in a send's
    /// body or a multi-factor start's phone info (the same fields).
    static func add(
        _ proof: AppVerificationProof, platform: ClientContext.Platform?,
        to body: inout FirebaseWire.SendVerificationCodeRequest
    ) throws(GatewayError) {
        guard !proof.token.isEmpty else {
            throw GatewayError(.appVerificationRequired, "The app verification token is empty.")
        }
        switch proof.kind {
        case .recaptcha:
            body.recaptchaToken = proof.token
        case .recaptchaEnterprise:
            body.captchaResponse = proof.token
            body.clientType = FirebaseWire.clientType(for: platform)
            body.recaptchaVersion = FirebaseWire.recaptchaEnterprise
        case .iosReceipt:
            guard let secret = proof.secret, !secret.isEmpty else {
                throw GatewayError(
                    .appVerificationRequired, "An ios_receipt proof needs the secret delivered by the silent push.")
            }
            body.iosReceipt = proof.token
            body.iosSecret = secret
        case .playIntegrity:
            body.playIntegrityToken = proof.token
        case .captcha:
            throw GatewayError(
                .appVerificationRequired,
                "Firebase does not accept app verification of type captcha; use one of: \(acceptedKinds).")
        }
    }

    static var acceptedKinds: String {
        capabilities.appVerificationKinds.map(\.rawValue).sorted().joined(separator: ", ")
    }

    /// A non-secret handle on a session for logs and the timeline: a truncated SHA-256 of `sessionInfo`.
    static func reference(for sessionInfo: String) -> String {
        "sha256:" + Hex.lowercase(SHA256.hash(data: Data(sessionInfo.utf8)).prefix(12))
    }

    // MARK: check

    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        guard !code.isEmpty else { throw GatewayError(.invalidRequest, "`code` is required.") }
        var state = try verification.state.decode(FirebaseVerificationState.self)
        if let step = state.multiFactor { return try await checkMultiFactor(step, state: state, code: code) }
        if state.testNumber, state.sessionInfo == nil {
            // Started before test numbers went to Firebase: compared here, as then.
            return try checkTestNumber(verification, code: code)
        }
        guard let sessionInfo = state.sessionInfo, !sessionInfo.isEmpty else {
            throw GatewayError.internal("The Firebase session of this verification is missing from its state.")
        }
        let body = FirebaseWire.SignInWithPhoneNumberRequest(sessionInfo: sessionInfo, code: code)
        let response: TransportResponse
        do {
            response = try await call(FirebaseWire.signInWithPhoneNumberPath, body: body, operation: .signIn)
        } catch let error where error.code == .incorrectCode {
            // A wrong code is not final: the gateway counts the attempt.
            return ProviderCheckResult(status: .pending)
        }
        let answer = try client.decode(FirebaseWire.SignInResponse.self, from: response, operation: .signIn)
        // The session is spent at Firebase: stop keeping its bearer string.
        state.sessionInfo = nil
        let spent = try ProviderState(state)
        // The values stay strings, as the API has always returned them.
        if let idToken = answer.idToken, !idToken.isEmpty {
            var tokens: [String: JSONValue] = ["idToken": .string(idToken)]
            tokens["refreshToken"] = answer.refreshToken.map(JSONValue.string)
            tokens["localId"] = answer.localId.map(JSONValue.string)
            // proto3 JSON omits a false bool.
            tokens["isNewUser"] = .string(answer.isNewUser == true ? "true" : "false")
            tokens["expiresIn"] = answer.expiresIn.map { .string($0.value) }
            return ProviderCheckResult(status: .approved, tokens: tokens, state: spent)
        }
        if let proof = answer.temporaryProof, !proof.isEmpty {
            // The phone is verified but belongs to another account (docs/vendors/firebase.md §2.2).
            var tokens: [String: JSONValue] = ["temporaryProof": .string(proof)]
            tokens["temporaryProofExpiresIn"] = answer.temporaryProofExpiresIn.map { .string($0.value) }
            tokens["phoneNumber"] = answer.phoneNumber.map(JSONValue.string)
            return ProviderCheckResult(status: .approved, tokens: tokens, state: spent)
        }
        throw client.malformed(.signIn, httpStatus: response.status.code)
    }

    /// The check of a test-number verification stored before test numbers went to Firebase (it has no
    /// session): the configured code, compared in constant time. Its approval carries no Firebase tokens.
    private func checkTestNumber(_ verification: ProviderVerification, code: String) throws(GatewayError)
        -> ProviderCheckResult
    {
        guard let number = verification.destination.phoneNumber,
            let expected = configuration.testNumbers.code(for: number)
        else {
            throw GatewayError(.expired, "This test number is no longer configured; start a new verification.")
        }
        return ProviderCheckResult(status: ConstantTime.equals(code, expected) ? .approved : .pending)
    }

    // MARK: resend

    /// Firebase's reentrancy: within `resend_after_seconds` of the last send nothing is sent (the code
    /// already on its way stays valid). After that a new code needs a new proof; with one, the code is
    /// sent again and the new `sessionInfo` replaces the stored one.
    ///
    /// A code sent within the wait is not sent again: the client SDKs are reentrant the same way
    /// (docs/vendors/firebase.md §5), and the proof, single-use and never stored, is only needed for a new send.
    func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        if let channel = request.channel, channel != .sms {
            throw GatewayError(.unsupportedChannel, "Firebase phone sign-in sends codes by SMS only.")
        }
        let state = try verification.state.decode(FirebaseVerificationState.self)
        let kept = ProviderStartResult(
            reference: verification.reference, state: verification.state, channel: .sms, sentNothing: true)
        if state.testNumber { return kept }
        if clock.now.timeIntervalSince(state.sentAt) < configuration.resendAfter {
            logger.info(
                "firebase resend within the wait: nothing sent",
                metadata: ["provider.id": "\(id)", "to": "\(verification.destination.masked)"])
            return kept
        }
        guard let proof = request.appVerification else {
            throw GatewayError(
                .appVerificationRequired,
                "Firebase sends another code only with a new app verification proof: send `app_verification` "
                    + "with the resend (type one of: " + Self.acceptedKinds + "). The code already sent stays "
                    + "valid until it expires.")
        }
        guard let number = verification.destination.phoneNumber else {
            throw GatewayError(.invalidRequest, "Firebase phone sign-in needs a phone number.")
        }
        let language = FirebaseWire.language(from: verification.locales)
        let sentAgainAt = clock.now
        // A second factor is sent again by starting its step again: the pending credential (or ID token) is still
        // the one the start was given.
        if let multiFactor = state.multiFactor, multiFactor.step == nil {
            throw GatewayError(.invalidState, "This multi-factor verification is finished; start a new one.")
        }
        let sessionInfo = try await sendVerificationCode(
            to: number, step: state.multiFactor?.step, proof: proof, platform: request.clientContext.platform,
            language: language)
        logger.info("firebase code sent again", metadata: ["provider.id": "\(id)", "to": "\(number.masked)"])
        let sent = FirebaseVerificationState(
            sessionInfo: sessionInfo, sentAt: sentAgainAt, multiFactor: state.multiFactor)
        return ProviderStartResult(
            reference: Self.reference(for: sessionInfo), state: try ProviderState(sent), contentLanguage: language,
            channel: .sms)
    }

    // MARK: helpers

    func isTestNumber(_ request: StartVerification) -> Bool {
        guard request.channel == .sms, let number = request.destination.phoneNumber else { return false }
        return configuration.testNumbers.contains(number)
    }
}
