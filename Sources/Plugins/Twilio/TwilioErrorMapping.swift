import GatewayCore

/// The one table from Twilio's numeric error codes to the gateway taxonomy (docs/design.md §5).
///
/// Mapping is by the envelope's `code` and the HTTP status only, never by `message`: Twilio's
/// messages can carry the phone number. Each row cites its source key in the vendor notes `docs/vendors/twilio.md`.
/// The router's behaviour follows from the chosen code's class: `caller` and `verification` are
/// never failed over, `blocked` ends the attempt, `provider_transient` / `provider_permanent` may be
/// failed over before the vendor accepted the send.
enum TwilioErrorMapping {
    /// One Twilio code and what it becomes.
    struct Row: Sendable, Equatable {
        var code: Int
        /// Twilio's name for the code (docs/vendors/twilio.md §4.2 / §5), for docs and messages.
        var name: String
        var mapsTo: GatewayError.Code
        /// Where docs/vendors/twilio.md documents the code (its source key).
        var source: String
        /// Why this code, where the choice is ours.
        var note: String

        init(_ code: Int, _ name: String, _ mapsTo: GatewayError.Code, _ source: String, _ note: String = "") {
            self.code = code
            self.name = name
            self.mapsTo = mapsTo
            self.source = source
            self.note = note
        }
    }

    /// Every code of docs/vendors/twilio.md §4.2 (ranges expanded) and the push SDK's 60401–60407 (§5).
    // The table reads best one row per entry, so the formatter leaves it alone.
    // swift-format-ignore
    static let rows: [Row] = [
        // Account, auth and platform (REST 2xxxx).
        Row(20003, "Permission Denied", .providerAuthFailed, "[ERR-20003]",
            "bad SID/token/API key or suspended account: fail over, alert"),
        Row(20403, "Forbidden", .providerAuthFailed, "[ERR-20403]",
            "the account lacks API access or is suspended: an account problem, fail over and alert"),
        Row(20404, "Not Found", .notFound, "[ERR-20404]",
            "unknown SID, or a VE soft-deleted after approval/expiry: the user must start again"),
        Row(20429, "Too Many Requests", .providerRateLimited, "[ERR-20429]",
            "account concurrency exceeded; not processed, safe to retry or fail over"),
        Row(20500, "Internal Server Error", .providerUnavailable, "[ERRJSON]", "platform fault: retry, fail over"),
        Row(20503, "Service unavailable", .providerUnavailable, "[ERR-20503]", "platform fault: retry with back-off"),
        // Messaging codes Verify surfaces.
        Row(21211, "Invalid 'To' Phone Number", .invalidPhoneNumber, "[SIGNAL]", "user input error: no failover"),
        Row(21408, "Messaging geo-permission disabled for destination region", .providerRejected, "[ERR-21408]",
            "account geo permissions: another vendor may reach the destination, so fail over"),
        Row(21610, "Attempt to send to unsubscribed recipient", .destinationBlocked, "[ERR-21610]",
            "the recipient opted out (STOP): an opt-out is honoured, never routed around"),
        Row(21612, "'To' not reachable via SMS", .unsupportedDestination, "[ERRJSON]",
            "not SMS-reachable: the caller should try voice"),
        Row(21614, "'To' number is not a valid mobile number", .unsupportedDestination, "[ERR-21614]",
            "landline: the caller should try voice"),
        Row(30450, "Message delivery blocked", .destinationBlocked, "[ERRJSON]",
            "SMS pumping protection: a fraud block, never failed over"),
        // Verify (6xxxx).
        Row(60001, "Downstream Authentication Failed", .providerRejected, "[ERRJSON]",
            "the endpoint (SNA) is not enabled for the account: configuration, fail over"),
        Row(60008, "Unsupported Carrier", .unsupportedDestination, "[ERRJSON]",
            "SNA cannot reach this carrier: use an OTP channel"),
        Row(60200, "Invalid parameter", .invalidRequest, "[ERR-60200]",
            "a parameter (To, Channel, Code…) is invalid"),
        Row(60201, "Selected template translation not approved", .providerRejected, "[ERRLIST]",
            "template configuration"),
        Row(60202, "Max check attempts reached", .maxAttemptsReached, "[ERR-60202]",
            "more than 5 checks: the user must start over"),
        Row(60203, "Max send attempts reached", .maxSendsReached, "[ERR-60203]",
            "more than 5 sends in the window: an anti-abuse limit that failover would defeat"),
        Row(60204, "Service does not support this feature", .providerRejected, "[ERR-60204]",
            "service configuration"),
        Row(60205, "SMS not supported by landline", .unsupportedDestination, "[ERR-60205]",
            "landline: the caller should try voice"),
        Row(60206, "'Amount' & 'Payee' required", .providerRejected, "[ERRJSON]",
            "the service is PSD2-enabled, which the gateway's API cannot serve: configuration"),
        Row(60207, "Max rate limits per service reached", .providerRejected, "[ERRJSON]", "rate-limit configuration"),
        Row(60208, "Rate limit with this UniqueName already exists", .providerRejected, "[ERRJSON]",
            "rate-limit configuration"),
        Row(60209, "Invalid rate limit UniqueName", .providerRejected, "[ERRJSON]", "rate-limit configuration"),
        Row(60210, "Max buckets per rate limit reached", .providerRejected, "[ERRJSON]", "rate-limit configuration"),
        Row(60211, "Bucket with this interval already exists", .providerRejected, "[ERRJSON]",
            "rate-limit configuration"),
        Row(60212, "Too many concurrent requests for phone number", .concurrentVerification, "[ERR-60212]",
            "back off; likely abuse, so not failed over"),
        Row(60213, "Messaging Configuration already exists for country", .providerRejected, "[ERRJSON]",
            "service configuration"),
        Row(60214, "Call channel not supported with PSD2", .providerRejected, "[ERRJSON]",
            "the PSD2 service cannot call: another vendor may"),
        Row(60215, "Max mailers per account reached", .providerRejected, "[ERRJSON]", "email configuration"),
        Row(60216, "API key encrypt/decrypt error", .providerError, "[ERRLIST]", "a fault inside Twilio"),
        Row(60217, "Invalid Service configuration", .providerRejected, "[ERRJSON]",
            "e.g. email without a mailer: fail over"),
        Row(60218, "SendGrid template is inactive", .providerRejected, "[ERRJSON]", "email configuration"),
        Row(60219, "SendGrid template is missing placeholders", .providerRejected, "[ERRJSON]", "email configuration"),
        Row(60220, "Messages to China require use-case vetting", .providerRejected, "[ERR-60220]",
            "fail over to a vendor able to reach +86"),
        Row(60221, "No target verification specified", .invalidRequest, "[ERR-60221]",
            "a check without To or VerificationSid"),
        Row(60222, "Email from-address not verified", .providerRejected, "[ERRJSON]", "email configuration"),
        Row(60223, "Delivery channel disabled", .providerRejected, "[ERR-60223]",
            "the channel is off in the service: another vendor may serve it"),
        Row(60224, "Missing substitutions for selected template", .providerRejected, "[ERRJSON]",
            "the service's default template needs values the gateway does not send: configuration"),
        Row(60225, "Translation already exists for template", .providerRejected, "[ERRJSON]",
            "template configuration"),
        Row(60226, "China requires friendly_name", .providerRejected, "[ERRJSON]", "service configuration"),
        Row(60227, "Template channel unsupported", .providerRejected, "[ERRJSON]", "template configuration"),
        Row(60228, "Template not found", .providerRejected, "[ERRJSON]", "template configuration"),
        Row(60229, "Template translation not found", .providerRejected, "[ERRJSON]", "template configuration"),
        Row(60238, "Verification creation attempt blocked by Twilio", .providerRejected, "[ERR-60238]",
            "account under review or a sanctioned destination: another vendor decides for itself"),
        // Verify Push and TOTP (603xx).
        Row(60300, "Invalid Param", .invalidRequest, "[ERR-60300]", "never processed; fix and retry"),
        Row(60301, "Entity already exists", .invalidRequest, "[ERRJSON]", "a duplicate create"),
        Row(60302, "FactorType already exists", .invalidRequest, "[ERRJSON]", "a duplicate create"),
        Row(60305, "Access Token parameters invalid", .invalidRequest, "[ERRJSON]", "request bug"),
        Row(60306, "Invalid Request", .invalidRequest, "[ERRJSON]", "request bug"),
        Row(60307, "Cannot resend push to 'none' platform", .invalidRequest, "[ERRJSON]",
            "the factor has no push platform to resend to"),
        Row(60308, "Challenge verification attempts limit reached", .maxAttemptsReached, "[ERR-60308]",
            "TOTP: 5 attempts per challenge; start a new challenge"),
        Row(60309, "Push notifications limit for a challenge reached", .maxSendsReached, "[ERRJSON]",
            "3 notifications per challenge; start a new challenge"),
        Row(60310, "Factor verification attempts reached", .maxAttemptsReached, "[ERR-60310]",
            "TOTP: 5 attempts per factor; re-enrol"),
        Row(60311, "Factor verification failed", .incorrectCode, "[ERR-60311]",
            "the enrolment proof (TOTP code or signature) was wrong"),
        Row(60312, "Challenge creation limit reached", .providerRateLimited, "[ERRJSON]", "back off"),
        Row(60313, "Unauthorized factor creation", .appVerificationFailed, "[ERRJSON]",
            "the device's access token was not accepted"),
        Row(60314, "Factor binding format invalid", .invalidRequest, "[ERRJSON]", "bad public key or secret"),
        Row(60315, "Max factors per entity reached", .invalidRequest, "[ERRJSON]",
            "the user must remove factors first"),
        Row(60317, "Factor already exists", .invalidRequest, "[ERRJSON]", "a duplicate create"),
        Row(60318, "Factor is unverified", .appVerificationRequired, "[ERR-60318]",
            "the app must verify the factor before it can be challenged"),
        Row(60322, "Challenge already responded", .canceled, "[ERRJSON]",
            "the response may have been a denial, so never read as approval: settle as canceled"),
        Row(60323, "Challenge expired", .expired, "[ERR-60323]", "start a new challenge"),
        Row(60324, "Challenge verification failed", .incorrectCode, "[ERR-60324]",
            "bad AuthPayload (signature or TOTP code)"),
        Row(60325, "Locale translation missing, default used", .providerRejected, "[ERRJSON]",
            "a warning in Twilio's dictionary; if it ever fails a request, the content configuration is at fault"),
        Row(60326, "Too many requests to create factors for the entity", .providerRateLimited, "[ERRJSON]",
            "back off"),
        Row(60329, "SNA does not work with psd2_enabled", .providerRejected, "[ERRJSON]", "service configuration"),
        Row(60330, "Failed to invoke the webhook", .providerRejected, "[ERRJSON]", "webhook configuration"),
        Row(60331, "Locale not supported by Text-To-Speech", .providerRejected, "[ERRJSON]",
            "the voice locale is unavailable at Twilio; another vendor may speak it"),
        Row(60333, "Brandless template used", .providerRejected, "[ERRJSON]",
            "a warning in Twilio's dictionary; if it ever fails a request, the template configuration is at fault"),
        Row(60383, "Illegal factor status", .invalidRequest, "[ERR-60383]", "the factor must be re-enrolled"),
        Row(60390, "Factor not found", .notEnrolled, "[AE]", "re-enrol"),
        // The push SDK's client-side categories (twilio-verify-ios `TwilioVerifyError`, docs/vendors/twilio.md §5).
        Row(60401, "Push SDK network error", .providerUnavailable, "[IOS]",
            "the device could not reach Twilio: transient"),
        Row(60402, "Push SDK mapper error", .providerError, "[IOS]",
            "the SDK could not map Twilio's answer: an unexpected vendor answer"),
        Row(60403, "Push SDK storage error", .providerError, "[IOS]",
            "the device failed to store or load an entity: a transient client fault, not a rejected proof"),
        Row(60404, "Push SDK input error", .invalidRequest, "[IOS]",
            "invalid input (expired or already-updated challenge, wrong factor, bad payload)"),
        Row(60405, "Push SDK key storage error", .appVerificationFailed, "[IOS]",
            "the factor's key pair is unusable, so the device cannot prove possession: re-enrol"),
        Row(60406, "Push SDK initialization error", .providerError, "[IOS]",
            "the SDK failed to initialise: a transient client fault, retry"),
        Row(60407, "Push SDK authentication token error", .appVerificationFailed, "[IOS]",
            "the device could not sign its authentication token, so its proof fails"),
        // Verify (6040x–606xx, 68xxx).
        Row(60408, "TemplateSid only supported for SMS", .providerRejected, "[ERRJSON]",
            "the service's template does not fit the channel: configuration"),
        Row(60409, "Custom message did not match any template", .providerRejected, "[ERRJSON]",
            "template configuration"),
        Row(60410, "Verification delivery attempt blocked (Fraud Guard)", .destinationBlocked, "[ERR-60410]",
            "fraud block: never failed over (docs/design.md §6)"),
        Row(60411, "Phone number already exists in the Safe List", .invalidRequest, "[ERRJSON]", "a duplicate create"),
        Row(60413, "Blocked by Verify Device Intelligence", .destinationBlocked, "[ERR-60413]", "fraud block"),
        Row(60500, "SNA phone number mismatch", .unsupportedChannel, "[AE]",
            "SNA only (the gateway does not offer it): use an OTP channel"),
        Row(60519, "SNA verification result pending", .unsupportedChannel, "[ERR-60519]",
            "SNA only (the gateway does not offer it): use an OTP channel"),
        Row(60531, "SNA carrier not detected", .unsupportedChannel, "[AE]",
            "SNA only (the gateway does not offer it): use an OTP channel"),
        Row(60600, "Unprovisioned or out of coverage", .providerRejected, "[ERRJSON]",
            "out of Twilio's coverage: fail over"),
        Row(60602, "App hash only supported with SMS channel", .invalidRequest, "[ERRJSON]", "request bug"),
        Row(60603, "SendGrid credits exceeded", .providerInsufficientFunds, "[ERRJSON]",
            "the email integration ran out of credit"),
        Row(60604, "SendGrid user not authorized", .providerAuthFailed, "[ERRJSON]",
            "the email integration's credentials"),
        Row(60605, "Verification delivery attempt blocked (Geo-Permissions)", .destinationBlocked, "[ERR-60605]",
            "geo block: never failed over (docs/design.md §6)"),
        Row(60610, "Outside coverage", .providerRejected, "[ERRJSON]", "out of Twilio's coverage: fail over"),
        Row(68008, "Verify WhatsApp channel not configured", .providerRejected, "[AE]",
            "another vendor may serve WhatsApp"),
    ]

    /// Who can meet a code: the gateway's own calls to Twilio (`backend`), only the device (`app`: the push
    /// SDK's client-side codes, and Twilio's answers to the device's own calls that create or verify a
    /// factor or answer a challenge), or both.
    enum Audience: String, Sendable {
        case backend, app, both
    }

    /// Codes only an app sees: the gateway never creates or verifies a factor, nor answers a challenge.
    static let appOnlyCodes: Set<Int> = [
        60302, 60308, 60310, 60311, 60313, 60314, 60315, 60317, 60322, 60324, 60326, 60383,
        60401, 60402, 60403, 60404, 60405, 60406, 60407,
    ]
    /// Codes both see: authentication, platform faults, unknown resources, bad parameters, expiry.
    static let sharedCodes: Set<Int> = [20003, 20404, 20429, 20500, 20503, 60300, 60306, 60323, 60390]

    static func audience(of code: Int) -> Audience {
        if appOnlyCodes.contains(code) { return .app }
        if sharedCodes.contains(code) { return .both }
        return .backend
    }

    private static let byCode: [Int: Row] = Dictionary(
        rows.map { ($0.code, $0) }, uniquingKeysWith: { first, _ in first })

    /// The row for a Twilio code, if the table has one.
    static func row(for code: Int) -> Row? { byCode[code] }

    /// Maps a Twilio error answer to a ``GatewayError``.
    ///
    /// A known `code` decides; otherwise the HTTP status does (401/403 → `provider_auth_failed`,
    /// 404 → `not_found`, 429 → `provider_rate_limited`, 5xx → `provider_unavailable`, other 4xx →
    /// `provider_rejected`, anything else → `provider_error`). The Twilio code and status are kept in
    /// ``GatewayError/vendor``; the message never repeats Twilio's text.
    static func map(code: Int?, httpStatus: Int, retryAfter: Int?, providerID: String) -> GatewayError {
        let vendor = GatewayError.VendorDetail(
            providerID: providerID, code: code.map(String.init), httpStatus: httpStatus)
        let mapped: GatewayError.Code
        var message: String
        if let code, let row = byCode[code] {
            mapped = row.mapsTo
            message = "\(summary(of: mapped)) (Twilio \(code): \(row.name))"
        } else {
            mapped = fallback(httpStatus: httpStatus)
            message = summary(of: mapped)
            message += code.map { " (Twilio \($0), HTTP \(httpStatus))" } ?? " (HTTP \(httpStatus))"
        }
        return GatewayError(
            mapped, message + ".", vendor: vendor,
            attemptsRemaining: mapped == .maxAttemptsReached ? 0 : nil,
            retryAfter: retryAfter)
    }

    /// The code for an HTTP status when the Twilio code is missing or unknown.
    static func fallback(httpStatus: Int) -> GatewayError.Code {
        .forVendorStatus(httpStatus)
    }

    /// A message for the caller that names the situation, never Twilio's own text.
    static func summary(of code: GatewayError.Code) -> String {
        switch code {
        case .invalidRequest: return "Twilio rejected the request as invalid"
        case .invalidPhoneNumber: return "Twilio rejected the phone number"
        case .unsupportedChannel: return "Twilio cannot use this channel for this verification"
        case .unsupportedDestination: return "Twilio cannot deliver to this destination on this channel"
        case .appVerificationRequired: return "Twilio needs the app to finish its verification first"
        case .appVerificationFailed: return "Twilio did not accept the app's proof"
        case .destinationBlocked: return "Twilio blocked delivery to this destination"
        case .incorrectCode: return "The code is not correct"
        case .maxAttemptsReached: return "Too many checks for this verification; start a new one"
        case .expired: return "The verification has expired; start a new one"
        case .notFound: return "Twilio does not know this verification; it may have expired or been approved"
        case .alreadyApproved: return "The verification is already approved"
        case .canceled: return "The verification was already answered or canceled"
        case .concurrentVerification: return "Too many verifications are starting for this destination at once"
        case .maxSendsReached:
            return "Too many codes were sent to this destination; wait for the current one to expire"
        case .providerUnavailable: return "Twilio is unavailable"
        case .providerTimeout: return "Twilio did not answer in time"
        case .providerRateLimited: return "Twilio is rate limiting the gateway"
        case .providerAuthFailed: return "Twilio did not accept the gateway's credentials or account"
        case .providerInsufficientFunds: return "The Twilio account has run out of credit"
        case .providerRejected:
            return "Twilio refused the request because of its account or service configuration"
        case .deliveryFailed: return "Twilio could not deliver the code"
        case .providerError: return "Twilio answered in an unexpected way"
        case .notEnrolled: return "No enrolled push factor can take this verification"
        case .denied: return "The user denied the request on their device"
        default: return "Twilio returned an error"
        }
    }
}
