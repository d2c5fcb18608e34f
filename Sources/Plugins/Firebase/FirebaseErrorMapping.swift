import GatewayCore

/// The one table from Identity Toolkit's structured error fields to the gateway taxonomy (docs/design.md §5).
///
/// Identity Toolkit's structured field is the server string at the head of `error.message`
/// (`INVALID_CODE`, or `QUOTA_EXCEEDED : detail`): only the part before the colon is read, never the
/// detail. Google-level key problems carry no server string; they are read from `error.errors[].reason`
/// (docs/vendors/firebase.md §3.1). Anything else falls back to the HTTP status. Each row cites its source key in
/// the vendor notes `docs/vendors/firebase.md` and names the iOS `AuthErrorCode` an app team knew it by.
enum FirebaseErrorMapping {
    /// A value of the iOS SDK's `AuthErrorCode` (domain `FIRAuthErrorDomain`, docs/vendors/firebase.md §3.2).
    struct AuthErrorCode: Sendable, Equatable {
        var rawValue: Int
        var name: String

        init(_ rawValue: Int, _ name: String) {
            self.rawValue = rawValue
            self.name = name
        }

        /// What the iOS SDK reports for a server string its switch does not know.
        static let internalError = AuthErrorCode(17999, "internalError")
    }

    /// Which structured field a row matches.
    enum Field: String, Sendable, Equatable {
        /// The server string at the head of `error.message`.
        case serverString
        /// A Google-level `error.errors[].reason`, matched as a prefix (`keyInvalid…`).
        case reason
    }

    /// A row of the table: a server string (exact) or a Google-level reason (its own vocabulary, a prefix),
    /// with what the iOS SDK reports for it, and the code the SDK raises itself for the same situation, under
    /// ``VendorErrorRow/related`` (`ios`, `ios_client`: `17044 invalidVerificationCode`).
    static func row(
        _ value: String, _ mapsTo: GatewayError.Code, ios: AuthErrorCode, clientSide: AuthErrorCode? = nil,
        field: Field = .serverString, _ source: String, _ note: String
    ) -> VendorErrorRow {
        var related = ["ios": "\(ios.rawValue) \(ios.name)"]
        if let clientSide { related["ios_client"] = "\(clientSide.rawValue) \(clientSide.name)" }
        return VendorErrorRow(
            vocabulary: field == .reason ? Field.reason.rawValue : "", code: value,
            match: field == .reason ? .prefix : .exact, name: value, mapsTo: mapsTo, source: source, note: note,
            related: related)
    }

    /// Every server string of docs/vendors/firebase.md §3.2 (the reCAPTCHA Enterprise family expanded from the iOS
    /// codes 17200–17207), the Google-level key reasons of §3.1, and the strings of the multi-factor methods
    /// (Identity Toolkit v2, docs/firebase.md): those the Auth Emulator answers there ([EMU] `operations.ts`
    /// `mfaSignInStart`, `mfaSignInFinalize`, `mfaEnrollmentStart`, `mfaEnrollmentFinalize`) and those the iOS
    /// and JS SDKs map ([IOS] `AuthBackend.swift`, [JS] `api/errors.ts`).
    ///
    /// Principles for the choices that are ours: a string about a field the gateway always fills
    /// (`sessionInfo`) or a flow it never uses (`temporaryProof`, linking with `idToken`) is
    /// `provider_error`: an answer the gateway did not expect, which never blames the caller. A missing or
    /// rejected app proof is the caller's (`app_verification_required` / `_failed`); project configuration
    /// is `provider_rejected` (fail over, alert).
    static let rows: [VendorErrorRow] = [
        // Input.
        row(
            "INVALID_PHONE_NUMBER", .invalidPhoneNumber, ios: AuthErrorCode(17042, "invalidPhoneNumber"),
            "[EMU] [IOS] [JS]", "not E.164, or missing on send; user input, never failed over"),
        row(
            "MISSING_CODE", .invalidRequest, ios: .internalError,
            clientSide: AuthErrorCode(17043, "missingVerificationCode"), "[EMU] [IOS]",
            "sign-in without a code: the caller sent none"),
        row(
            "MISSING_SESSION_INFO", .providerError, ios: .internalError,
            clientSide: AuthErrorCode(17045, "missingVerificationID"), "[EMU] [IOS]",
            "the gateway always sends the stored sessionInfo, so this answer is unexpected"),
        row(
            "MISSING_PHONE_NUMBER", .providerError, ios: .internalError,
            clientSide: AuthErrorCode(17041, "missingPhoneNumber"), "[EMU] [IOS]",
            "only for sign-in with a temporaryProof, a flow the gateway never uses"),
        // The code and the session.
        row(
            "INVALID_CODE", .incorrectCode, ios: AuthErrorCode(17044, "invalidVerificationCode"), "[EMU] [IOS] [JS]",
            "wrong code; a check answers `pending` and the gateway counts the attempt"),
        row(
            "INVALID_SESSION_INFO", .expired, ios: AuthErrorCode(17046, "invalidVerificationID"), "[EMU] [IOS]",
            "unknown or already used sessionInfo: the verification cannot be checked any more; start again"),
        row(
            "SESSION_EXPIRED", .expired, ios: AuthErrorCode(17051, "sessionExpired"), "[IOS] [JS]",
            "the SMS code expired (lifetime not published); start again"),
        row(
            "CODE_EXPIRED", .expired, ios: .internalError, "[JS]",
            "not confirmed as a server string (JS's client code auth/code-expired); treated as SESSION_EXPIRED"),
        row(
            "INVALID_TEMPORARY_PROOF", .providerError, ios: .internalError, "[EMU] [JS]",
            "only for sign-in with a temporaryProof, a flow the gateway never uses"),
        // Throttling and quota.
        row(
            "TOO_MANY_ATTEMPTS_TRY_LATER", .rateLimited, ios: AuthErrorCode(17010, "tooManyRequests"),
            "[OBS] [IOS] [ADMIN]",
            "device, IP or number throttled for unusual activity, on send and on sign-in; Firebase says "
                + "\"try later\" and documents no per-session attempt cap, so it is a throttle on the caller "
                + "(back off, never routed around), not a final verdict; the gateway's own attempt limit "
                + "gives max_attempts_reached"),
        row(
            "QUOTA_EXCEEDED", .providerRateLimited, ios: AuthErrorCode(17052, "quotaExceeded"), "[OBS] [IOS]",
            "project SMS quota or per-number/per-IP quota exhausted; nothing was sent, so failing over is safe"),
        // App verification (docs/vendors/firebase.md §2.1: the client must prove it is a real app).
        row(
            "CAPTCHA_CHECK_FAILED", .appVerificationFailed, ios: AuthErrorCode(17056, "captchaCheckFailed"),
            "[IOS] [JS]", "reCAPTCHA token invalid, expired, used or for another domain: the client re-solves"),
        row(
            "INVALID_APP_CREDENTIAL", .appVerificationFailed, ios: AuthErrorCode(17048, "invalidAppCredential"),
            "[OBS] [IOS]", "the app proof (reCAPTCHA, APNs receipt, Play Integrity) is invalid or expired"),
        row(
            "APP_NOT_VERIFIED", .appVerificationFailed, ios: AuthErrorCode(17055, "appNotVerified"), "[IOS]",
            "app verification failed"),
        row(
            "MISSING_APP_CREDENTIAL", .appVerificationRequired, ios: AuthErrorCode(17047, "missingAppCredential"),
            "[IOS] [JS]", "no app-verifier assertion"),
        row(
            "MISSING_CLIENT_IDENTIFIER", .appVerificationRequired,
            ios: AuthErrorCode(17093, "missingClientIdentifier"), "[IOS] [NODE-1894]",
            "no Play Integrity or reCAPTCHA proof: what a backend calling alone gets"),
        row(
            "MISSING_IOS_APP_TOKEN", .appVerificationRequired, ios: AuthErrorCode(17053, "missingAppToken"),
            "[IOS]", "the iOS APNs token is missing"),
        // reCAPTCHA Enterprise enforcement. docs/vendors/firebase.md marks the exact server strings partly uncertain;
        // those not quoted there are spelled from the iOS code names.
        row(
            "RECAPTCHA_NOT_ENABLED", .providerRejected, ios: AuthErrorCode(17200, "recaptchaNotEnabled"),
            "[IOS] (string inferred)", "reCAPTCHA Enterprise is not enabled for the project: configuration"),
        row(
            "MISSING_RECAPTCHA_TOKEN", .appVerificationRequired, ios: AuthErrorCode(17201, "missingRecaptchaToken"),
            "[IOS] [JS]", "the project enforces reCAPTCHA Enterprise: send a recaptcha_enterprise proof"),
        row(
            "INVALID_RECAPTCHA_TOKEN", .appVerificationFailed, ios: AuthErrorCode(17202, "invalidRecaptchaToken"),
            "[IOS] [JS]", "the reCAPTCHA Enterprise token was not accepted"),
        row(
            "INVALID_RECAPTCHA_ACTION", .appVerificationFailed,
            ios: AuthErrorCode(17203, "invalidRecaptchaAction"), "[IOS] (string inferred)",
            "the token was made for another reCAPTCHA action"),
        row(
            "MISSING_CLIENT_TYPE", .appVerificationRequired, ios: AuthErrorCode(17204, "missingClientType"),
            "[IOS] [JS]",
            "enterprise enforcement without the enterprise fields: the caller sent another proof kind"),
        row(
            "MISSING_RECAPTCHA_VERSION", .appVerificationRequired,
            ios: AuthErrorCode(17205, "missingRecaptchaVersion"), "[IOS] (string inferred)",
            "enterprise enforcement without the enterprise fields: the caller sent another proof kind"),
        row(
            "INVALID_RECAPTCHA_VERSION", .appVerificationRequired,
            ios: AuthErrorCode(17206, "invalidRecaptchaVersion"), "[IOS] [JS]",
            "the project wants another reCAPTCHA version than the proof's"),
        row(
            "INVALID_REQ_TYPE", .providerError, ios: AuthErrorCode(17207, "invalidReqType"),
            "[IOS] (string inferred)", "the gateway sets no request type, so this answer is unexpected"),
        // Project and account configuration.
        row(
            "OPERATION_NOT_ALLOWED", .providerRejected, ios: AuthErrorCode(17006, "operationNotAllowed"),
            "[OBS] [IOS]", "phone sign-in disabled, or the SMS region policy blocks the destination: fail over"),
        row(
            "PROJECT_DISABLED", .providerRejected, ios: .internalError, "[EMU]",
            "auth disabled for the project (production equivalence uncertain): configuration"),
        row(
            "UNSUPPORTED_TENANT_OPERATION", .providerRejected,
            ios: AuthErrorCode(17073, "unsupportedTenantOperation"), "[EMU] [IOS]", "tenant misuse: configuration"),
        row(
            "TENANT_ID_MISMATCH", .providerRejected, ios: AuthErrorCode(17072, "tenantIDMismatch"), "[IOS]",
            "tenant misuse: configuration"),
        // The Firebase account behind the number.
        row(
            "USER_DISABLED", .destinationBlocked, ios: AuthErrorCode(17005, "userDisabled"), "[EMU] [IOS]",
            "the code was right but the project disabled the user behind this number: terminal, never routed "
                + "around (`forbidden` is the gateway's own API-key scope error)"),
        row(
            "UNSUPPORTED_FIRST_FACTOR", .unsupportedDestination, ios: AuthErrorCode(17089, "unsupportedFirstFactor"),
            "[EMU] [IOS] [JS]",
            "phone sign-in: the number is an SMS second factor of another user and cannot sign in with it; "
                + "enrollment: the user signed in with a method that cannot take a second factor (phone, anonymous)"),
        row(
            "PHONE_NUMBER_EXISTS", .providerError, ios: .internalError, "[EMU] [ADMIN]",
            "only when linking a phone to a signed-in user, which the gateway never does"),
        // The ID token of an enrollment (`multi_factor.id_token`); the gateway sends none on phone sign-in.
        row(
            "INVALID_ID_TOKEN", .invalidToken, ios: AuthErrorCode(17017, "invalidUserToken"), "[EMU] [IOS]",
            "the enrollment's id_token is not a valid ID token of the project: sign the user in again"),
        row(
            "TOKEN_EXPIRED", .invalidToken, ios: AuthErrorCode(17021, "userTokenExpired"), "[EMU] [IOS]",
            "the enrollment's id_token was revoked (or expired): sign the user in again"),
        row(
            "USER_NOT_FOUND", .invalidToken, ios: AuthErrorCode(17011, "userNotFound"), "[EMU] [IOS]",
            "the user of the enrollment's id_token no longer exists"),
        row(
            "MISSING_ID_TOKEN", .providerError, ios: .internalError, "[EMU]",
            "an enrollment without an idToken: the gateway always sends multi_factor.id_token, so this answer is "
                + "unexpected"),
        // Multi-factor sign-in and enrollment (Identity Toolkit v2).
        row(
            "MISSING_MFA_PENDING_CREDENTIAL", .providerError,
            ios: AuthErrorCode(17081, "missingMultiFactorSession"), "[EMU] [IOS] [JS] [IDP-ERR]",
            "mfaSignIn:start without a pending credential: the gateway always sends multi_factor.pending_credential"),
        row(
            "MISSING_MFA_ENROLLMENT_ID", .providerError, ios: AuthErrorCode(17082, "missingMultiFactorInfo"),
            "[EMU] [IOS] [JS] [IDP-ERR]",
            "mfaSignIn:start without an enrollment id: the gateway always sends multi_factor.enrollment_id"),
        row(
            "MISSING_CREDENTIAL", .providerError, ios: .internalError, "[EMU]",
            "mfaSignIn:finalize without the pending credential (the Auth Emulator notes production answers this "
                + "string there): the gateway always sends the one the start was given"),
        row(
            "INVALID_MFA_PENDING_CREDENTIAL", .invalidToken, ios: AuthErrorCode(17083, "invalidMultiFactorSession"),
            "[IOS] [JS] [IDP-ERR]",
            "the first factor's pending credential is malformed or has expired: sign in with the first factor "
                + "again; at a check the verification ends `expired`"),
        row(
            "INVALID_PROJECT_ID", .invalidToken, ios: .internalError, "[EMU]",
            "the pending credential belongs to another project; at a check the verification ends `expired`"),
        row(
            "MFA_ENROLLMENT_NOT_FOUND", .notEnrolled, ios: AuthErrorCode(17084, "multiFactorInfoNotFound"),
            "[EMU] [IOS] [JS] [IDP-ERR]",
            "multi_factor.enrollment_id names none of the user's second factors (or the factor was removed); at a "
                + "check the verification ends `expired`"),
        row(
            "SECOND_FACTOR_EXISTS", .invalidRequest, ios: AuthErrorCode(17087, "secondFactorAlreadyEnrolled"),
            "[EMU] [IOS] [JS]",
            "the number is already one of this user's second factors; at a check (another enrollment of the "
                + "number finished first) the verification ends `expired`"),
        row(
            "SECOND_FACTOR_LIMIT_EXCEEDED", .invalidRequest,
            ios: AuthErrorCode(17088, "maximumSecondFactorCountExceeded"), "[IOS] [JS]",
            "the user has as many second factors as Firebase allows: remove one first"),
        row(
            "UNVERIFIED_EMAIL", .invalidRequest, ios: AuthErrorCode(17086, "unverifiedEmail"), "[EMU] [IOS]",
            "Firebase enrolls second factors only for users whose email address is verified"),
        row(
            "INVALID_ARGUMENT", .invalidRequest, ios: .internalError, "[EMU]",
            "the Auth Emulator's answer when the enrollment id names a factor that is not a phone (TOTP: \"MFA "
                + "provider not supported\") or a phone step lacks its phone info, which the gateway always sends"),
        // Google-level key problems (no server string; error.errors[].reason).
        row(
            "keyInvalid", .providerAuthFailed, ios: AuthErrorCode(17023, "invalidAPIKey"), field: .reason, "[IOS]",
            "the API key is not valid (any reason starting with keyInvalid): fail over, alert"),
        row(
            "ipRefererBlocked", .providerAuthFailed, ios: AuthErrorCode(17028, "appNotAuthorized"), field: .reason,
            "[IOS]", "the API key's restrictions refuse the gateway's requests: fail over, alert"),
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

    /// The row for a server string, if the table has one.
    static func row(forServerString value: String) -> VendorErrorRow? { table.row(code: value) }

    /// The row for a Google-level `errors[].reason`, matched as a prefix (`keyInvalid` covers
    /// `keyInvalidForProject`-style variants).
    static func row(forReason reason: String) -> VendorErrorRow? {
        table.row(vocabulary: Field.reason.rawValue, code: reason)
    }

    /// Maps an error answer to a ``GatewayError``.
    ///
    /// The server string at the head of `error.message` decides when the table knows it; then a known
    /// `errors[].reason`; otherwise the HTTP status (401/403 → `provider_auth_failed`, 404 → `not_found`,
    /// 429 → `provider_rate_limited`, 5xx → `provider_unavailable`, other 4xx → `provider_rejected`,
    /// anything else → `provider_error`). The server string (or reason) and the status are kept in
    /// ``GatewayError/vendor``; the message never repeats Google's text.
    static func map(
        envelope: FirebaseWire.ErrorEnvelope?, httpStatus: Int, retryAfter: Int?, providerID: String
    ) -> GatewayError {
        let serverString = FirebaseWire.serverCode(fromMessage: envelope?.error.message)
        let reasons = (envelope?.error.errors ?? []).compactMap(\.reason)
        var found = serverString.flatMap(row(forServerString:)).map { ($0, $0.value) }
        if found == nil, let reason = reasons.first(where: { row(forReason: $0) != nil }) {
            found = row(forReason: reason).map { ($0, reason) }
        }
        guard let (row, vendorCode) = found else {
            let vendorCode = serverString ?? reasons.first.flatMap { isBounded($0) ? $0 : nil }
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

    /// Whether a Google `reason` is short, plain ASCII: safe to keep as the vendor code.
    private static func isBounded(_ value: String) -> Bool {
        (1...64).contains(value.count)
            && value.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
            }
    }

    /// A message for the caller that names the situation, never Google's own text.
    static func summary(of code: GatewayError.Code) -> String { table.summary(of: code) }
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
        return FirebaseErrorMapping.AuthErrorCode(value, String(parts[1]))
    }
}
