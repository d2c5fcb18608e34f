import GatewayCore

/// The one table from Twilio's numeric error codes to the gateway taxonomy (docs/design.md §5).
///
/// Mapping is by the envelope's `code` and the HTTP status only, never by `message`: Twilio's
/// messages can carry the phone number. Each row cites its source key in the vendor notes `docs/vendors/twilio.md`.
/// The router's behaviour follows from the chosen code's class: `caller` and `verification` are
/// never failed over, `blocked` ends the attempt, `provider_transient` / `provider_permanent` may be
/// failed over before the vendor accepted the send.
enum TwilioErrorMapping {
    /// The table: every row keyed by Twilio's code alone, whatever the status and operation.
    static let table = VendorErrorTable(
        vendor: "Twilio", rows: rows,
        summaries: [
            .unsupportedChannel: "Twilio cannot use this channel for this verification",
            .unsupportedDestination: "Twilio cannot deliver to this destination on this channel",
            .appVerificationRequired: "Twilio needs the app to finish its verification first",
            .appVerificationFailed: "Twilio did not accept the app's proof",
            .destinationBlocked: "Twilio blocked delivery to this destination",
            .maxAttemptsReached: "Too many checks for this verification; start a new one",
            .notFound: "Twilio does not know this verification; it may have expired or been approved",
            .alreadyApproved: "The verification is already approved",
            .canceled: "The verification was already answered or canceled",
            .concurrentVerification: "Too many verifications are starting for this destination at once",
            .maxSendsReached: "Too many codes were sent to this destination; wait for the current one to expire",
            .providerRejected: "Twilio refused the request because of its account or service configuration",
            .deliveryFailed: "Twilio could not deliver the code",
            .notEnrolled: "No enrolled push factor can take this verification",
            .denied: "The user denied the request on their device",
        ])

    /// One Twilio code (its source key in docs/vendors/twilio.md) and what it becomes.
    static func row(
        _ code: Int, _ name: String, _ mapsTo: GatewayError.Code, _ source: String, _ note: String
    ) -> VendorErrorRow {
        VendorErrorRow(code: String(code), name: name, mapsTo: mapsTo, source: source, note: note)
    }

    /// Every code of docs/vendors/twilio.md §4.2 (ranges expanded) and the push SDK's 60401–60407 (§5).
    // The table reads best one row per entry, so the formatter leaves it alone.
    // swift-format-ignore
    static let rows: [VendorErrorRow] = [
        // Account, auth and platform (REST 2xxxx).
        row(20003, "Permission Denied", .providerAuthFailed, "[ERR-20003]",
            "bad SID/token/API key or suspended account: fail over, alert"),
        row(20403, "Forbidden", .providerAuthFailed, "[ERR-20403]",
            "the account lacks API access or is suspended: an account problem, fail over and alert"),
        row(20404, "Not Found", .notFound, "[ERR-20404]",
            "unknown SID, or a VE soft-deleted after approval/expiry: the user must start again"),
        row(20429, "Too Many Requests", .providerRateLimited, "[ERR-20429]",
            "account concurrency exceeded; not processed, safe to retry or fail over"),
        row(20500, "Internal Server Error", .providerUnavailable, "[ERRJSON]", "platform fault: retry, fail over"),
        row(20503, "Service unavailable", .providerUnavailable, "[ERR-20503]", "platform fault: retry with back-off"),
        // Messaging codes Verify surfaces.
        row(21211, "Invalid 'To' Phone Number", .invalidPhoneNumber, "[SIGNAL]", "user input error: no failover"),
        row(21408, "Messaging geo-permission disabled for destination region", .providerRejected, "[ERR-21408]",
            "account geo permissions: another vendor may reach the destination, so fail over"),
        row(21610, "Attempt to send to unsubscribed recipient", .destinationBlocked, "[ERR-21610]",
            "the recipient opted out (STOP): an opt-out is honoured, never routed around"),
        row(21612, "'To' not reachable via SMS", .unsupportedDestination, "[ERRJSON]",
            "not SMS-reachable: the caller should try voice"),
        row(21614, "'To' number is not a valid mobile number", .unsupportedDestination, "[ERR-21614]",
            "landline: the caller should try voice"),
        row(30450, "Message delivery blocked", .destinationBlocked, "[ERRJSON]",
            "SMS pumping protection: a fraud block, never failed over"),
        // Verify (6xxxx).
        row(60001, "Downstream Authentication Failed", .providerRejected, "[ERRJSON]",
            "the endpoint (SNA) is not enabled for the account: configuration, fail over"),
        row(60008, "Unsupported Carrier", .unsupportedDestination, "[ERRJSON]",
            "SNA cannot reach this carrier: use an OTP channel"),
        row(60200, "Invalid parameter", .invalidRequest, "[ERR-60200]",
            "a parameter (To, Channel, Code…) is invalid"),
        row(60201, "Selected template translation not approved", .providerRejected, "[ERRLIST]",
            "template configuration"),
        row(60202, "Max check attempts reached", .maxAttemptsReached, "[ERR-60202]",
            "more than 5 checks: the user must start over"),
        row(60203, "Max send attempts reached", .maxSendsReached, "[ERR-60203]",
            "more than 5 sends in the window: an anti-abuse limit that failover would defeat"),
        row(60204, "Service does not support this feature", .providerRejected, "[ERR-60204]",
            "service configuration"),
        row(60205, "SMS not supported by landline", .unsupportedDestination, "[ERR-60205]",
            "landline: the caller should try voice"),
        row(60206, "'Amount' & 'Payee' required", .providerRejected, "[ERRJSON]",
            "the service is PSD2-enabled, which the gateway's API cannot serve: configuration"),
        row(60207, "Max rate limits per service reached", .providerRejected, "[ERRJSON]", "rate-limit configuration"),
        row(60208, "Rate limit with this UniqueName already exists", .providerRejected, "[ERRJSON]",
            "rate-limit configuration"),
        row(60209, "Invalid rate limit UniqueName", .providerRejected, "[ERRJSON]", "rate-limit configuration"),
        row(60210, "Max buckets per rate limit reached", .providerRejected, "[ERRJSON]", "rate-limit configuration"),
        row(60211, "Bucket with this interval already exists", .providerRejected, "[ERRJSON]",
            "rate-limit configuration"),
        row(60212, "Too many concurrent requests for phone number", .concurrentVerification, "[ERR-60212]",
            "back off; likely abuse, so not failed over"),
        row(60213, "Messaging Configuration already exists for country", .providerRejected, "[ERRJSON]",
            "service configuration"),
        row(60214, "Call channel not supported with PSD2", .providerRejected, "[ERRJSON]",
            "the PSD2 service cannot call: another vendor may"),
        row(60215, "Max mailers per account reached", .providerRejected, "[ERRJSON]", "email configuration"),
        row(60216, "API key encrypt/decrypt error", .providerError, "[ERRLIST]", "a fault inside Twilio"),
        row(60217, "Invalid Service configuration", .providerRejected, "[ERRJSON]",
            "e.g. email without a mailer: fail over"),
        row(60218, "SendGrid template is inactive", .providerRejected, "[ERRJSON]", "email configuration"),
        row(60219, "SendGrid template is missing placeholders", .providerRejected, "[ERRJSON]", "email configuration"),
        row(60220, "Messages to China require use-case vetting", .providerRejected, "[ERR-60220]",
            "fail over to a vendor able to reach +86"),
        row(60221, "No target verification specified", .invalidRequest, "[ERR-60221]",
            "a check without To or VerificationSid"),
        row(60222, "Email from-address not verified", .providerRejected, "[ERRJSON]", "email configuration"),
        row(60223, "Delivery channel disabled", .providerRejected, "[ERR-60223]",
            "the channel is off in the service: another vendor may serve it"),
        row(60224, "Missing substitutions for selected template", .providerRejected, "[ERRJSON]",
            "the service's default template needs values the gateway does not send: configuration"),
        row(60225, "Translation already exists for template", .providerRejected, "[ERRJSON]",
            "template configuration"),
        row(60226, "China requires friendly_name", .providerRejected, "[ERRJSON]", "service configuration"),
        row(60227, "Template channel unsupported", .providerRejected, "[ERRJSON]", "template configuration"),
        row(60228, "Template not found", .providerRejected, "[ERRJSON]", "template configuration"),
        row(60229, "Template translation not found", .providerRejected, "[ERRJSON]", "template configuration"),
        row(60238, "Verification creation attempt blocked by Twilio", .providerRejected, "[ERR-60238]",
            "account under review or a sanctioned destination: another vendor decides for itself"),
        // Verify Push and TOTP (603xx).
        row(60300, "Invalid Param", .invalidRequest, "[ERR-60300]", "never processed; fix and retry"),
        row(60301, "Entity already exists", .invalidRequest, "[ERRJSON]", "a duplicate create"),
        row(60302, "FactorType already exists", .invalidRequest, "[ERRJSON]", "a duplicate create"),
        row(60305, "Access Token parameters invalid", .invalidRequest, "[ERRJSON]", "request bug"),
        row(60306, "Invalid Request", .invalidRequest, "[ERRJSON]", "request bug"),
        row(60307, "Cannot resend push to 'none' platform", .invalidRequest, "[ERRJSON]",
            "the factor has no push platform to resend to"),
        row(60308, "Challenge verification attempts limit reached", .maxAttemptsReached, "[ERR-60308]",
            "TOTP: 5 attempts per challenge; start a new challenge"),
        row(60309, "Push notifications limit for a challenge reached", .maxSendsReached, "[ERRJSON]",
            "3 notifications per challenge; start a new challenge"),
        row(60310, "Factor verification attempts reached", .maxAttemptsReached, "[ERR-60310]",
            "TOTP: 5 attempts per factor; re-enrol"),
        row(60311, "Factor verification failed", .incorrectCode, "[ERR-60311]",
            "the enrolment proof (TOTP code or signature) was wrong"),
        row(60312, "Challenge creation limit reached", .providerRateLimited, "[ERRJSON]", "back off"),
        row(60313, "Unauthorized factor creation", .appVerificationFailed, "[ERRJSON]",
            "the device's access token was not accepted"),
        row(60314, "Factor binding format invalid", .invalidRequest, "[ERRJSON]", "bad public key or secret"),
        row(60315, "Max factors per entity reached", .invalidRequest, "[ERRJSON]",
            "the user must remove factors first"),
        row(60317, "Factor already exists", .invalidRequest, "[ERRJSON]", "a duplicate create"),
        row(60318, "Factor is unverified", .appVerificationRequired, "[ERR-60318]",
            "the app must verify the factor before it can be challenged"),
        row(60322, "Challenge already responded", .canceled, "[ERRJSON]",
            "the response may have been a denial, so never read as approval: settle as canceled"),
        row(60323, "Challenge expired", .expired, "[ERR-60323]", "start a new challenge"),
        row(60324, "Challenge verification failed", .incorrectCode, "[ERR-60324]",
            "bad AuthPayload (signature or TOTP code)"),
        row(60325, "Locale translation missing, default used", .providerRejected, "[ERRJSON]",
            "a warning in Twilio's dictionary; if it ever fails a request, the content configuration is at fault"),
        row(60326, "Too many requests to create factors for the entity", .providerRateLimited, "[ERRJSON]",
            "back off"),
        row(60329, "SNA does not work with psd2_enabled", .providerRejected, "[ERRJSON]", "service configuration"),
        row(60330, "Failed to invoke the webhook", .providerRejected, "[ERRJSON]", "webhook configuration"),
        row(60331, "Locale not supported by Text-To-Speech", .providerRejected, "[ERRJSON]",
            "the voice locale is unavailable at Twilio; another vendor may speak it"),
        row(60333, "Brandless template used", .providerRejected, "[ERRJSON]",
            "a warning in Twilio's dictionary; if it ever fails a request, the template configuration is at fault"),
        row(60383, "Illegal factor status", .invalidRequest, "[ERR-60383]", "the factor must be re-enrolled"),
        row(60390, "Factor not found", .notEnrolled, "[AE]", "re-enrol"),
        // The push SDK's client-side categories (twilio-verify-ios `TwilioVerifyError`, docs/vendors/twilio.md §5).
        row(60401, "Push SDK network error", .providerUnavailable, "[IOS]",
            "the device could not reach Twilio: transient"),
        row(60402, "Push SDK mapper error", .providerError, "[IOS]",
            "the SDK could not map Twilio's answer: an unexpected vendor answer"),
        row(60403, "Push SDK storage error", .providerError, "[IOS]",
            "the device failed to store or load an entity: a transient client fault, not a rejected proof"),
        row(60404, "Push SDK input error", .invalidRequest, "[IOS]",
            "invalid input (expired or already-updated challenge, wrong factor, bad payload)"),
        row(60405, "Push SDK key storage error", .appVerificationFailed, "[IOS]",
            "the factor's key pair is unusable, so the device cannot prove possession: re-enrol"),
        row(60406, "Push SDK initialization error", .providerError, "[IOS]",
            "the SDK failed to initialise: a transient client fault, retry"),
        row(60407, "Push SDK authentication token error", .appVerificationFailed, "[IOS]",
            "the device could not sign its authentication token, so its proof fails"),
        // Verify (6040x–606xx, 68xxx).
        row(60408, "TemplateSid only supported for SMS", .providerRejected, "[ERRJSON]",
            "the service's template does not fit the channel: configuration"),
        row(60409, "Custom message did not match any template", .providerRejected, "[ERRJSON]",
            "template configuration"),
        row(60410, "Verification delivery attempt blocked (Fraud Guard)", .destinationBlocked, "[ERR-60410]",
            "fraud block: never failed over (docs/design.md §6)"),
        row(60411, "Phone number already exists in the Safe List", .invalidRequest, "[ERRJSON]", "a duplicate create"),
        row(60413, "Blocked by Verify Device Intelligence", .destinationBlocked, "[ERR-60413]", "fraud block"),
        row(60500, "SNA phone number mismatch", .unsupportedChannel, "[AE]",
            "SNA only (the gateway does not offer it): use an OTP channel"),
        row(60519, "SNA verification result pending", .unsupportedChannel, "[ERR-60519]",
            "SNA only (the gateway does not offer it): use an OTP channel"),
        row(60531, "SNA carrier not detected", .unsupportedChannel, "[AE]",
            "SNA only (the gateway does not offer it): use an OTP channel"),
        row(60600, "Unprovisioned or out of coverage", .providerRejected, "[ERRJSON]",
            "out of Twilio's coverage: fail over"),
        row(60602, "App hash only supported with SMS channel", .invalidRequest, "[ERRJSON]", "request bug"),
        row(60603, "SendGrid credits exceeded", .providerInsufficientFunds, "[ERRJSON]",
            "the email integration ran out of credit"),
        row(60604, "SendGrid user not authorized", .providerAuthFailed, "[ERRJSON]",
            "the email integration's credentials"),
        row(60605, "Verification delivery attempt blocked (Geo-Permissions)", .destinationBlocked, "[ERR-60605]",
            "geo block: never failed over (docs/design.md §6)"),
        row(60610, "Outside coverage", .providerRejected, "[ERRJSON]", "out of Twilio's coverage: fail over"),
        row(68008, "Verify WhatsApp channel not configured", .providerRejected, "[AE]",
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

    /// The row for a Twilio code, if the table has one.
    static func row(for code: Int) -> VendorErrorRow? { table.row(code: String(code)) }

    /// Maps a Twilio error answer to a ``GatewayError``.
    ///
    /// A known `code` decides; otherwise the HTTP status does (401/403 → `provider_auth_failed`,
    /// 404 → `not_found`, 429 → `provider_rate_limited`, 5xx → `provider_unavailable`, other 4xx →
    /// `provider_rejected`, anything else → `provider_error`). The Twilio code and status are kept in
    /// ``GatewayError/vendor``; the message never repeats Twilio's text.
    static func map(code: Int?, httpStatus: Int, retryAfter: Int?, providerID: String) -> GatewayError {
        let found = code.flatMap(row(for:))
        let detail =
            if let code, let found { "Twilio \(code): \(found.name)" } else {
                code.map { "Twilio \($0), HTTP \(httpStatus)" } ?? "HTTP \(httpStatus)"
            }
        return table.error(
            found?.mapsTo ?? .forVendorStatus(httpStatus), detail: detail, vendorCode: code.map(String.init),
            httpStatus: httpStatus, providerID: providerID, retryAfter: retryAfter)
    }

    /// A message for the caller that names the situation, never Twilio's own text.
    static func summary(of code: GatewayError.Code) -> String { table.summary(of: code) }
}
