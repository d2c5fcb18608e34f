import Foundation
import GatewayCore
import HTTPTypes

/// A phone second factor (Identity Toolkit v2, docs/firebase.md "Multi-factor"): the verification is the SMS
/// step of a multi-factor sign-in (`mfaSignIn:start` / `:finalize`, after a first factor that answered a pending
/// credential) or of an enrollment (`mfaEnrollment:start` / `:finalize`, for a signed-in user's ID token).
/// Starting sends the code like a phone sign-in (same proofs, same test numbers); the check finalizes the step
/// and approves with the user's new tokens.
extension FirebaseProvider {
    /// Server strings that, answered to a finalize, mean the step can never complete (the first factor's
    /// credential or the ID token is no longer valid, the factor is gone, the number got enrolled meanwhile):
    /// the check ends the verification as `expired`, keeping the string as the vendor code.
    static let endsMultiFactorStep: Set<String> = [
        "INVALID_MFA_PENDING_CREDENTIAL", "INVALID_PROJECT_ID", "MFA_ENROLLMENT_NOT_FOUND", "INVALID_ID_TOKEN",
        "TOKEN_EXPIRED", "USER_NOT_FOUND", "SECOND_FACTOR_EXISTS", "SECOND_FACTOR_LIMIT_EXCEEDED", "UNVERIFIED_EMAIL",
        "UNSUPPORTED_FIRST_FACTOR",
    ]

    func startMultiFactor(_ step: MultiFactor, _ request: StartVerification, number: PhoneNumber)
        async throws(GatewayError) -> ProviderStartResult
    {
        let language = FirebaseWire.language(from: request.locales)
        let sentAt = clock.now
        // A test number needs no proof (Firebase's test numbers work for SMS second factors too, [TESTNUM]).
        let testNumber = configuration.testNumbers.contains(number)
        var proof: AppVerificationProof?
        if !testNumber {
            guard let given = request.appVerification else {
                throw GatewayError(
                    .appVerificationRequired,
                    "Firebase needs an app verification proof: send `app_verification` with type one of: "
                        + Self.acceptedKinds + ".")
            }
            proof = given
        }
        let sessionInfo = try await startMultiFactorSession(
            step, number: number, proof: proof, platform: request.clientContext.platform, language: language)
        logger.info(
            testNumber ? "firebase second factor on a test number: nothing sent" : "firebase second factor code sent",
            metadata: [
                "provider.id": "\(id)", "to": "\(number.masked)", "multi_factor": "\(step.kind.rawValue)",
            ])
        return ProviderStartResult(
            reference: Self.reference(for: sessionInfo),
            state: try ProviderState(
                FirebaseVerificationState(
                    sessionInfo: sessionInfo, sentAt: sentAt, testNumber: testNumber,
                    multiFactor: FirebaseMultiFactorState(step))),
            contentLanguage: language, channel: .sms, sentNothing: testNumber)
    }

    /// Calls the step's start method and returns the `sessionInfo` of the code Firebase sent. A sign-in's code
    /// goes to the number enrolled under the enrollment id (Firebase takes no number for it); an enrollment's to
    /// `number`.
    func startMultiFactorSession(
        _ step: MultiFactor, number: PhoneNumber, proof: AppVerificationProof?, platform: ClientContext.Platform?,
        language: String?
    ) async throws(GatewayError) -> String {
        var info = FirebaseWire.StartMfaPhoneRequestInfo()
        if let proof { try Self.add(proof, platform: platform, to: &info) }
        let headers = sendHeaders(proof: proof, language: language)
        let sessionInfo: String?
        switch step {
        case .signIn(let credential, let enrollmentID):
            let body = FirebaseWire.StartMfaSignInRequest(
                mfaPendingCredential: credential, mfaEnrollmentId: enrollmentID, phoneSignInInfo: info)
            let response = try await call(
                FirebaseWire.mfaSignInStartPath, body: body, headers: headers, operation: .mfaSignInStart)
            let answer = try? JSONDecoder().decode(FirebaseWire.StartMfaSignInResponse.self, from: response.body)
            sessionInfo = answer?.phoneResponseInfo?.sessionInfo
            if sessionInfo?.isEmpty ?? true {
                throw malformed(operation: .mfaSignInStart, httpStatus: response.status.code)
            }
        case .enroll(let idToken, _):
            info.phoneNumber = number.e164
            let body = FirebaseWire.StartMfaEnrollmentRequest(idToken: idToken, phoneEnrollmentInfo: info)
            let response = try await call(
                FirebaseWire.mfaEnrollmentStartPath, body: body, headers: headers, operation: .mfaEnrollmentStart)
            let answer = try? JSONDecoder().decode(FirebaseWire.StartMfaEnrollmentResponse.self, from: response.body)
            sessionInfo = answer?.phoneSessionInfo?.sessionInfo
            if sessionInfo?.isEmpty ?? true {
                throw malformed(operation: .mfaEnrollmentStart, httpStatus: response.status.code)
            }
        }
        return sessionInfo ?? ""
    }

    /// Finalizes the step with the code: approved with Firebase's `idToken` and `refreshToken`; a wrong code is
    /// `pending` (the gateway counts it); an answer in ``endsMultiFactorStep`` ends the verification.
    func checkMultiFactor(_ multiFactor: FirebaseMultiFactorState, state: FirebaseVerificationState, code: String)
        async throws(GatewayError) -> ProviderCheckResult
    {
        guard let sessionInfo = state.sessionInfo, !sessionInfo.isEmpty, let step = multiFactor.step else {
            throw GatewayError.internal("The Firebase session of this verification is missing from its state.")
        }
        let info = FirebaseWire.FinalizeMfaPhoneRequestInfo(sessionInfo: sessionInfo, code: code)
        let operation: VendorOperation
        let response: TransportResponse
        do {
            switch step {
            case .signIn(let credential, let enrollmentID):
                operation = .mfaSignInFinalize
                response = try await call(
                    FirebaseWire.mfaSignInFinalizePath,
                    body: FirebaseWire.FinalizeMfaSignInRequest(
                        mfaPendingCredential: credential, mfaEnrollmentId: enrollmentID, phoneVerificationInfo: info),
                    headers: HTTPFields(), operation: operation)
            case .enroll(let idToken, let displayName):
                operation = .mfaEnrollmentFinalize
                response = try await call(
                    FirebaseWire.mfaEnrollmentFinalizePath,
                    body: FirebaseWire.FinalizeMfaEnrollmentRequest(
                        idToken: idToken, phoneVerificationInfo: info, displayName: displayName),
                    headers: HTTPFields(), operation: operation)
            }
        } catch let error where error.code == .incorrectCode {
            return ProviderCheckResult(status: .pending)
        } catch let error where error.vendor?.code.map(Self.endsMultiFactorStep.contains) == true {
            throw GatewayError(
                .expired,
                "The \(step.kind == .signIn ? "sign-in" : "enrollment") this verification continues can no longer "
                    + "complete (\(error.message)); start a new one.",
                vendor: error.vendor)
        }
        guard let answer = try? JSONDecoder().decode(FirebaseWire.FinalizeMfaResponse.self, from: response.body),
            let idToken = answer.idToken, !idToken.isEmpty
        else { throw malformed(operation: operation, httpStatus: response.status.code) }
        // The step is done at Firebase: stop keeping its bearer strings.
        var spent = state
        spent.sessionInfo = nil
        spent.multiFactor = multiFactor.spent
        var tokens: [String: JSONValue] = ["idToken": .string(idToken)]
        tokens["refreshToken"] = answer.refreshToken.map(JSONValue.string)
        return ProviderCheckResult(status: .approved, tokens: tokens, state: try ProviderState(spent))
    }
}
