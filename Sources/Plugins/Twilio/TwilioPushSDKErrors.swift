import GatewayCore

/// The Verify Push iOS SDK's own error model (twilio-verify-ios, the vendor notes `docs/vendors/twilio.md` §5), mapped
/// to
/// the gateway's taxonomy so that an app team can report what its SDK raised in the gateway's terms.
///
/// The SDK raises a `TwilioVerifyError` with one of seven codes (60401–60407) that wraps a more precise
/// cause (`InputError.expiredChallenge`, `KeychainError.createSignatureError`, …). None of these reach the
/// gateway: they happen on the device, or on the device's own calls to Twilio. The table is the one
/// place that says what each means for a verification, and `docs/errors.md` prints it.
enum TwilioPushSDKErrors {
    /// One case of the SDK's error model and what it becomes.
    struct Case: Sendable, Equatable, CustomStringConvertible {
        /// `TwilioVerifyError.inputError`, `InputError.expiredChallenge`, …
        var name: String
        /// The `TwilioVerifyError` code the case surfaces under (60401–60407).
        var code: Int
        var mapsTo: GatewayError.Code
        var note: String

        init(_ name: String, _ code: Int, _ mapsTo: GatewayError.Code, _ note: String) {
            self.name = name
            self.code = code
            self.mapsTo = mapsTo
            self.note = note
        }

        var description: String { name }
    }

    // The table reads best one row per entry, so the formatter leaves it alone.
    // swift-format-ignore
    static let cases: [Case] = [
        // `TwilioVerifyError`: the seven public cases, each with its code.
        Case("TwilioVerifyError.networkError", 60401, .providerUnavailable,
             "calling Twilio failed; the wrapped NetworkError says how"),
        Case("TwilioVerifyError.mapperError", 60402, .providerError, "mapping an entity failed"),
        Case("TwilioVerifyError.storageError", 60403, .providerError, "storing or loading an entity failed on the device"),
        Case("TwilioVerifyError.inputError", 60404, .invalidRequest, "the input was invalid; the wrapped InputError says which"),
        Case("TwilioVerifyError.keyStorageError", 60405, .appVerificationFailed,
             "the factor's key pair could not be stored or loaded: the device cannot prove possession"),
        Case("TwilioVerifyError.initializationError", 60406, .providerError, "the SDK failed to initialise"),
        Case("TwilioVerifyError.authenticationTokenError", 60407, .appVerificationFailed,
             "the device could not sign its authentication JWT"),
        // `InputError` (public), wrapped in 60404.
        Case("InputError.invalidInput", 60404, .invalidRequest, "a field the app passed is invalid"),
        Case("InputError.invalidPayload", 60404, .invalidRequest, "the payload the app passed is invalid"),
        Case("InputError.expiredChallenge", 60404, .expired,
             "the challenge expired before the user answered: the verification expires (Twilio 60323)"),
        Case("InputError.alreadyUpdatedChallenge", 60404, .canceled,
             "the challenge was already answered: final, never read as an approval (Twilio 60322)"),
        Case("InputError.notUpdatedChallenge", 60404, .providerError,
             "Twilio answered the update with another status than the one sent"),
        Case("InputError.invalidChallenge", 60404, .invalidRequest, "the challenge the app passed is invalid"),
        Case("InputError.emptyChallengeSid", 60404, .invalidRequest, "no challenge SID was passed"),
        Case("InputError.invalidUpdateChallengePayload", 60404, .invalidRequest,
             "the update payload does not fit the factor type"),
        Case("InputError.emptyFactorSid", 60404, .invalidRequest, "no factor SID was passed"),
        Case("InputError.wrongFactor", 60404, .invalidRequest, "the challenge belongs to another factor"),
        Case("InputError.invalidFactor", 60404, .notEnrolled, "the factor is not on this device: enrol again"),
        Case("InputError.signatureFields", 60404, .providerError,
             "the fetched challenge did not say which fields to sign (Twilio-Verify-Signature-Fields)"),
        // `NetworkError` (public), wrapped in 60401.
        Case("NetworkError.invalidURL", 60401, .providerError, "the SDK built an invalid URL"),
        Case("NetworkError.invalidBody", 60401, .providerError, "the SDK could not encode the request body"),
        Case("NetworkError.invalidResponse", 60401, .providerError, "Twilio's answer could not be read"),
        Case("NetworkError.failureStatusCode", 60401, .providerError,
             "Twilio refused the call: its APIError code decides, through the Twilio table; this row is the fallback"),
        Case("NetworkError.invalidData", 60401, .providerError, "the answer carried no usable data"),
        // Internal causes (not public, but visible in `originalError`).
        Case("MapperError.invalidDate", 60402, .providerError, "a date in Twilio's answer could not be read"),
        Case("MapperError.invalidArgument", 60402, .providerError, "ServiceSid or Identity is null or empty"),
        Case("MapperError.illegalArgument", 60402, .providerError, "invalid factor type in the data"),
        Case("StorageError.error", 60403, .providerError, "the device storage failed"),
        Case("SecureStorageError", 60403, .providerError, "the keychain-backed storage failed"),
        Case("JwtSignerError.invalidFormat", 60407, .appVerificationFailed,
             "the signature was not in the expected format, so no JWT could be made"),
        Case("AuthenticationError.invalidFactor", 60407, .notEnrolled, "the factor to authenticate with is not on the device"),
        Case("AuthenticationError.invalidKeyPair", 60407, .appVerificationFailed, "the factor's key pair is unusable"),
        Case("KeychainError.unexpectedError", 60405, .appVerificationFailed, "keychain failure"),
        Case("KeychainError.unableToCopyItem", 60405, .appVerificationFailed, "the key could not be read"),
        Case("KeychainError.unableToGeneratePublicKey", 60405, .appVerificationFailed, "no public key could be made"),
        Case("KeychainError.unableToGeneratePrivateKey", 60405, .appVerificationFailed, "no private key could be made"),
        Case("KeychainError.invalidStatusCode", 60405, .appVerificationFailed, "the keychain answered an error status"),
        Case("KeychainError.errorCreatingAccessControl", 60405, .appVerificationFailed,
             "the key's access control could not be created"),
        Case("KeychainError.invalidProtection", 60405, .appVerificationFailed, "the key's protection is not valid"),
        Case("KeychainError.createSignatureError", 60407, .appVerificationFailed, "signing with the factor key failed"),
        Case("KeyManagerError.invalidStatusCode", 60405, .appVerificationFailed, "the key manager answered an error status"),
    ]

    private static let byName: [String: Case] = Dictionary(
        cases.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    /// The case for an SDK error, by the name of its cause (`InputError.expiredChallenge`) or, without one,
    /// by its `TwilioVerifyError` code. A `NetworkError.failureStatusCode` that carries Twilio's own
    /// `APIError` code is mapped by that code through ``TwilioErrorMapping``.
    static func map(code: Int, cause: String?, apiErrorCode: Int? = nil, providerID: String) -> GatewayError {
        let vendor = GatewayError.VendorDetail(providerID: providerID, code: String(code), httpStatus: nil)
        if cause == "NetworkError.failureStatusCode", let apiErrorCode, TwilioErrorMapping.row(for: apiErrorCode) != nil
        {
            return TwilioErrorMapping.map(code: apiErrorCode, httpStatus: 400, retryAfter: nil, providerID: providerID)
        }
        let found =
            cause.flatMap { byName[$0] } ?? cases.first { $0.name.hasPrefix("TwilioVerifyError.") && $0.code == code }
        guard let found else {
            return GatewayError(.providerError, "The push SDK reported an unknown error (\(code)).", vendor: vendor)
        }
        return GatewayError(
            found.mapsTo, "\(TwilioErrorMapping.summary(of: found.mapsTo)) (push SDK \(code): \(found.name)).",
            vendor: vendor)
    }
}
