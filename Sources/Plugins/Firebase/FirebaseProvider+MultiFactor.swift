import Foundation
import GatewayCore
import HTTPTypes

/// A phone second factor (Identity Toolkit v2, docs/firebase.md "Multi-factor"): the verification is the SMS
/// step of a multi-factor sign-in (`mfaSignIn:start` / `:finalize`, after a first factor that answered a pending
/// credential) or of an enrollment (`mfaEnrollment:start` / `:finalize`, for a signed-in user's ID token).
/// Starting sends the code like a phone sign-in (same proofs, same test numbers,
/// ``FirebaseProvider/sendVerificationCode(to:step:proof:platform:language:)``); the check finalizes the step and
/// approves with the user's new tokens.
extension FirebaseProvider {
    /// Server strings that, answered to a finalize, mean the step can never complete (the first factor's
    /// credential or the ID token is no longer valid, the factor is gone, the number got enrolled meanwhile):
    /// the check ends the verification as `expired`, keeping the string as the vendor code.
    static let endsMultiFactorStep: Set<String> = [
        "INVALID_MFA_PENDING_CREDENTIAL", "INVALID_PROJECT_ID", "MFA_ENROLLMENT_NOT_FOUND", "INVALID_ID_TOKEN",
        "TOKEN_EXPIRED", "USER_NOT_FOUND", "SECOND_FACTOR_EXISTS", "SECOND_FACTOR_LIMIT_EXCEEDED", "UNVERIFIED_EMAIL",
        "UNSUPPORTED_FIRST_FACTOR",
    ]

    /// Finalizes the step with the code: approved with Firebase's `idToken` and `refreshToken`; a wrong code is
    /// `pending` (the gateway counts it); an answer in ``endsMultiFactorStep`` ends the verification.
    func checkMultiFactor(_ multiFactor: FirebaseMultiFactorState, state: FirebaseVerificationState, code: String)
        async throws(GatewayError) -> ProviderCheckResult
    {
        guard let sessionInfo = state.sessionInfo, !sessionInfo.isEmpty, let step = multiFactor.step else {
            throw GatewayError.internal("The Firebase session of this verification is missing from its state.")
        }
        let info = FirebaseWire.FinalizeMfaPhoneRequestInfo(sessionInfo: sessionInfo, code: code)
        let (path, operation, body): (String, VendorOperation, any Encodable)
        switch step {
        case .signIn(let credential, let enrollmentID):
            (path, operation) = (FirebaseWire.mfaSignInFinalizePath, .mfaSignInFinalize)
            body = FirebaseWire.FinalizeMfaSignInRequest(
                mfaPendingCredential: credential, mfaEnrollmentId: enrollmentID, phoneVerificationInfo: info)
        case .enroll(let idToken, let displayName):
            (path, operation) = (FirebaseWire.mfaEnrollmentFinalizePath, .mfaEnrollmentFinalize)
            body = FirebaseWire.FinalizeMfaEnrollmentRequest(
                idToken: idToken, phoneVerificationInfo: info, displayName: displayName)
        }
        let response: TransportResponse
        do {
            response = try await call(path, body: body, operation: operation)
        } catch let error where error.code == .incorrectCode {
            return ProviderCheckResult(status: .pending)
        } catch let error where error.vendor?.code.map(Self.endsMultiFactorStep.contains) == true {
            throw GatewayError(
                .expired,
                "The \(step.kind == .signIn ? "sign-in" : "enrollment") this verification continues can no longer "
                    + "complete (\(error.message)); start a new one.",
                vendor: error.vendor)
        }
        guard let answer = try? JSONDecoder().decode(FirebaseWire.SignInResponse.self, from: response.body),
            let idToken = answer.idToken, !idToken.isEmpty
        else { throw client.malformed(operation, httpStatus: response.status.code) }
        // The step is done at Firebase: stop keeping its bearer strings.
        var spent = state
        spent.sessionInfo = nil
        spent.multiFactor = multiFactor.spent
        var tokens: [String: JSONValue] = ["idToken": .string(idToken)]
        tokens["refreshToken"] = answer.refreshToken.map(JSONValue.string)
        return ProviderCheckResult(status: .approved, tokens: tokens, state: try ProviderState(spent))
    }
}
