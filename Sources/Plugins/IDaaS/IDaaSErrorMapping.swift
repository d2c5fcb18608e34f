import GatewayCore

/// The one table from IDaaS's `error_code` to the gateway taxonomy (docs/design.md §5).
///
/// IDaaS errors are HTTP 400 with `{"error_code", "error_msg"}` (docs/vendors/idaas.md §1; `COMMON.1008` is a 500), so
/// the
/// status says little: the mapping reads the body's `error_code`, never `error_msg` (it is localized by `X-L`
/// and `LOGIN.1005` embeds a count in it). Every code of the SDK's return-code table ([BC-IOS], ``sdkCodes``)
/// has an exact row in both families: `IDAAS.SDK.<group>.<n>` (CIAM) and `SDK.<group>.<n>` (EIAM, the same
/// numbering; the EIAM codes docs/vendors/idaas.md §3.2 records agree with it). A code no exact row knows is mapped by
/// its
/// group prefix; a code no prefix knows is `provider_error`. Without a readable code the HTTP status decides.
/// Each row cites its source key in the IDaaS vendor notes (docs/idaas.md).
enum IDaaSErrorMapping {
    enum Match: String, Sendable, Equatable {
        /// The whole `error_code`.
        case exact
        /// Any code that starts with the value (a group such as `IDAAS.SDK.LOGIN.`).
        case prefix
    }

    struct Row: Sendable, Equatable {
        var value: String
        var match: Match
        var mapsTo: GatewayError.Code
        var source: String
        var note: String
        /// The HTTP status IDaaS documents for the code, when it documents one.
        var vendorStatus: Int?

        init(_ value: String, _ mapsTo: GatewayError.Code, _ source: String, _ note: String) {
            self.init(value, mapsTo, .exact, source, note)
        }

        init(
            _ value: String, _ mapsTo: GatewayError.Code, _ match: Match, _ source: String, _ note: String,
            vendorStatus: Int? = nil
        ) {
            self.value = value
            self.match = match
            self.mapsTo = mapsTo
            self.source = source
            self.note = note
            self.vendorStatus = vendorStatus
        }
    }

    /// One code of the SDK's return-code table ([BC-IOS] "Return Codes"): group, number, the documented HTTP
    /// status and meaning, and what the gateway answers for it.
    struct SDKCode: Sendable, Equatable {
        var group: String
        var number: Int
        var httpStatus: Int
        var mapsTo: GatewayError.Code
        var meaning: String
        var note: String

        init(
            _ group: String, _ number: Int, _ httpStatus: Int, _ mapsTo: GatewayError.Code, _ meaning: String,
            _ note: String
        ) {
            self.group = group
            self.number = number
            self.httpStatus = httpStatus
            self.mapsTo = mapsTo
            self.meaning = meaning
            self.note = note
        }

        /// `IDAAS.SDK.COMMON.1001`.
        var ciam: String { "IDAAS.SDK.\(group).\(number)" }
        /// `SDK.COMMON.1001`.
        var eiam: String { "SDK.\(group).\(number)" }
    }

    /// The 43 codes of the SDK's return-code table, in its order ([BC-IOS] "Return Codes").
    static let sdkCodes: [SDKCode] = [
        SDKCode("COMMON", 1001, 400, .providerRejected, "parameter missing (blank)",
            "the gateway always sends the request's own parameters, so a blank one is the provider's "
                + "configuration (the EIAM example: X-client-id blank)"),
        SDKCode("COMMON", 1002, 400, .invalidRequest, "parameter format incorrect",
            "a value IDaaS refused the form of (the number, the code)"),
        SDKCode("COMMON", 1003, 400, .invalidRequest, "device information incomplete",
            "the client context lacks what the tenant requires"),
        SDKCode("COMMON", 1004, 400, .providerRejected, "signature decryption error",
            "the tenant wants signed requests: configuration"),
        SDKCode("COMMON", 1005, 400, .expired, "a value has expired",
            "on a check the SMS code expired; at the slider a fresh slider follows"),
        SDKCode("COMMON", 1006, 400, .invalidRequest, "parameter error",
            "a parameter IDaaS refused"),
        SDKCode("COMMON", 1007, 400, .invalidRequest, "parameter type error",
            "a parameter of the wrong type"),
        SDKCode("COMMON", 1008, 500, .providerUnavailable, "system busy, try again later",
            "HTTP 500: retry, or fail over before a send"),
        SDKCode("COMMON", 1009, 400, .providerRejected, "unknown authentication configuration",
            "tenant configuration: fail over, alert"),
        SDKCode("COMMON", 1010, 400, .providerRejected, "enterprise center global configuration unavailable",
            "tenant configuration: fail over, alert"),
        SDKCode("COMMON", 1011, 400, .providerRejected, "area code configuration unavailable",
            "tenant configuration: fail over, alert"),
        SDKCode("COMMON", 1012, 400, .providerAuthFailed, "X-client-id wrong, no such application",
            "the provider's client_id is wrong: fail over, alert"),
        SDKCode("COMMON", 1013, 400, .notEnrolled, "user not found",
            "no user with this number at the tenant"),
        SDKCode("COMMON", 1014, 400, .providerRejected, "application private key not found",
            "tenant configuration: fail over, alert"),
        SDKCode("LOGIN", 1001, 400, .providerError, "error calling an interface",
            "a failure inside IDaaS: retryable"),
        SDKCode("LOGIN", 1002, 400, .notEnrolled, "user not bound",
            "the user is not bound to this application"),
        SDKCode("LOGIN", 1003, 400, .accountLocked, "user locked after too many failed sign-ins",
            "the user is locked at IDaaS; a check cannot succeed until IDaaS unlocks it"),
        SDKCode("LOGIN", 1004, 400, .providerError, "password policy unavailable",
            "a failure inside IDaaS: retryable"),
        SDKCode("LOGIN", 1005, 400, .incorrectCode, "wrong credential, remaining attempts in the text",
            "a wrong code: counted as an attempt; the count in error_msg is not read"),
        SDKCode("LOGIN", 1006, 400, .providerRejected, "WeChat authentication source not configured",
            "tenant configuration: fail over, alert"),
        SDKCode("LOGIN", 1007, 400, .providerRejected, "Alipay authentication source not configured",
            "tenant configuration: fail over, alert"),
        SDKCode("LOGIN", 1008, 400, .providerRejected, "one-click login source not configured",
            "tenant configuration: fail over, alert"),
        SDKCode("SMS", 1001, 400, .providerRejected, "slider base image not initialized",
            "the tenant's slider images are misconfigured: fail over, alert"),
        SDKCode("SMS", 1002, 400, .appVerificationFailed, "slider coordinates unreadable",
            "a fresh slider follows, nothing is sent"),
        SDKCode("SMS", 1003, 400, .appVerificationFailed, "slider coordinates wrong",
            "a fresh slider follows, nothing is sent"),
        SDKCode("SMS", 1004, 400, .appVerificationFailed, "graphic code wrong",
            "a fresh slider follows, nothing is sent"),
        SDKCode("SMS", 1005, 400, .incorrectCode, "SMS code wrong",
            "a wrong code: counted as an attempt"),
        SDKCode("SMS", 1006, 400, .incorrectCode, "email code wrong",
            "a wrong code: counted as an attempt"),
        SDKCode("SMS", 1007, 400, .providerRejected, "sending scenario does not exist",
            "the tenant lacks the sms_type scenario: fail over, alert"),
        SDKCode("SMS", 1008, 400, .deliveryFailed, "failed to send the code",
            "retryable; fail over before a send"),
        SDKCode("SOCIAL", 1001, 400, .providerError, "social account unbinding error",
            "social login, a flow the gateway never uses"),
        SDKCode("SOCIAL", 1002, 400, .providerError, "social account already bound",
            "social login, a flow the gateway never uses"),
        SDKCode("PWD", 1001, 400, .denied, "password length wrong",
            "the tenant's password policy blocks the sign-in"),
        SDKCode("PWD", 1002, 400, .denied, "password equals the username",
            "the tenant's password policy blocks the sign-in"),
        SDKCode("PWD", 1003, 400, .denied, "password complexity low",
            "the tenant's password policy blocks the sign-in"),
        SDKCode("PWD", 1004, 400, .denied, "password weak",
            "the tenant's password policy blocks the sign-in"),
        SDKCode("PWD", 1005, 400, .denied, "password used before",
            "the tenant's password policy blocks the sign-in"),
        SDKCode("PWD", 1006, 400, .denied, "password is the username reversed",
            "the tenant's password policy blocks the sign-in"),
        SDKCode("PWD", 1007, 400, .denied, "too many repeated password characters",
            "the tenant's password policy blocks the sign-in"),
        SDKCode("PWD", 1008, 400, .denied, "password contains user data",
            "the tenant's password policy blocks the sign-in"),
        SDKCode("MFA", 1001, 400, .denied, "mobile does not match the user",
            "the number is not the user's second factor"),
        SDKCode("MFA", 1002, 400, .providerRejected, "access control policy misconfigured",
            "tenant configuration: fail over, alert"),
        SDKCode("MFA", 1003, 400, .providerRejected, "access control source type conversion error",
            "tenant configuration: fail over, alert"),
    ]

    /// Codes outside the SDK's table: the CIAM server's `PARAM`/`CAPTCHA` examples, the sandbox's own, `USER.0001`.
    static let otherRows: [Row] = [
        // CIAM server examples (docs/vendors/idaas.md §3.1).
        Row(
            "IDAAS.SDK.PARAM.0001", .invalidRequest, "[BC-CAPTCHA-GET]",
            "device information incomplete: the client context lacks what the tenant requires"),
        Row(
            "IDAAS.SDK.PARAM.0023", .invalidToken, "[BC-REFRESH]",
            "session token invalid or expired (refresh_id_token): the caller signs in again"),
        Row(
            "IDAAS.SDK.CAPTCHA.0002", .appVerificationFailed, "[BC-CAPTCHA-VERIFY]",
            "the slider answer was wrong: a fresh challenge follows, nothing is sent"),
        Row(
            "IDAAS.SDK.CAPTCHA.0006", .deliveryFailed, "[BC-SMS-SEND]",
            "IDaaS failed to send the SMS code"),
        Row(
            "IDAAS.SDK.CAPTCHA.0007", .incorrectCode, "[BC-SMS-LOGIN] [OA-*]",
            "wrong SMS code: a check answers pending and the gateway counts the attempt"),
        // Codes the sandbox emulator answers where the notes document no CIAM code.
        Row(
            "IDAAS.SDK.CAPTCHA.0001", .appVerificationFailed, "[EMU] sandbox choice",
            "the captcha token is unknown, used or expired: the app answers a fresh challenge"),
        Row(
            "IDAAS.SDK.CAPTCHA.0003", .appVerificationFailed, "[EMU] sandbox choice",
            "the captcha token was verified for another number or already sent an SMS"),
        Row(
            "IDAAS.SDK.CAPTCHA.0008", .expired, "[EMU] sandbox choice",
            "the SMS code expired or none was sent: start again"),
        Row("USER.0001", .notEnrolled, "[MAITUX] `client.UNKNOWN_USER_ERROR`", "unknown user"),
    ]

    /// Groups, for codes no exact row lists (docs/vendors/idaas.md §3.1 "map by prefix"): the SDK table's groups
    /// COMMON/LOGIN/SMS/SOCIAL/PWD/MFA and the server's PARAM/CAPTCHA, in both families.
    static let groupRows: [Row] = groups(in: "IDAAS.SDK.") + groups(in: "SDK.")

    static func groups(in family: String) -> [Row] {
        let server = "docs/vendors/idaas.md §3.1"
        let sdk = "[BC-IOS] group"
        return [
            Row(family + "PARAM.", .invalidRequest, .prefix, server, "a parameter IDaaS refused (device information)"),
            Row(family + "COMMON.", .invalidRequest, .prefix, sdk, "a common request problem"),
            Row(family + "CAPTCHA.", .appVerificationFailed, .prefix, server, "a captcha problem: a fresh slider"),
            Row(family + "LOGIN.", .denied, .prefix, sdk, "the tenant refused the sign-in"),
            Row(family + "SMS.", .deliveryFailed, .prefix, sdk, "the SMS could not be sent"),
            Row(family + "SOCIAL.", .providerError, .prefix, sdk, "social login, never used"),
            Row(family + "PWD.", .denied, .prefix, sdk, "the tenant's password policy"),
            Row(family + "MFA.", .denied, .prefix, sdk, "a second factor the gateway does not run"),
        ]
    }

    /// Both spellings of an SDK code, with the documented status.
    static func rows(for code: SDKCode) -> [Row] {
        let ciam = Row(
            code.ciam, code.mapsTo, .exact, "[BC-IOS] return codes", code.note, vendorStatus: code.httpStatus)
        var eiam = ciam
        eiam.value = code.eiam
        eiam.source = "[BC-IOS] return codes, EIAM numbering (docs/vendors/idaas.md §3.2)"
        return [ciam, eiam]
    }

    /// Every row: each SDK code in both families, the other exact rows, then the groups.
    static let rows: [Row] = sdkCodes.flatMap(rows(for:)) + otherRows + groupRows

    /// A result code the SDK's callbacks hand the app ([BC-IOS]): `loginsBySMSWithMobile`,
    /// `startSlidingVerifyCodePageWithMobileNumber`, `verifySignWithIdToken`, `refreshIdTokenWithSessionToken`.
    /// The gateway runs those steps itself; where one fails the same way, it answers this row's code and names
    /// the SDK's code as `provider.code` (``IDaaSProvider/TokenProblem``).
    struct CallbackCode: Sendable, Equatable {
        var code: String
        var callbacks: String
        var meaning: String
        /// `nil`: success, no error.
        var mapsTo: GatewayError.Code?
    }

    static let callbackCodes: [CallbackCode] = [
        CallbackCode(code: "0", callbacks: "all", meaning: "success", mapsTo: nil),
        CallbackCode(
            code: "1", callbacks: "login, verify, refresh",
            meaning: "failed; for verify: an empty input or an SDK without domain and client id",
            mapsTo: .invalidRequest),
        CallbackCode(
            code: "102", callbacks: "verify", meaning: "the public key read is empty", mapsTo: .providerError),
        CallbackCode(
            code: "103", callbacks: "verify", meaning: "signature verification failed", mapsTo: .invalidToken),
        CallbackCode(
            code: "105", callbacks: "slider", meaning: "the user closed the slider", mapsTo: .appVerificationFailed),
        CallbackCode(code: "106", callbacks: "verify", meaning: "the ID token expired", mapsTo: .invalidToken),
        CallbackCode(
            code: "107", callbacks: "verify", meaning: "the client id does not match (another application's token)",
            mapsTo: .invalidToken),
    ]

    /// The callback row for an SDK result code.
    static func callback(_ code: String) -> CallbackCode? {
        callbackCodes.first { $0.code == code }
    }

    private static let exact: [String: Row] = Dictionary(
        rows.filter { $0.match == .exact }.map { ($0.value, $0) }, uniquingKeysWith: { first, _ in first })
    /// Longest prefix first, so `IDAAS.SDK.LOGIN.` wins over a shorter group.
    private static let prefixes: [Row] = rows.filter { $0.match == .prefix }.sorted { $0.value.count > $1.value.count }

    /// The row for `code`: the exact row, else the longest matching group.
    static func row(for code: String) -> Row? {
        if let row = exact[code] { return row }
        return prefixes.first { code.hasPrefix($0.value) }
    }

    /// Maps an error answer. `body` is the decoded error body (nil when unreadable).
    static func map(body: IDaaSWire.ErrorBody?, httpStatus: Int, providerID: String, operation: String) -> GatewayError
    {
        let code = body?.code.flatMap { IDaaSWire.isBoundedCode($0) ? $0 : nil }
        let mapped: GatewayError.Code
        var message: String
        if let code, let row = row(for: code) {
            mapped = row.mapsTo
            message = "\(summary(of: mapped)) (IDaaS \(code) on \(operation))"
        } else if let code, (400..<500).contains(httpStatus) {
            mapped = .providerError
            message = "IDaaS answered \(operation) with an error the gateway does not know (IDaaS \(code))"
        } else {
            mapped = fallback(httpStatus: httpStatus)
            message = summary(of: mapped) + " (\(code.map { "IDaaS \($0), " } ?? "")HTTP \(httpStatus) on \(operation))"
        }
        return GatewayError(
            mapped, message + ".",
            vendor: GatewayError.VendorDetail(providerID: providerID, code: code, httpStatus: httpStatus))
    }

    /// Without a code: the status decides.
    static func fallback(httpStatus: Int) -> GatewayError.Code {
        // IDaaS answers unknown paths with 404 too: not a verification that is gone, so not `not_found`;
        // and every IDaaS error is a 400 whose body decides, so other 4xx stay `provider_error`.
        switch httpStatus {
        case 404: return .providerRejected
        case 400...499 where ![401, 403, 429].contains(httpStatus): return .providerError
        default: return .forVendorStatus(httpStatus)
        }
    }

    /// A message for the caller that names the situation, never IDaaS's own text.
    static func summary(of code: GatewayError.Code) -> String {
        switch code {
        case .invalidRequest: return "IDaaS rejected the request (device information or a parameter)"
        case .invalidToken: return "The IDaaS session token is invalid or expired; sign in again"
        case .appVerificationFailed: return "IDaaS did not accept the slider captcha"
        case .deliveryFailed: return "IDaaS could not send the SMS code"
        case .incorrectCode: return "The code is not correct"
        case .expired: return "The SMS code has expired; start a new verification"
        case .accountLocked: return "The IDaaS account behind this number is locked"
        case .notEnrolled: return "IDaaS has no usable user for this number"
        case .denied: return "IDaaS refused the sign-in"
        case .providerAuthFailed: return "IDaaS did not accept the gateway's client id"
        case .providerRejected: return "IDaaS refused the request because of the provider's configuration"
        case .providerRateLimited: return "IDaaS is throttling the gateway"
        case .providerUnavailable: return "IDaaS is unavailable"
        default: return "IDaaS answered in an unexpected way"
        }
    }
}
