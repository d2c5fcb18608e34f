import GatewayCore

/// The one table from IDaaS's `error_code` to the gateway taxonomy; docs/errors.md gives each row's reason.
///
/// IDaaS errors are HTTP 400 `{"error_code", "error_msg"}` (`COMMON.1008` is a 500, docs/vendors/idaas.md §1): the
/// body's `error_code` decides, never `error_msg` (localized by `X-L`; `LOGIN.1005` embeds a count in it). Every
/// code of the SDK's return-code table ([BC-IOS], ``sdkCodes``) has an exact row in both families,
/// `IDAAS.SDK.<group>.<n>` (CIAM) and `SDK.<group>.<n>` (EIAM, the same numbering, docs/vendors/idaas.md §3.2). A
/// code no exact row knows maps by its group prefix, one no prefix knows is `provider_error`, and without a
/// readable code the HTTP status decides.
enum IDaaSErrorMapping {
    /// One code of the SDK's return-code table ([BC-IOS] "Return Codes"): its documented HTTP status and meaning,
    /// and the gateway code.
    struct SDKCode: Sendable, Equatable {
        var group: String
        var number: Int
        var mapsTo: GatewayError.Code
        var meaning: String
        var httpStatus: Int

        /// `IDAAS.SDK.COMMON.1001`.
        var ciam: String { "IDAAS.SDK.\(group).\(number)" }
        /// `SDK.COMMON.1001`.
        var eiam: String { "SDK.\(group).\(number)" }
    }

    static func sdk(
        _ group: String, _ number: Int, _ mapsTo: GatewayError.Code, _ meaning: String, status: Int = 400
    ) -> SDKCode {
        SDKCode(group: group, number: number, mapsTo: mapsTo, meaning: meaning, httpStatus: status)
    }

    /// The 43 codes of the SDK's return-code table, in its order.
    static let sdkCodes: [SDKCode] = [
        sdk("COMMON", 1001, .providerRejected, "parameter missing (blank)"),
        sdk("COMMON", 1002, .invalidRequest, "parameter format incorrect"),
        sdk("COMMON", 1003, .invalidRequest, "device information incomplete"),
        sdk("COMMON", 1004, .providerRejected, "signature decryption error"),
        sdk("COMMON", 1005, .expired, "a value has expired"),
        sdk("COMMON", 1006, .invalidRequest, "parameter error"),
        sdk("COMMON", 1007, .invalidRequest, "parameter type error"),
        sdk("COMMON", 1008, .providerUnavailable, "system busy, try again later", status: 500),
        sdk("COMMON", 1009, .providerRejected, "unknown authentication configuration"),
        sdk("COMMON", 1010, .providerRejected, "enterprise center global configuration unavailable"),
        sdk("COMMON", 1011, .providerRejected, "area code configuration unavailable"),
        sdk("COMMON", 1012, .providerAuthFailed, "X-client-id wrong, no such application"),
        sdk("COMMON", 1013, .notEnrolled, "user not found"),
        sdk("COMMON", 1014, .providerRejected, "application private key not found"),
        sdk("LOGIN", 1001, .providerError, "error calling an interface"),
        sdk("LOGIN", 1002, .notEnrolled, "user not bound"),
        sdk("LOGIN", 1003, .accountLocked, "user locked after too many failed sign-ins"),
        sdk("LOGIN", 1004, .providerError, "password policy unavailable"),
        sdk("LOGIN", 1005, .incorrectCode, "wrong credential, remaining attempts in the text"),
        sdk("LOGIN", 1006, .providerRejected, "WeChat authentication source not configured"),
        sdk("LOGIN", 1007, .providerRejected, "Alipay authentication source not configured"),
        sdk("LOGIN", 1008, .providerRejected, "one-click login source not configured"),
        sdk("SMS", 1001, .providerRejected, "slider base image not initialized"),
        sdk("SMS", 1002, .appVerificationFailed, "slider coordinates unreadable"),
        sdk("SMS", 1003, .appVerificationFailed, "slider coordinates wrong"),
        sdk("SMS", 1004, .appVerificationFailed, "graphic code wrong"),
        sdk("SMS", 1005, .incorrectCode, "SMS code wrong"),
        sdk("SMS", 1006, .incorrectCode, "email code wrong"),
        sdk("SMS", 1007, .providerRejected, "sending scenario does not exist"),
        sdk("SMS", 1008, .deliveryFailed, "failed to send the code"),
        sdk("SOCIAL", 1001, .providerError, "social account unbinding error"),
        sdk("SOCIAL", 1002, .providerError, "social account already bound"),
        sdk("PWD", 1001, .denied, "password length wrong"),
        sdk("PWD", 1002, .denied, "password equals the username"),
        sdk("PWD", 1003, .denied, "password complexity low"),
        sdk("PWD", 1004, .denied, "password weak"),
        sdk("PWD", 1005, .denied, "password used before"),
        sdk("PWD", 1006, .denied, "password is the username reversed"),
        sdk("PWD", 1007, .denied, "too many repeated password characters"),
        sdk("PWD", 1008, .denied, "password contains user data"),
        sdk("MFA", 1001, .denied, "mobile does not match the user"),
        sdk("MFA", 1002, .providerRejected, "access control policy misconfigured"),
        sdk("MFA", 1003, .providerRejected, "access control source type conversion error"),
    ]

    /// Codes outside the SDK's table: the CIAM server's `PARAM`/`CAPTCHA` examples (docs/vendors/idaas.md §3.1),
    /// the sandbox's own where the notes document none, and the EIAM management API's `USER.0001`.
    static let otherRows: [VendorErrorRow] = [
        row("IDAAS.SDK.PARAM.0001", .invalidRequest, "device information incomplete", "[BC-CAPTCHA-GET]"),
        row("IDAAS.SDK.PARAM.0023", .invalidToken, "session token invalid or expired", "[BC-REFRESH]"),
        row("IDAAS.SDK.CAPTCHA.0002", .appVerificationFailed, "slider verification failed", "[BC-CAPTCHA-VERIFY]"),
        row("IDAAS.SDK.CAPTCHA.0006", .deliveryFailed, "failed to send the code", "[BC-SMS-SEND]"),
        row("IDAAS.SDK.CAPTCHA.0007", .incorrectCode, "incorrect verification code", "[BC-SMS-LOGIN] [OA-*]"),
        row(
            "IDAAS.SDK.CAPTCHA.0001", .appVerificationFailed, "captcha (or captcha token) unknown, used or expired",
            sandbox),
        row(
            "IDAAS.SDK.CAPTCHA.0003", .appVerificationFailed,
            "captcha token verified for another number, or already used for an SMS",
            sandbox),
        row("IDAAS.SDK.CAPTCHA.0008", .expired, "the SMS code expired, or none was sent", sandbox),
        row("USER.0001", .notEnrolled, "unknown user", "[MAITUX] `client.UNKNOWN_USER_ERROR`"),
    ]

    static let sandbox = "[EMU] sandbox choice"

    /// Groups, for codes no exact row lists (docs/vendors/idaas.md §3.1 "map by prefix"), in both families. No
    /// group is a prefix of another, so the first matching row is the only one.
    static let groupRows: [VendorErrorRow] = groups(in: "IDAAS.SDK.") + groups(in: "SDK.")

    static func groups(in family: String) -> [VendorErrorRow] {
        let (server, sdk) = ("docs/vendors/idaas.md §3.1", "[BC-IOS] group")
        return [
            row(family + "PARAM.", .invalidRequest, "a parameter IDaaS refused (device information)", server, .prefix),
            row(family + "COMMON.", .invalidRequest, "a common request problem", sdk, .prefix),
            row(family + "CAPTCHA.", .appVerificationFailed, "a captcha problem: a fresh slider", server, .prefix),
            row(family + "LOGIN.", .denied, "the tenant refused the sign-in", sdk, .prefix),
            row(family + "SMS.", .deliveryFailed, "the SMS could not be sent", sdk, .prefix),
            row(family + "SOCIAL.", .providerError, "social login, never used", sdk, .prefix),
            row(family + "PWD.", .denied, "the tenant's password policy", sdk, .prefix),
            row(family + "MFA.", .denied, "a second factor the gateway does not run", sdk, .prefix),
        ]
    }

    /// A row of IDaaS's one vocabulary: any status (the body's code decides), any operation.
    static func row(
        _ code: String, _ mapsTo: GatewayError.Code, _ name: String, _ source: String,
        _ match: VendorErrorRow.Match = .exact
    ) -> VendorErrorRow {
        VendorErrorRow(code: code, match: match, name: name, mapsTo: mapsTo, source: source)
    }

    /// The HTTP status IDaaS answers `code` with: the SDK table's (`COMMON.1008` is a 500), else 400.
    static func vendorStatus(of code: String) -> Int {
        sdkCodes.first { $0.ciam == code || $0.eiam == code }?.httpStatus ?? 400
    }

    /// Every row: each SDK code in both families, the other exact rows, then the groups (so a listed code wins
    /// over its group).
    static let table = VendorErrorTable(
        vendor: "IDaaS",
        rows: sdkCodes.flatMap { code in
            [
                row(code.ciam, code.mapsTo, code.meaning, "[BC-IOS] return codes"),
                row(
                    code.eiam, code.mapsTo, code.meaning,
                    "[BC-IOS] return codes, EIAM numbering (docs/vendors/idaas.md §3.2)"),
            ]
        } + otherRows + groupRows,
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

    /// A result code the SDK's callbacks hand the app ([BC-IOS]: `loginsBySMSWithMobile`,
    /// `startSlidingVerifyCodePageWithMobileNumber`, `verifySignWithIdToken`, `refreshIdTokenWithSessionToken`).
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
        CallbackCode(code: "0", callbacks: "all", meaning: "success"),
        CallbackCode(
            code: "1", callbacks: "login, verify, refresh",
            meaning: "failed; for verify: an empty input or an SDK without domain and client id",
            mapsTo: .invalidRequest),
        CallbackCode(code: "102", callbacks: "verify", meaning: "the public key read is empty", mapsTo: .providerError),
        CallbackCode(code: "103", callbacks: "verify", meaning: "signature verification failed", mapsTo: .invalidToken),
        CallbackCode(
            code: "105", callbacks: "slider", meaning: "the user closed the slider", mapsTo: .appVerificationFailed),
        CallbackCode(code: "106", callbacks: "verify", meaning: "the ID token expired", mapsTo: .invalidToken),
        CallbackCode(
            code: "107", callbacks: "verify", meaning: "the client id does not match (another application's token)",
            mapsTo: .invalidToken),
    ]

    /// The callback row for an SDK result code.
    static func callback(_ code: String) -> CallbackCode? { callbackCodes.first { $0.code == code } }

    /// The row for `code`: the exact row, else its group.
    static func row(for code: String) -> VendorErrorRow? { table.row(code: code) }

    /// Maps an error answer; `body` is `nil` when unreadable.
    static func map(body: IDaaSWire.ErrorBody?, httpStatus: Int, providerID: String, operation: String) -> GatewayError
    {
        let code = ASCIIText.token(body?.code, extra: "._")
        if let code, let row = row(for: code) {
            return table.error(
                row.mapsTo, detail: "IDaaS \(code) on \(operation)", vendorCode: code, httpStatus: httpStatus,
                providerID: providerID)
        }
        guard let code, (400..<500).contains(httpStatus) else {
            return table.error(
                fallback(httpStatus: httpStatus),
                detail: "\(code.map { "IDaaS \($0), " } ?? "")HTTP \(httpStatus) on \(operation)",
                vendorCode: code, httpStatus: httpStatus, providerID: providerID)
        }
        return GatewayError(
            .providerError, "IDaaS answered \(operation) with an error the gateway does not know (IDaaS \(code)).",
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
}
