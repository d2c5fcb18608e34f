import GatewayCore

/// The one table from IDaaS's `error_code` to the gateway taxonomy (DESIGN.md §5).
///
/// Every IDaaS error is HTTP 400 with `{"error_code", "error_msg"}` (idaas.md §1), so the status says
/// nothing: the mapping reads the body's `error_code`, never `error_msg` (it is localized by `X-L` and
/// `SDK.LOGIN.1005` embeds a count in it). Exact rows come first; a code no exact row knows is mapped by its
/// group prefix (idaas.md §3.1 "map by prefix"); a code no prefix knows is `provider_error`. Without a
/// readable code the HTTP status decides. Each row cites its source key in `shared/vendors/idaas.md`.
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

        init(_ value: String, _ mapsTo: GatewayError.Code, _ source: String, _ note: String) {
            self.init(value, mapsTo, .exact, source, note)
        }

        init(_ value: String, _ mapsTo: GatewayError.Code, _ match: Match, _ source: String, _ note: String) {
            self.value = value
            self.match = match
            self.mapsTo = mapsTo
            self.source = source
            self.note = note
        }
    }

    static let rows: [Row] = [
        // CIAM (idaas.md §3.1).
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
        // Codes the sandbox emulator answers where idaas.md documents no CIAM code; spelled in the CIAM
        // groups by analogy with the EIAM codes of §3.2.
        Row(
            "IDAAS.SDK.CAPTCHA.0001", .appVerificationFailed, "[EMU] sandbox choice",
            "the captcha token is unknown, used or expired: the app answers a fresh challenge"),
        Row(
            "IDAAS.SDK.CAPTCHA.0003", .appVerificationFailed, "[EMU] sandbox choice",
            "the captcha token was verified for another number or already sent an SMS"),
        Row(
            "IDAAS.SDK.CAPTCHA.0008", .expired, "[EMU] sandbox choice",
            "the SMS code expired or none was sent: start again"),
        Row(
            "IDAAS.SDK.COMMON.1012", .providerAuthFailed, "[EMU] sandbox choice, as EIAM SDK.COMMON.1012",
            "missing or unknown X-client-id: the provider's client_id is wrong (fail over, alert)"),
        Row(
            "IDAAS.SDK.LOGIN.1003", .accountLocked, "[EMU] sandbox choice, as EIAM SDK.LOGIN.1003",
            "the user is locked after repeated wrong codes"),
        // EIAM (idaas.md §3.2).
        Row(
            "SDK.COMMON.1001", .providerRejected, "[BC-CAPTCHA-GET] EIAM [BC-SMS-SEND] EIAM [MAITUX]",
            "a required parameter is missing (the doc's example: X-client-id blank); the gateway always sends "
                + "the request's own parameters, so it is the provider's configuration"),
        Row(
            "SDK.COMMON.1003", .invalidRequest, "[MAITUX] observed",
            "device info headers incomplete, as IDAAS.SDK.PARAM.0001"),
        Row(
            "SDK.COMMON.1012", .providerAuthFailed, "[MAITUX] interpretation",
            "ClientId wrong or application not found: configuration (fail over, alert)"),
        Row(
            "SDK.COMMON.1013", .notEnrolled, "[MAITUX] interpretation",
            "no user with this number at the tenant"),
        Row(
            "SDK.LOGIN.1002", .notEnrolled, "[MAITUX] interpretation",
            "the account is not bound to this application"),
        Row("SDK.LOGIN.1003", .accountLocked, "[MAITUX] observed", "the account is locked"),
        Row(
            "SDK.LOGIN.1004", .providerError, "[MAITUX] interpretation",
            "the tenant's password policy could not be read: a server-side problem"),
        Row(
            "SDK.LOGIN.1005", .incorrectCode, "[MAITUX] observed",
            "wrong credential; the remaining-attempts count in error_msg is deliberately not read"),
        Row("USER.0001", .notEnrolled, "[MAITUX] `client.UNKNOWN_USER_ERROR`", "unknown user"),
        // Groups, for codes not listed (idaas.md §3.1 "map by prefix"; the seed SDK's groups
        // IDAAS.SDK.COMMON/LOGIN/SMS/SOCIAL/PWD/MFA and the server's PARAM/CAPTCHA).
        Row(
            "IDAAS.SDK.PARAM.", .invalidRequest, .prefix, "idaas.md §3.1",
            "a parameter IDaaS refused (device information and the like)"),
        Row(
            "IDAAS.SDK.COMMON.", .invalidRequest, .prefix, "idaas.md §3.1 (seed SDK group)", "a common request problem"),
        Row(
            "IDAAS.SDK.CAPTCHA.", .appVerificationFailed, .prefix, "idaas.md §3.1",
            "a captcha problem (exact rows cover the code errors 0006/0007)"),
        Row(
            "IDAAS.SDK.LOGIN.", .denied, .prefix, "idaas.md §3.1 (seed SDK group)",
            "the tenant refused the sign-in (account, policy)"),
        Row("IDAAS.SDK.SMS.", .deliveryFailed, .prefix, "idaas.md §3.1 (seed SDK group)", "the SMS could not be sent"),
        Row(
            "IDAAS.SDK.SOCIAL.", .providerError, .prefix, "idaas.md §3.1 (seed SDK group)",
            "social login, a flow the gateway never uses"),
        Row(
            "IDAAS.SDK.PWD.", .denied, .prefix, "idaas.md §3.1 (seed SDK group)",
            "the tenant's password policy blocks the sign-in"),
        Row(
            "IDAAS.SDK.MFA.", .denied, .prefix, "idaas.md §3.1 (seed SDK group)",
            "a second factor is required, which the gateway does not perform"),
        Row("SDK.COMMON.", .invalidRequest, .prefix, "idaas.md §3.2 (EIAM group)", "a common request problem"),
        Row("SDK.PARAM.", .invalidRequest, .prefix, "idaas.md §3.2 (EIAM group)", "a parameter IDaaS refused"),
        Row("SDK.CAPTCHA.", .appVerificationFailed, .prefix, "idaas.md §3.2 (EIAM group)", "a captcha problem"),
        Row("SDK.LOGIN.", .denied, .prefix, "idaas.md §3.2 (EIAM group)", "the tenant refused the sign-in"),
        Row("SDK.SMS.", .deliveryFailed, .prefix, "idaas.md §3.2 (EIAM group)", "the SMS could not be sent"),
        Row("SDK.SOCIAL.", .providerError, .prefix, "idaas.md §3.2 (EIAM group)", "social login, never used"),
        Row("SDK.PWD.", .denied, .prefix, "idaas.md §3.2 (EIAM group)", "password policy"),
        Row("SDK.MFA.", .denied, .prefix, "idaas.md §3.2 (EIAM group)", "a second factor is required"),
    ]

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
