import GatewayCore

/// Twilio's numeric error codes in the gateway taxonomy, keyed by the envelope's `code` alone (never by
/// `message`, which can carry the phone number). Each row cites its source key in `docs/vendors/twilio.md`;
/// `docs/errors.md` says why each maps as it does.
enum TwilioErrorMapping {
    static let table = VendorErrorTable(
        vendor: "Twilio", rows: rows,
        summaries: [
            .unsupportedDestination: "Twilio cannot deliver to this destination on this channel",
            .destinationBlocked: "Twilio blocked delivery to this destination",
            .maxAttemptsReached: "Too many checks for this verification; start a new one",
            .notFound: "Twilio does not know this verification; it may have expired or been approved",
            .concurrentVerification: "Too many verifications are starting for this destination at once",
            .providerRejected: "Twilio refused the request because of its account or service configuration",
            .notEnrolled: "No enrolled push factor can take this verification",
            .denied: "The user denied the request on their device",
        ])

    static func row(_ code: Int, _ name: String, _ mapsTo: GatewayError.Code, _ source: String) -> VendorErrorRow {
        VendorErrorRow(code: String(code), name: name, mapsTo: mapsTo, source: source)
    }

    /// Every code of docs/vendors/twilio.md §4.2 (ranges expanded) and the push SDK's 60401–60407 (§5).
    // swift-format-ignore
    static let rows: [VendorErrorRow] = [
        // Account, auth and platform (REST 2xxxx).
        row(20003, "Permission Denied", .providerAuthFailed, "[ERR-20003]"),
        row(20403, "Forbidden", .providerAuthFailed, "[ERR-20403]"),
        row(20404, "Not Found", .notFound, "[ERR-20404]"),
        row(20429, "Too Many Requests", .providerRateLimited, "[ERR-20429]"),
        row(20500, "Internal Server Error", .providerUnavailable, "[ERRJSON]"),
        row(20503, "Service unavailable", .providerUnavailable, "[ERR-20503]"),
        // Messaging codes Verify surfaces.
        row(21211, "Invalid 'To' Phone Number", .invalidPhoneNumber, "[SIGNAL]"),
        row(21408, "Messaging geo-permission disabled for destination region", .providerRejected, "[ERR-21408]"),
        row(21610, "Attempt to send to unsubscribed recipient", .destinationBlocked, "[ERR-21610]"),
        row(21612, "'To' not reachable via SMS", .unsupportedDestination, "[ERRJSON]"),
        row(21614, "'To' number is not a valid mobile number", .unsupportedDestination, "[ERR-21614]"),
        row(30450, "Message delivery blocked", .destinationBlocked, "[ERRJSON]"),
        // Programmable Messaging (the own codes' sends, docs/vendors/twilio-messaging.md §7): synchronous refusals
        // of a create, then the carrier's answers a message's `error_code` and its status callbacks carry.
        row(14107, "SMS send-rate limit exceeded", .providerRateLimited, "[MSG]"),
        row(20005, "Account not active", .providerInsufficientFunds, "[MSG]"),
        row(21606, "'From' is not a message-capable number for this destination", .providerRejected, "[MSG]"),
        row(21608, "Trial accounts may only send to verified numbers", .providerRejected, "[MSG]"),
        row(21617, "Concatenated message body exceeds the 1600 character limit", .providerRejected, "[MSG]"),
        row(30001, "Queue overflow", .providerRateLimited, "[MSG]"),
        row(30002, "Account suspended", .providerInsufficientFunds, "[MSG]"),
        row(30003, "Unreachable destination handset", .deliveryFailed, "[MSG]"),
        row(30004, "Message blocked", .destinationBlocked, "[MSG]"),
        row(30005, "Unknown destination handset", .deliveryFailed, "[MSG]"),
        row(30006, "Landline or unreachable carrier", .unsupportedDestination, "[MSG]"),
        row(30007, "Message filtered", .providerRejected, "[MSG]"),
        row(30008, "Unknown error", .deliveryFailed, "[MSG]"),
        row(30018, "Destination carrier requires sender ID pre-registration", .providerRejected, "[MSG]"),
        row(30022, "US A2P 10DLC rate limit exceeded", .providerRateLimited, "[MSG]"),
        row(30023, "US A2P 10DLC daily cap reached", .providerRateLimited, "[MSG]"),
        row(30032, "Toll-free number not verified", .providerRejected, "[MSG]"),
        row(30034, "Message from an unregistered 10DLC number", .providerRejected, "[MSG]"),
        // Verify (6xxxx).
        row(60001, "Downstream Authentication Failed", .providerRejected, "[ERRJSON]"),
        row(60008, "Unsupported Carrier", .unsupportedDestination, "[ERRJSON]"),
        row(60200, "Invalid parameter", .invalidRequest, "[ERR-60200]"),
        row(60201, "Selected template translation not approved", .providerRejected, "[ERRLIST]"),
        row(60202, "Max check attempts reached", .maxAttemptsReached, "[ERR-60202]"),
        row(60203, "Max send attempts reached", .maxSendsReached, "[ERR-60203]"),
        row(60204, "Service does not support this feature", .providerRejected, "[ERR-60204]"),
        row(60205, "SMS not supported by landline", .unsupportedDestination, "[ERR-60205]"),
        row(60206, "'Amount' & 'Payee' required", .providerRejected, "[ERRJSON]"),
        row(60207, "Max rate limits per service reached", .providerRejected, "[ERRJSON]"),
        row(60208, "Rate limit with this UniqueName already exists", .providerRejected, "[ERRJSON]"),
        row(60209, "Invalid rate limit UniqueName", .providerRejected, "[ERRJSON]"),
        row(60210, "Max buckets per rate limit reached", .providerRejected, "[ERRJSON]"),
        row(60211, "Bucket with this interval already exists", .providerRejected, "[ERRJSON]"),
        row(60212, "Too many concurrent requests for phone number", .concurrentVerification, "[ERR-60212]"),
        row(60213, "Messaging Configuration already exists for country", .providerRejected, "[ERRJSON]"),
        row(60214, "Call channel not supported with PSD2", .providerRejected, "[ERRJSON]"),
        row(60215, "Max mailers per account reached", .providerRejected, "[ERRJSON]"),
        row(60216, "API key encrypt/decrypt error", .providerError, "[ERRLIST]"),
        row(60217, "Invalid Service configuration", .providerRejected, "[ERRJSON]"),
        row(60218, "SendGrid template is inactive", .providerRejected, "[ERRJSON]"),
        row(60219, "SendGrid template is missing placeholders", .providerRejected, "[ERRJSON]"),
        row(60220, "Messages to China require use-case vetting", .providerRejected, "[ERR-60220]"),
        row(60221, "No target verification specified", .invalidRequest, "[ERR-60221]"),
        row(60222, "Email from-address not verified", .providerRejected, "[ERRJSON]"),
        row(60223, "Delivery channel disabled", .providerRejected, "[ERR-60223]"),
        row(60224, "Missing substitutions for selected template", .providerRejected, "[ERRJSON]"),
        row(60225, "Translation already exists for template", .providerRejected, "[ERRJSON]"),
        row(60226, "China requires friendly_name", .providerRejected, "[ERRJSON]"),
        row(60227, "Template channel unsupported", .providerRejected, "[ERRJSON]"),
        row(60228, "Template not found", .providerRejected, "[ERRJSON]"),
        row(60229, "Template translation not found", .providerRejected, "[ERRJSON]"),
        row(60238, "Verification creation attempt blocked by Twilio", .providerRejected, "[ERR-60238]"),
        // Verify Push and TOTP (603xx).
        row(60300, "Invalid Param", .invalidRequest, "[ERR-60300]"),
        row(60301, "Entity already exists", .invalidRequest, "[ERRJSON]"),
        row(60302, "FactorType already exists", .invalidRequest, "[ERRJSON]"),
        row(60305, "Access Token parameters invalid", .invalidRequest, "[ERRJSON]"),
        row(60306, "Invalid Request", .invalidRequest, "[ERRJSON]"),
        row(60307, "Cannot resend push to 'none' platform", .invalidRequest, "[ERRJSON]"),
        row(60308, "Challenge verification attempts limit reached", .maxAttemptsReached, "[ERR-60308]"),
        row(60309, "Push notifications limit for a challenge reached", .maxSendsReached, "[ERRJSON]"),
        row(60310, "Factor verification attempts reached", .maxAttemptsReached, "[ERR-60310]"),
        row(60311, "Factor verification failed", .incorrectCode, "[ERR-60311]"),
        row(60312, "Challenge creation limit reached", .providerRateLimited, "[ERRJSON]"),
        row(60313, "Unauthorized factor creation", .appVerificationFailed, "[ERRJSON]"),
        row(60314, "Factor binding format invalid", .invalidRequest, "[ERRJSON]"),
        row(60315, "Max factors per entity reached", .invalidRequest, "[ERRJSON]"),
        row(60317, "Factor already exists", .invalidRequest, "[ERRJSON]"),
        row(60318, "Factor is unverified", .appVerificationRequired, "[ERR-60318]"),
        row(60322, "Challenge already responded", .canceled, "[ERRJSON]"),
        row(60323, "Challenge expired", .expired, "[ERR-60323]"),
        row(60324, "Challenge verification failed", .incorrectCode, "[ERR-60324]"),
        row(60325, "Locale translation missing, default used", .providerRejected, "[ERRJSON]"),
        row(60326, "Too many requests to create factors for the entity", .providerRateLimited, "[ERRJSON]"),
        row(60329, "SNA does not work with psd2_enabled", .providerRejected, "[ERRJSON]"),
        row(60330, "Failed to invoke the webhook", .providerRejected, "[ERRJSON]"),
        row(60331, "Locale not supported by Text-To-Speech", .providerRejected, "[ERRJSON]"),
        row(60333, "Brandless template used", .providerRejected, "[ERRJSON]"),
        row(60383, "Illegal factor status", .invalidRequest, "[ERR-60383]"),
        row(60390, "Factor not found", .notEnrolled, "[AE]"),
        // The push SDK's client-side categories (twilio-verify-ios `TwilioVerifyError`, docs/vendors/twilio.md §5).
        row(60401, "Push SDK network error", .providerUnavailable, "[IOS]"),
        row(60402, "Push SDK mapper error", .providerError, "[IOS]"),
        row(60403, "Push SDK storage error", .providerError, "[IOS]"),
        row(60404, "Push SDK input error", .invalidRequest, "[IOS]"),
        row(60405, "Push SDK key storage error", .appVerificationFailed, "[IOS]"),
        row(60406, "Push SDK initialization error", .providerError, "[IOS]"),
        row(60407, "Push SDK authentication token error", .appVerificationFailed, "[IOS]"),
        // Verify (6040x–606xx, 68xxx).
        row(60408, "TemplateSid only supported for SMS", .providerRejected, "[ERRJSON]"),
        row(60409, "Custom message did not match any template", .providerRejected, "[ERRJSON]"),
        row(60410, "Verification delivery attempt blocked (Fraud Guard)", .destinationBlocked, "[ERR-60410]"),
        row(60411, "Phone number already exists in the Safe List", .invalidRequest, "[ERRJSON]"),
        row(60413, "Blocked by Verify Device Intelligence", .destinationBlocked, "[ERR-60413]"),
        row(60500, "SNA phone number mismatch", .unsupportedChannel, "[AE]"),
        row(60519, "SNA verification result pending", .unsupportedChannel, "[ERR-60519]"),
        row(60531, "SNA carrier not detected", .unsupportedChannel, "[AE]"),
        row(60600, "Unprovisioned or out of coverage", .providerRejected, "[ERRJSON]"),
        row(60602, "App hash only supported with SMS channel", .invalidRequest, "[ERRJSON]"),
        row(60603, "SendGrid credits exceeded", .providerInsufficientFunds, "[ERRJSON]"),
        row(60604, "SendGrid user not authorized", .providerAuthFailed, "[ERRJSON]"),
        row(60605, "Verification delivery attempt blocked (Geo-Permissions)", .destinationBlocked, "[ERR-60605]"),
        row(60610, "Outside coverage", .providerRejected, "[ERRJSON]"),
        row(68008, "Verify WhatsApp channel not configured", .providerRejected, "[AE]"),
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

    static func row(for code: Int) -> VendorErrorRow? { table.row(anyStatus: String(code)) }

    /// A known `code` decides, else the HTTP status; Twilio's code and status stay in ``GatewayError/vendor``.
    static func map(code: Int?, httpStatus: Int, retryAfter: Int?, providerID: String) -> GatewayError {
        table.error(code: code.map(String.init), httpStatus: httpStatus, retryAfter: retryAfter, providerID: providerID)
    }
}
