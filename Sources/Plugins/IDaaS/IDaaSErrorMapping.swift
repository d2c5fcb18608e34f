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
        SDKCode(
            "COMMON", 1001, 400, .providerRejected, "parameter missing (blank)",
            "the gateway always sends the request's own parameters, so a blank one is the provider's "
                + "configuration (the EIAM example: X-client-id blank)"),
        SDKCode(
            "COMMON", 1002, 400, .invalidRequest, "parameter format incorrect",
            "a value IDaaS refused the form of (the number, the code)"),
        SDKCode(
            "COMMON", 1003, 400, .invalidRequest, "device information incomplete",
            "the client context lacks what the tenant requires"),
        SDKCode(
            "COMMON", 1004, 400, .providerRejected, "signature decryption error",
            "the tenant wants signed requests: configuration"),
        SDKCode(
            "COMMON", 1005, 400, .expired, "a value has expired",
            "on a check the SMS code expired; at the slider a fresh slider follows"),
        SDKCode(
            "COMMON", 1006, 400, .invalidRequest, "parameter error",
            "a parameter IDaaS refused"),
        SDKCode(
            "COMMON", 1007, 400, .invalidRequest, "parameter type error",
            "a parameter of the wrong type"),
        SDKCode(
            "COMMON", 1008, 500, .providerUnavailable, "system busy, try again later",
            "HTTP 500: retry, or fail over before a send"),
        SDKCode(
            "COMMON", 1009, 400, .providerRejected, "unknown authentication configuration",
            "tenant configuration: fail over, alert"),
        SDKCode(
            "COMMON", 1010, 400, .providerRejected, "enterprise center global configuration unavailable",
            "tenant configuration: fail over, alert"),
        SDKCode(
            "COMMON", 1011, 400, .providerRejected, "area code configuration unavailable",
            "tenant configuration: fail over, alert"),
        SDKCode(
            "COMMON", 1012, 400, .providerAuthFailed, "X-client-id wrong, no such application",
            "the provider's client_id is wrong: fail over, alert"),
        SDKCode(
            "COMMON", 1013, 400, .notEnrolled, "user not found",
            "no user with this number at the tenant"),
        SDKCode(
            "COMMON", 1014, 400, .providerRejected, "application private key not found",
            "tenant configuration: fail over, alert"),
        SDKCode(
            "LOGIN", 1001, 400, .providerError, "error calling an interface",
            "a failure inside IDaaS: retryable"),
        SDKCode(
            "LOGIN", 1002, 400, .notEnrolled, "user not bound",
            "the user is not bound to this application"),
        SDKCode(
            "LOGIN", 1003, 400, .accountLocked, "user locked after too many failed sign-ins",
            "the user is locked at IDaaS; a check cannot succeed until IDaaS unlocks it"),
        SDKCode(
            "LOGIN", 1004, 400, .providerError, "password policy unavailable",
            "a failure inside IDaaS: retryable"),
        SDKCode(
            "LOGIN", 1005, 400, .incorrectCode, "wrong credential, remaining attempts in the text",
            "a wrong code: counted as an attempt; the count in error_msg is not read"),
        SDKCode(
            "LOGIN", 1006, 400, .providerRejected, "WeChat authentication source not configured",
            "tenant configuration: fail over, alert"),
        SDKCode(
            "LOGIN", 1007, 400, .providerRejected, "Alipay authentication source not configured",
            "tenant configuration: fail over, alert"),
        SDKCode(
            "LOGIN", 1008, 400, .providerRejected, "one-click login source not configured",
            "tenant configuration: fail over, alert"),
        SDKCode(
            "SMS", 1001, 400, .providerRejected, "slider base image not initialized",
            "the tenant's slider images are misconfigured: fail over, alert"),
        SDKCode(
            "SMS", 1002, 400, .appVerificationFailed, "slider coordinates unreadable",
            "a fresh slider follows, nothing is sent"),
        SDKCode(
            "SMS", 1003, 400, .appVerificationFailed, "slider coordinates wrong",
            "a fresh slider follows, nothing is sent"),
        SDKCode(
            "SMS", 1004, 400, .appVerificationFailed, "graphic code wrong",
            "a fresh slider follows, nothing is sent"),
        SDKCode(
            "SMS", 1005, 400, .incorrectCode, "SMS code wrong",
            "a wrong code: counted as an attempt"),
        SDKCode(
            "SMS", 1006, 400, .incorrectCode, "email code wrong",
            "a wrong code: counted as an attempt"),
        SDKCode(
            "SMS", 1007, 400, .providerRejected, "sending scenario does not exist",
            "the tenant lacks the sms_type scenario: fail over, alert"),
        SDKCode(
            "SMS", 1008, 400, .deliveryFailed, "failed to send the code",
            "retryable; fail over before a send"),
        SDKCode(
            "SOCIAL", 1001, 400, .providerError, "social account unbinding error",
            "social login, a flow the gateway never uses"),
        SDKCode(
            "SOCIAL", 1002, 400, .providerError, "social account already bound",
            "social login, a flow the gateway never uses"),
        SDKCode(
            "PWD", 1001, 400, .denied, "password length wrong",
            "the tenant's password policy blocks the sign-in"),
        SDKCode(
            "PWD", 1002, 400, .denied, "password equals the username",
            "the tenant's password policy blocks the sign-in"),
        SDKCode(
            "PWD", 1003, 400, .denied, "password complexity low",
            "the tenant's password policy blocks the sign-in"),
        SDKCode(
            "PWD", 1004, 400, .denied, "password weak",
            "the tenant's password policy blocks the sign-in"),
        SDKCode(
            "PWD", 1005, 400, .denied, "password used before",
            "the tenant's password policy blocks the sign-in"),
        SDKCode(
            "PWD", 1006, 400, .denied, "password is the username reversed",
            "the tenant's password policy blocks the sign-in"),
        SDKCode(
            "PWD", 1007, 400, .denied, "too many repeated password characters",
            "the tenant's password policy blocks the sign-in"),
        SDKCode(
            "PWD", 1008, 400, .denied, "password contains user data",
            "the tenant's password policy blocks the sign-in"),
        SDKCode(
            "MFA", 1001, 400, .denied, "mobile does not match the user",
            "the number is not the user's second factor"),
        SDKCode(
            "MFA", 1002, 400, .providerRejected, "access control policy misconfigured",
            "tenant configuration: fail over, alert"),
        SDKCode(
            "MFA", 1003, 400, .providerRejected, "access control source type conversion error",
            "tenant configuration: fail over, alert"),
    ]

    /// Codes outside the SDK's table: the CIAM server's `PARAM`/`CAPTCHA` examples, the sandbox's own, `USER.0001`.
    static let otherRows: [VendorErrorRow] = [
        // CIAM server examples (docs/vendors/idaas.md §3.1).
        row(

            "IDAAS.SDK.PARAM.0001", .invalidRequest, "[BC-CAPTCHA-GET]",

            "device information incomplete: the client context lacks what the tenant requires"),
        row(

            "IDAAS.SDK.PARAM.0023", .invalidToken, "[BC-REFRESH]",

            "session token invalid or expired (refresh_id_token): the caller signs in again"),
        row(

            "IDAAS.SDK.CAPTCHA.0002", .appVerificationFailed, "[BC-CAPTCHA-VERIFY]",

            "the slider answer was wrong: a fresh challenge follows, nothing is sent"),
        row("IDAAS.SDK.CAPTCHA.0006", .deliveryFailed, "[BC-SMS-SEND]", "IDaaS failed to send the SMS code"),
        row(

            "IDAAS.SDK.CAPTCHA.0007", .incorrectCode, "[BC-SMS-LOGIN] [OA-*]",

            "wrong SMS code: a check answers pending and the gateway counts the attempt"),
        // Codes the sandbox emulator answers where the notes document no CIAM code.
        row(

            "IDAAS.SDK.CAPTCHA.0001", .appVerificationFailed, "[EMU] sandbox choice",

            "the captcha token is unknown, used or expired: the app answers a fresh challenge"),
        row(

            "IDAAS.SDK.CAPTCHA.0003", .appVerificationFailed, "[EMU] sandbox choice",

            "the captcha token was verified for another number or already sent an SMS"),
        row(

            "IDAAS.SDK.CAPTCHA.0008", .expired, "[EMU] sandbox choice",

            "the SMS code expired or none was sent: start again"),
        row("USER.0001", .notEnrolled, "[MAITUX] `client.UNKNOWN_USER_ERROR`", "unknown user"),
    ]

    /// Groups, for codes no exact row lists (docs/vendors/idaas.md §3.1 "map by prefix"): the SDK table's groups
    /// COMMON/LOGIN/SMS/SOCIAL/PWD/MFA and the server's PARAM/CAPTCHA, in both families. No group is a prefix of
    /// another, so the first matching row is the only one.
    static let groupRows: [VendorErrorRow] = groups(in: "IDAAS.SDK.") + groups(in: "SDK.")

    static func groups(in family: String) -> [VendorErrorRow] {
        let server = "docs/vendors/idaas.md §3.1"
        let sdk = "[BC-IOS] group"
        return [
            row(family + "PARAM.", .invalidRequest, server, "a parameter IDaaS refused (device information)", .prefix),
            row(family + "COMMON.", .invalidRequest, sdk, "a common request problem", .prefix),
            row(family + "CAPTCHA.", .appVerificationFailed, server, "a captcha problem: a fresh slider", .prefix),
            row(family + "LOGIN.", .denied, sdk, "the tenant refused the sign-in", .prefix),
            row(family + "SMS.", .deliveryFailed, sdk, "the SMS could not be sent", .prefix),
            row(family + "SOCIAL.", .providerError, sdk, "social login, never used", .prefix),
            row(family + "PWD.", .denied, sdk, "the tenant's password policy", .prefix),
            row(family + "MFA.", .denied, sdk, "a second factor the gateway does not run", .prefix),
        ]
    }

    /// A row of IDaaS's one vocabulary: any status (the body's code decides), any operation.
    static func row(
        _ code: String, _ mapsTo: GatewayError.Code, _ source: String, _ note: String,
        _ match: VendorErrorRow.Match = .exact, name: String? = nil
    ) -> VendorErrorRow {
        VendorErrorRow(code: code, match: match, name: name ?? note, mapsTo: mapsTo, source: source, note: note)
    }

    /// Both spellings of an SDK code.
    static func rows(for code: SDKCode) -> [VendorErrorRow] {
        [
            row(code.ciam, code.mapsTo, "[BC-IOS] return codes", code.note, name: code.meaning),
            row(
                code.eiam, code.mapsTo, "[BC-IOS] return codes, EIAM numbering (docs/vendors/idaas.md §3.2)",
                code.note, name: code.meaning),
        ]
    }

    /// The HTTP status IDaaS answers `code` with: the SDK table's (`COMMON.1008` is a 500), else 400.
    static func vendorStatus(of code: String) -> Int {
        sdkCodes.first { $0.ciam == code || $0.eiam == code }?.httpStatus ?? 400
    }

    /// Every row: each SDK code in both families, the other exact rows, then the groups (exact rows first, so
    /// a listed code wins over its group).
    static let table = VendorErrorTable(
        vendor: "IDaaS", rows: sdkCodes.flatMap(rows(for:)) + otherRows + groupRows,
        summaries: [
            .invalidRequest: "IDaaS rejected the request (device information or a parameter)",
            .invalidToken: "The IDaaS session token is invalid or expired; sign in again",
            .appVerificationFailed: "IDaaS did not accept the slider captcha",
            .deliveryFailed: "IDaaS could not send the SMS code",
            .expired: "The SMS code has expired; start a new verification",
            .accountLocked: "The IDaaS account behind this number is locked",
            .notEnrolled: "IDaaS has no usable user for this number",
            .denied: "IDaaS refused the sign-in",
            .providerAuthFailed: "IDaaS did not accept the gateway's client id",
            .providerRejected: "IDaaS refused the request because of the provider's configuration",
            .providerRateLimited: "IDaaS is throttling the gateway",
        ])

    static var rows: [VendorErrorRow] { table.rows }
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

    /// The row for `code`: the exact row, else its group.
    static func row(for code: String) -> VendorErrorRow? {
        table.row(code: code)
    }

    /// Maps an error answer. `body` is the decoded error body (nil when unreadable).
    static func map(body: IDaaSWire.ErrorBody?, httpStatus: Int, providerID: String, operation: String) -> GatewayError
    {
        let code = body?.code.flatMap { IDaaSWire.isBoundedCode($0) ? $0 : nil }
        let mapped: GatewayError.Code
        let detail: String
        if let code, let row = row(for: code) {
            mapped = row.mapsTo
            detail = "IDaaS \(code) on \(operation)"
        } else if let code, (400..<500).contains(httpStatus) {
            return GatewayError(
                .providerError, "IDaaS answered \(operation) with an error the gateway does not know (IDaaS \(code)).",
                vendor: GatewayError.VendorDetail(providerID: providerID, code: code, httpStatus: httpStatus))
        } else {
            mapped = fallback(httpStatus: httpStatus)
            detail = "\(code.map { "IDaaS \($0), " } ?? "")HTTP \(httpStatus) on \(operation)"
        }
        return table.error(mapped, detail: detail, vendorCode: code, httpStatus: httpStatus, providerID: providerID)
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
}
