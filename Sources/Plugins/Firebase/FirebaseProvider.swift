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
struct FirebaseProvider: VerificationProvider {
    static let capabilities = ProviderCapabilities(
        channels: [.sms],
        appVerificationKinds: [.recaptcha, .recaptchaEnterprise, .iosReceipt, .playIntegrity],
        requiresAppVerification: true,
        multiFactorKinds: [.signIn, .enroll],
        issuesTokens: true,
        resendKeepsCode: false,
        supportsResend: true,
        supportsCancel: false,
        supportsStatus: false)

    let id: String
    let configuration: FirebaseConfiguration
    let client: VendorHTTPClient
    let clock: any WallClock
    let logger: Logger

    var capabilities: ProviderCapabilities { Self.capabilities }

    init(context: ProviderContext) throws(ConfigurationError) {
        self.id = context.providerID
        self.configuration = try FirebaseConfiguration(settings: context.settings, providerID: context.providerID)
        self.client = VendorHTTPClient(vendor: "Firebase", context: context, baseURL: configuration.baseURL)
        self.clock = context.clock
        self.logger = context.logger
    }

    /// A test number needs no proof: Firebase's own checks do not apply to them ([TESTNUM]) and the
    /// provider answers them without calling Firebase.
    func requiresAppVerification(for request: StartVerification) -> Bool {
        if isTestNumber(request) { return false }
        return capabilities.requiresAppVerification
    }

    // MARK: start

    /// A new start always calls Firebase, even for a number whose earlier code is still on its way: it
    /// carries a fresh proof and starts a new verification, and the REST method has no deduplication field
    /// (docs/vendors/firebase.md §5). Repeated starts are throttled by the gateway's own per-destination limits.
    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        guard request.channel == .sms else {
            throw GatewayError(.unsupportedChannel, "Firebase phone sign-in sends codes by SMS only.")
        }
        guard let number = request.destination.phoneNumber else {
            throw GatewayError(.invalidRequest, "Firebase phone sign-in needs a phone number.")
        }
        if let step = request.multiFactor { return try await startMultiFactor(step, request, number: number) }
        let language = FirebaseWire.language(from: request.locales)
        let sentAt = clock.now
        if configuration.testNumbers.contains(number) {
            // Firebase answers a test number without a proof and without an SMS, and signs it in for real
            // (a user and tokens), so the session is opened at Firebase like any other.
            let sessionInfo = try await sendVerificationCode(
                to: number, proof: nil, platform: request.clientContext.platform, language: language)
            logger.info(
                "firebase test number: nothing sent",
                metadata: ["provider.id": "\(id)", "to": "\(number.masked)"])
            return ProviderStartResult(
                reference: Self.reference(for: sessionInfo),
                state: try ProviderState(
                    FirebaseVerificationState(sessionInfo: sessionInfo, sentAt: sentAt, testNumber: true)),
                contentLanguage: language, channel: .sms, sentNothing: true)
        }
        guard let proof = request.appVerification else {
            // The engine refuses this before calling (`requiresAppVerification(for:)`); kept for direct callers.
            throw GatewayError(
                .appVerificationRequired,
                "Firebase needs an app verification proof: send `app_verification` with type one of: "
                    + Self.acceptedKinds + ".")
        }
        let sessionInfo = try await sendVerificationCode(
            to: number, proof: proof, platform: request.clientContext.platform, language: language)
        logger.info(
            "firebase code sent", metadata: ["provider.id": "\(id)", "to": "\(number.masked)"])
        return ProviderStartResult(
            reference: Self.reference(for: sessionInfo),
            state: try ProviderState(FirebaseVerificationState(sessionInfo: sessionInfo, sentAt: sentAt)),
            contentLanguage: language, channel: .sms)
    }

    /// Calls `accounts:sendVerificationCode` and returns the `sessionInfo`.
    func sendVerificationCode(
        to number: PhoneNumber, proof: AppVerificationProof?, platform: ClientContext.Platform?, language: String?
    ) async throws(GatewayError) -> String {
        var body = FirebaseWire.SendVerificationCodeRequest(phoneNumber: number.e164)
        if let proof { try Self.add(proof, platform: platform, to: &body) }
        let response = try await call(
            FirebaseWire.sendVerificationCodePath, body: body, headers: sendHeaders(proof: proof, language: language),
            operation: .send)
        guard
            let answer = try? JSONDecoder().decode(
                FirebaseWire.SendVerificationCodeResponse.self, from: response.body),
            let sessionInfo = answer.sessionInfo, !sessionInfo.isEmpty
        else {
            // A 2xx means Firebase accepted the send: never fail over after it.
            throw malformed(operation: .send, httpStatus: response.status.code)
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
    /// body or
    /// a multi-factor start's phone info (the same fields).
    static func add(
        _ proof: AppVerificationProof, platform: ClientContext.Platform?,
        to body: inout some FirebaseWire.ProofFields
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
        let digest = SHA256.hash(data: Data(sessionInfo.utf8))
        return "sha256:" + digest.prefix(12).map { String(format: "%02x", $0) }.joined()
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
            response = try await call(
                FirebaseWire.signInWithPhoneNumberPath, body: body, headers: HTTPFields(), operation: .signIn)
        } catch let error where error.code == .incorrectCode {
            // A wrong code is not final: the gateway counts the attempt.
            return ProviderCheckResult(status: .pending)
        }
        guard
            let answer = try? JSONDecoder().decode(
                FirebaseWire.SignInWithPhoneNumberResponse.self, from: response.body)
        else { throw malformed(operation: .signIn, httpStatus: response.status.code) }
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
            if let expiresIn = answer.expiresIn?.value { tokens["expiresIn"] = .string(expiresIn) }
            return ProviderCheckResult(status: .approved, tokens: tokens, state: spent)
        }
        if let proof = answer.temporaryProof, !proof.isEmpty {
            // The phone is verified but belongs to another account (docs/vendors/firebase.md §2.2).
            var tokens: [String: JSONValue] = ["temporaryProof": .string(proof)]
            if let expiresIn = answer.temporaryProofExpiresIn?.value {
                tokens["temporaryProofExpiresIn"] = .string(expiresIn)
            }
            tokens["phoneNumber"] = answer.phoneNumber.map(JSONValue.string)
            return ProviderCheckResult(status: .approved, tokens: tokens, state: spent)
        }
        throw malformed(operation: .signIn, httpStatus: response.status.code)
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
        let sessionInfo: String
        if let multiFactor = state.multiFactor {
            // A second factor is sent again by starting its step again: the pending credential (or ID token)
            // is still the one the start was given.
            guard let step = multiFactor.step else {
                throw GatewayError(.invalidState, "This multi-factor verification is finished; start a new one.")
            }
            sessionInfo = try await startMultiFactorSession(
                step, number: number, proof: proof, platform: request.clientContext.platform, language: language)
        } else {
            sessionInfo = try await sendVerificationCode(
                to: number, proof: proof, platform: request.clientContext.platform, language: language)
        }
        logger.info("firebase code sent again", metadata: ["provider.id": "\(id)", "to": "\(number.masked)"])
        return ProviderStartResult(
            reference: Self.reference(for: sessionInfo),
            state: try ProviderState(
                FirebaseVerificationState(sessionInfo: sessionInfo, sentAt: sentAgainAt, multiFactor: state.multiFactor)
            ),
            contentLanguage: language, channel: .sms)
    }

    // MARK: helpers

    func isTestNumber(_ request: StartVerification) -> Bool {
        guard request.channel == .sms, let number = request.destination.phoneNumber else { return false }
        return configuration.testNumbers.contains(number)
    }
}
