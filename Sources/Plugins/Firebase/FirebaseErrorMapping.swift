import GatewayCore

/// The one table from Identity Toolkit's structured error fields to the gateway taxonomy; docs/errors.md gives each
/// row's reason.
///
/// The structured field is the server string at the head of `error.message` (`INVALID_CODE`, or
/// `QUOTA_EXCEEDED : detail`): only the part before the colon is read, never the detail. Google-level key problems
/// carry no server string; they are read from `error.errors[].reason` (docs/vendors/firebase.md §3.1). Anything else
/// falls back to the HTTP status. Each row cites its sources in the vendor notes (docs/vendors/firebase.md) and
/// names the iOS `AuthErrorCode` an app team knew it by.
enum FirebaseErrorMapping {
    /// A value of the iOS SDK's `AuthErrorCode` (domain `FIRAuthErrorDomain`, docs/vendors/firebase.md §3.2).
    struct AuthErrorCode: Sendable, Equatable {
        var rawValue: Int
        var name: String

        /// What the iOS SDK reports for a server string its switch does not know.
        static let internalError = AuthErrorCode(rawValue: 17999, name: "internalError")
    }

    /// Which structured field a row matches.
    enum Field: String, Sendable, Equatable {
        /// The server string at the head of `error.message`.
        case serverString
        /// A Google-level `error.errors[].reason`, matched as a prefix (`keyInvalid…`).
        case reason
    }

    /// A row: a server string (exact) or, with `reason`, a Google-level reason (its own vocabulary, a prefix); `ios`
    /// is what the iOS SDK reports for it (`17044 invalidVerificationCode`; its `internalError` when the SDK does not
    /// know the string), `client` the code the SDK raises itself for the same situation, both kept under
    /// ``VendorErrorRow/related``.
    static func row(
        _ value: String, _ mapsTo: GatewayError.Code, ios: String = "17999 internalError", client: String? = nil,
        reason: Bool = false, _ source: String
    ) -> VendorErrorRow {
        var related = ["ios": ios]
        related["ios_client"] = client
        return VendorErrorRow(
            vocabulary: reason ? Field.reason.rawValue : "", code: value, match: reason ? .prefix : .exact,
            name: value, mapsTo: mapsTo, source: source, related: related)
    }

    /// Every server string of docs/vendors/firebase.md §3.2 (the reCAPTCHA Enterprise family expanded from the iOS
    /// codes 17200–17207), the Google-level key reasons of §3.1, and the strings of the multi-factor methods
    /// (Identity Toolkit v2, docs/firebase.md): those the Auth Emulator answers there ([EMU] `operations.ts`) and
    /// those the iOS and JS SDKs map ([IOS] `AuthBackend.swift`, [JS] `api/errors.ts`). Where the choice is ours: a
    /// string about a field the gateway always fills or a flow it never uses is `provider_error`; a missing or
    /// rejected app proof is the caller's; project configuration is `provider_rejected`.
    static let rows: [VendorErrorRow] = [
        // Input.
        row("INVALID_PHONE_NUMBER", .invalidPhoneNumber, ios: "17042 invalidPhoneNumber", "[EMU] [IOS] [JS]"),
        row("MISSING_CODE", .invalidRequest, client: "17043 missingVerificationCode", "[EMU] [IOS]"),
        row("MISSING_SESSION_INFO", .providerError, client: "17045 missingVerificationID", "[EMU] [IOS]"),
        row("MISSING_PHONE_NUMBER", .providerError, client: "17041 missingPhoneNumber", "[EMU] [IOS]"),
        // The code and the session.
        row("INVALID_CODE", .incorrectCode, ios: "17044 invalidVerificationCode", "[EMU] [IOS] [JS]"),
        row("INVALID_SESSION_INFO", .expired, ios: "17046 invalidVerificationID", "[EMU] [IOS]"),
        row("SESSION_EXPIRED", .expired, ios: "17051 sessionExpired", "[IOS] [JS]"),
        row("CODE_EXPIRED", .expired, "[JS]"),
        row("INVALID_TEMPORARY_PROOF", .providerError, "[EMU] [JS]"),
        // Throttling and quota.
        row("TOO_MANY_ATTEMPTS_TRY_LATER", .rateLimited, ios: "17010 tooManyRequests", "[OBS] [IOS] [ADMIN]"),
        row("QUOTA_EXCEEDED", .providerRateLimited, ios: "17052 quotaExceeded", "[OBS] [IOS]"),
        // App verification (docs/vendors/firebase.md §2.1: the client must prove it is a real app).
        row("CAPTCHA_CHECK_FAILED", .appVerificationFailed, ios: "17056 captchaCheckFailed", "[IOS] [JS]"),
        row("INVALID_APP_CREDENTIAL", .appVerificationFailed, ios: "17048 invalidAppCredential", "[OBS] [IOS]"),
        row("APP_NOT_VERIFIED", .appVerificationFailed, ios: "17055 appNotVerified", "[IOS]"),
        row("MISSING_APP_CREDENTIAL", .appVerificationRequired, ios: "17047 missingAppCredential", "[IOS] [JS]"),
        row(
            "MISSING_CLIENT_IDENTIFIER", .appVerificationRequired, ios: "17093 missingClientIdentifier",
            "[IOS] [NODE-1894]"),
        row("MISSING_IOS_APP_TOKEN", .appVerificationRequired, ios: "17053 missingAppToken", "[IOS]"),
        // reCAPTCHA Enterprise enforcement. docs/vendors/firebase.md marks the exact server strings partly uncertain;
        // those not quoted there are spelled from the iOS code names.
        row("RECAPTCHA_NOT_ENABLED", .providerRejected, ios: "17200 recaptchaNotEnabled", "[IOS] (string inferred)"),
        row("MISSING_RECAPTCHA_TOKEN", .appVerificationRequired, ios: "17201 missingRecaptchaToken", "[IOS] [JS]"),
        row("INVALID_RECAPTCHA_TOKEN", .appVerificationFailed, ios: "17202 invalidRecaptchaToken", "[IOS] [JS]"),
        row(
            "INVALID_RECAPTCHA_ACTION", .appVerificationFailed, ios: "17203 invalidRecaptchaAction",
            "[IOS] (string inferred)"),
        row("MISSING_CLIENT_TYPE", .appVerificationRequired, ios: "17204 missingClientType", "[IOS] [JS]"),
        row(
            "MISSING_RECAPTCHA_VERSION", .appVerificationRequired, ios: "17205 missingRecaptchaVersion",
            "[IOS] (string inferred)"),
        row("INVALID_RECAPTCHA_VERSION", .appVerificationRequired, ios: "17206 invalidRecaptchaVersion", "[IOS] [JS]"),
        row("INVALID_REQ_TYPE", .providerError, ios: "17207 invalidReqType", "[IOS] (string inferred)"),
        // Project and account configuration.
        row("OPERATION_NOT_ALLOWED", .providerRejected, ios: "17006 operationNotAllowed", "[OBS] [IOS]"),
        row("PROJECT_DISABLED", .providerRejected, "[EMU]"),
        row("UNSUPPORTED_TENANT_OPERATION", .providerRejected, ios: "17073 unsupportedTenantOperation", "[EMU] [IOS]"),
        row("TENANT_ID_MISMATCH", .providerRejected, ios: "17072 tenantIDMismatch", "[IOS]"),
        // The Firebase account behind the number.
        row("USER_DISABLED", .destinationBlocked, ios: "17005 userDisabled", "[EMU] [IOS]"),
        row(
            "UNSUPPORTED_FIRST_FACTOR", .unsupportedDestination, ios: "17089 unsupportedFirstFactor", "[EMU] [IOS] [JS]"
        ),
        row("PHONE_NUMBER_EXISTS", .providerError, "[EMU] [ADMIN]"),
        // The ID token of an enrollment (`multi_factor.id_token`); the gateway sends none on phone sign-in.
        row("INVALID_ID_TOKEN", .invalidToken, ios: "17017 invalidUserToken", "[EMU] [IOS]"),
        row("TOKEN_EXPIRED", .invalidToken, ios: "17021 userTokenExpired", "[EMU] [IOS]"),
        row("USER_NOT_FOUND", .invalidToken, ios: "17011 userNotFound", "[EMU] [IOS]"),
        row("MISSING_ID_TOKEN", .providerError, "[EMU]"),
        // Multi-factor sign-in and enrollment (Identity Toolkit v2).
        row(
            "MISSING_MFA_PENDING_CREDENTIAL", .providerError, ios: "17081 missingMultiFactorSession",
            "[EMU] [IOS] [JS] [IDP-ERR]"),
        row(
            "MISSING_MFA_ENROLLMENT_ID", .providerError, ios: "17082 missingMultiFactorInfo",
            "[EMU] [IOS] [JS] [IDP-ERR]"),
        row("MISSING_CREDENTIAL", .providerError, "[EMU]"),
        row(
            "INVALID_MFA_PENDING_CREDENTIAL", .invalidToken, ios: "17083 invalidMultiFactorSession",
            "[IOS] [JS] [IDP-ERR]"),
        row("INVALID_PROJECT_ID", .invalidToken, "[EMU]"),
        row(
            "MFA_ENROLLMENT_NOT_FOUND", .notEnrolled, ios: "17084 multiFactorInfoNotFound", "[EMU] [IOS] [JS] [IDP-ERR]"
        ),
        row("SECOND_FACTOR_EXISTS", .invalidRequest, ios: "17087 secondFactorAlreadyEnrolled", "[EMU] [IOS] [JS]"),
        row(
            "SECOND_FACTOR_LIMIT_EXCEEDED", .invalidRequest, ios: "17088 maximumSecondFactorCountExceeded", "[IOS] [JS]"
        ),
        row("UNVERIFIED_EMAIL", .invalidRequest, ios: "17086 unverifiedEmail", "[EMU] [IOS]"),
        row("INVALID_ARGUMENT", .invalidRequest, "[EMU]"),
        // Google-level key problems (no server string; error.errors[].reason).
        row("keyInvalid", .providerAuthFailed, ios: "17023 invalidAPIKey", reason: true, "[IOS]"),
        row("ipRefererBlocked", .providerAuthFailed, ios: "17028 appNotAuthorized", reason: true, "[IOS]"),

    ]

    /// The caller's message for the rows whose code is shared by unlike situations, where the code's own
    /// summary would not say what happened.
    static let rowSummaries: [String: String] = [
        "UNSUPPORTED_FIRST_FACTOR":
            "Firebase refuses this first factor: the number is another user's second factor, "
            + "or the user's sign-in method cannot take a second factor",
        "INVALID_ID_TOKEN": "Firebase did not accept the user's ID token; sign the user in again",
        "TOKEN_EXPIRED": "The user's ID token has expired or was revoked; sign the user in again",
        "USER_NOT_FOUND": "The user of this ID token no longer exists",
        "INVALID_MFA_PENDING_CREDENTIAL":
            "The first-factor sign-in's pending credential is not valid or has expired; "
            + "sign in with the first factor again",
        "INVALID_PROJECT_ID": "The pending credential belongs to another Firebase project",
        "MFA_ENROLLMENT_NOT_FOUND": "The user has no second factor with this enrollment id",
        "SECOND_FACTOR_EXISTS": "This number is already a second factor of this user",
        "SECOND_FACTOR_LIMIT_EXCEEDED": "The user already has as many second factors as Firebase allows",
        "UNVERIFIED_EMAIL": "The user must verify their email address before enrolling a second factor",
    ]

    static let table = VendorErrorTable(
        vendor: "Firebase", rows: rows,
        summaries: [
            .unsupportedDestination: "Firebase cannot sign in with this number",
            .appVerificationRequired: "Firebase needs an app verification proof it accepts",
            .appVerificationFailed: "Firebase did not accept the app verification proof",
            .destinationBlocked: "Firebase refuses to sign in the user behind this number",
            .invalidToken: "Firebase did not accept a token the request carried",
            .notEnrolled: "Firebase knows no such second factor for this user",
            .rateLimited: "Firebase is throttling requests for this user or number; try again later",
            .expired: "The verification has expired or was already used; start a new one",
            .notFound: "Firebase does not know this resource",
            .providerRateLimited: "Firebase's SMS quota is exhausted",
            .providerAuthFailed: "Firebase did not accept the gateway's API key",
            .providerRejected: "Firebase refused the request because of the project's configuration",
        ])

    /// Maps an error answer: the server string at the head of `error.message` when the table knows it, then a known
    /// `errors[].reason`, otherwise the HTTP status (docs/errors.md). The message never repeats Google's text.
    static func map(
        envelope: FirebaseWire.ErrorEnvelope?, httpStatus: Int, retryAfter: Int?, providerID: String
    ) -> GatewayError {
        let serverString = FirebaseWire.serverCode(fromMessage: envelope?.error.message)
        let reasons = (envelope?.error.errors ?? []).compactMap(\.reason)
        // A reason row matches as a prefix: `keyInvalid` covers `keyInvalidForProject`-style variants.
        let byReason = reasons.lazy.compactMap { reason in
            table.row(vocabulary: Field.reason.rawValue, code: reason).map { ($0, reason) }
        }
        guard
            let (row, vendorCode) = serverString.flatMap({ table.row(code: $0) }).map({ ($0, $0.value) })
                ?? byReason.first
        else {
            let vendorCode = serverString ?? ASCIIText.token(reasons.first, extra: "_")
            return table.error(
                .forVendorStatus(httpStatus),
                detail: vendorCode.map { "Firebase \($0), HTTP \(httpStatus)" } ?? "HTTP \(httpStatus)",
                vendorCode: vendorCode, httpStatus: httpStatus, providerID: providerID, retryAfter: retryAfter)
        }
        var error = table.error(
            row.mapsTo, detail: "Firebase \(vendorCode)", vendorCode: vendorCode, httpStatus: httpStatus,
            providerID: providerID, retryAfter: retryAfter)
        if let summary = rowSummaries[row.value] { error.message = "\(summary) (Firebase \(vendorCode))." }
        return error
    }
}

extension VendorErrorRow {
    /// The server string or reason.
    var value: String { code ?? "" }
    var field: FirebaseErrorMapping.Field {
        vocabulary == FirebaseErrorMapping.Field.reason.rawValue ? .reason : .serverString
    }
    /// What the iOS SDK reports when the server answers this (``FirebaseErrorMapping/AuthErrorCode/internalError``
    /// when its switch does not know the string).
    var ios: FirebaseErrorMapping.AuthErrorCode { Self.authErrorCode(related["ios"]) ?? .internalError }
    /// The code the iOS SDK raises itself, before calling the server, for the same situation.
    var iosClientSide: FirebaseErrorMapping.AuthErrorCode? { Self.authErrorCode(related["ios_client"]) }

    private static func authErrorCode(_ text: String?) -> FirebaseErrorMapping.AuthErrorCode? {
        guard let parts = text?.split(separator: " "), parts.count == 2, let value = Int(parts[0]) else { return nil }
        return FirebaseErrorMapping.AuthErrorCode(rawValue: value, name: String(parts[1]))
    }
}
