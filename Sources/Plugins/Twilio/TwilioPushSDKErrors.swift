import GatewayCore

/// The Verify Push iOS SDK's error model (twilio-verify-ios, `docs/vendors/twilio.md` §5) in the gateway's terms,
/// so an app team can report what its SDK raised. A `TwilioVerifyError` carries one of seven codes
/// (60401–60407) and wraps a more precise cause (`InputError.expiredChallenge`, …); none reaches the gateway.
/// Each row is keyed by the cause's name, its `TwilioVerifyError` code in `related["code"]`.
enum TwilioPushSDKErrors {
    static func sdk(_ name: String, _ code: Int, _ mapsTo: GatewayError.Code) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "sdk", code: name, name: name, mapsTo: mapsTo, source: "[IOS]", related: ["code": String(code)])
    }

    /// The `TwilioVerifyError` code a row surfaces under.
    static func code(of row: VendorErrorRow) -> Int { row.related["code"].flatMap { Int($0) } ?? 0 }

    // swift-format-ignore
    static let cases: [VendorErrorRow] = [
        // `TwilioVerifyError`: the seven public cases, each with its code.
        sdk("TwilioVerifyError.networkError", 60401, .providerUnavailable),
        sdk("TwilioVerifyError.mapperError", 60402, .providerError),
        sdk("TwilioVerifyError.storageError", 60403, .providerError),
        sdk("TwilioVerifyError.inputError", 60404, .invalidRequest),
        sdk("TwilioVerifyError.keyStorageError", 60405, .appVerificationFailed),
        sdk("TwilioVerifyError.initializationError", 60406, .providerError),
        sdk("TwilioVerifyError.authenticationTokenError", 60407, .appVerificationFailed),
        // `InputError` (public), wrapped in 60404.
        sdk("InputError.invalidInput", 60404, .invalidRequest),
        sdk("InputError.invalidPayload", 60404, .invalidRequest),
        sdk("InputError.expiredChallenge", 60404, .expired),
        sdk("InputError.alreadyUpdatedChallenge", 60404, .canceled),
        sdk("InputError.notUpdatedChallenge", 60404, .providerError),
        sdk("InputError.invalidChallenge", 60404, .invalidRequest),
        sdk("InputError.emptyChallengeSid", 60404, .invalidRequest),
        sdk("InputError.invalidUpdateChallengePayload", 60404, .invalidRequest),
        sdk("InputError.emptyFactorSid", 60404, .invalidRequest),
        sdk("InputError.wrongFactor", 60404, .invalidRequest),
        sdk("InputError.invalidFactor", 60404, .notEnrolled),
        sdk("InputError.signatureFields", 60404, .providerError),
        // `NetworkError` (public), wrapped in 60401.
        sdk("NetworkError.invalidURL", 60401, .providerError),
        sdk("NetworkError.invalidBody", 60401, .providerError),
        sdk("NetworkError.invalidResponse", 60401, .providerError),
        sdk("NetworkError.failureStatusCode", 60401, .providerError),
        sdk("NetworkError.invalidData", 60401, .providerError),
        // Internal causes (not public, but visible in `originalError`).
        sdk("MapperError.invalidDate", 60402, .providerError),
        sdk("MapperError.invalidArgument", 60402, .providerError),
        sdk("MapperError.illegalArgument", 60402, .providerError),
        sdk("StorageError.error", 60403, .providerError),
        sdk("SecureStorageError", 60403, .providerError),
        sdk("JwtSignerError.invalidFormat", 60407, .appVerificationFailed),
        sdk("AuthenticationError.invalidFactor", 60407, .notEnrolled),
        sdk("AuthenticationError.invalidKeyPair", 60407, .appVerificationFailed),
        sdk("KeychainError.unexpectedError", 60405, .appVerificationFailed),
        sdk("KeychainError.unableToCopyItem", 60405, .appVerificationFailed),
        sdk("KeychainError.unableToGeneratePublicKey", 60405, .appVerificationFailed),
        sdk("KeychainError.unableToGeneratePrivateKey", 60405, .appVerificationFailed),
        sdk("KeychainError.invalidStatusCode", 60405, .appVerificationFailed),
        sdk("KeychainError.errorCreatingAccessControl", 60405, .appVerificationFailed),
        sdk("KeychainError.invalidProtection", 60405, .appVerificationFailed),
        sdk("KeychainError.createSignatureError", 60407, .appVerificationFailed),
        sdk("KeyManagerError.invalidStatusCode", 60405, .appVerificationFailed),
    ]

    /// The row for an SDK error, by its cause (`InputError.expiredChallenge`) or, without one, by its
    /// `TwilioVerifyError` code. A `NetworkError.failureStatusCode` carrying Twilio's `APIError` code is mapped
    /// by that code through ``TwilioErrorMapping``.
    static func map(code: Int, cause: String?, apiErrorCode: Int? = nil, providerID: String) -> GatewayError {
        let vendor = GatewayError.VendorDetail(providerID: providerID, code: String(code), httpStatus: nil)
        if cause == "NetworkError.failureStatusCode", let apiErrorCode, TwilioErrorMapping.row(for: apiErrorCode) != nil
        {
            return TwilioErrorMapping.map(code: apiErrorCode, httpStatus: 400, retryAfter: nil, providerID: providerID)
        }
        let found =
            cases.first { $0.code == cause }
            ?? cases.first { $0.name.hasPrefix("TwilioVerifyError.") && Self.code(of: $0) == code }
        guard let found else {
            return GatewayError(.providerError, "The push SDK reported an unknown error (\(code)).", vendor: vendor)
        }
        let summary = TwilioErrorMapping.table.summary(of: found.mapsTo)
        return GatewayError(found.mapsTo, "\(summary) (push SDK \(code): \(found.name)).", vendor: vendor)
    }
}
