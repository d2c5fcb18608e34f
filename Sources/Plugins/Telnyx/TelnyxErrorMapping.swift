import Foundation
import GatewayCore

/// The one table from Telnyx's errors to the gateway taxonomy: every code of docs/vendors/telnyx.md §8.2, keyed
/// by `errors[0].code` and the status the emulator answers it with; Telnyx publishes no status per code, so the
/// lookup falls back on the code alone. Never by `title` or `detail`, which can quote the number.
enum TelnyxErrorMapping {
    static let table = VendorErrorTable(vendor: "Telnyx", rows: rows)

    static func row(
        _ code: String, _ status: Int, _ operation: String?, _ name: String, _ mapsTo: GatewayError.Code,
        _ note: String
    ) -> VendorErrorRow {
        VendorErrorRow(
            code: code, httpStatus: status, operation: operation, name: name, mapsTo: mapsTo,
            source: "docs/vendors/telnyx.md §8.2", note: note)
    }

    // swift-format-ignore
    static let rows: [VendorErrorRow] = [
        row("10001", 400, nil, "Inactive phone number", .invalidPhoneNumber, "the number is not in service"),
        row("10002", 400, nil, "Invalid phone number", .invalidPhoneNumber, "not a valid number"),
        row("10004", 400, nil, "Missing required parameter", .invalidRequest, "a field the gateway did not send"),
        row("10005", 404, nil, "Resource not found", .notFound, "unknown, finished or expired (the provider asks)"),
        row("10006", 400, nil, "Invalid ID", .providerRejected, "a profile id Telnyx does not take: configuration"),
        row("10007", 500, nil, "Unexpected error", .providerUnavailable, "platform fault: retry, fail over"),
        row("10008", 504, nil, "Request timeout", .providerTimeout, "Telnyx timed out inside"),
        row("10009", 401, nil, "Authentication failed", .providerAuthFailed, "bad API key: fail over, alert"),
        row("10010", 403, nil, "Authorization failed", .providerAuthFailed, "the key may not use Verify"),
        row("10011", 429, nil, "Too many requests", .providerRateLimited, "back off, or fail over"),
        row("10015", 400, nil, "Bad request", .invalidRequest, "a field Telnyx refused"),
        row("10016", 400, nil, "Phone number must be in +E.164 format", .invalidPhoneNumber, "the number's form"),
        row("10017", 422, nil, "Associated resource does not exist", .providerRejected, "no such profile"),
        row("10023", 400, nil, "Invalid JSON", .providerError, "the gateway's body was refused: a gateway fault"),
        row("10027", 422, nil, "Unprocessable entity", .invalidRequest, "a value Telnyx cannot act on"),
        row("10032", 422, nil, "Value not in enumeration", .invalidRequest, "a value outside Telnyx's list"),
        row("10033", 422, nil, "Value out of range", .invalidRequest, "timeout_secs or a length out of range"),
        row("10037", 503, nil, "Service unavailable", .providerUnavailable, "retry, fail over"),
        row("10038", 403, nil, "Feature not permitted", .providerRejected, "the account may not use this channel"),
        row("10039", 403, nil, "Feature limited", .providerRejected, "the account's limits: configuration"),
        row("20001", 401, nil, "Bad API key secret", .providerAuthFailed, "credentials"),
        row("20002", 401, nil, "API key revoked", .providerAuthFailed, "credentials"),
        row("20003", 403, nil, "API key forbidden", .providerAuthFailed, "credentials"),
        row("20008", 401, nil, "Invalid API key", .providerAuthFailed, "credentials"),
        row("20012", 403, nil, "Account inactive", .providerRejected, "the account"),
        row("20013", 403, nil, "Account blocked", .providerRejected, "the account"),
        row("20014", 403, nil, "Account not verified", .providerRejected, "the account"),
        row("20015", 403, nil, "Feature not enabled", .providerRejected, "the account"),
        row("20016", 403, nil, "Level 1 verification required", .providerRejected, "the account"),
        row("20017", 403, nil, "Level 2 verification required", .providerRejected, "the account"),
        row("20100", 402, nil, "Insufficient funds", .providerInsufficientFunds, "top up the account; fail over"),
        row("40020", 403, nil, "2FA traffic blocked", .destinationBlocked, "suspected traffic inflation: fraud"),
        row("40331", 422, nil, "Whitelisted destinations missing", .unsupportedDestination, "country not allowed"),
    ]

    /// Maps an error answer: the first `errors[]` code with the status, then the code alone, then the status.
    static func map(
        status: Int, errors: TelnyxWire.Errors?, operation: VendorOperation, retryAfter: Int?, providerID: String
    ) -> GatewayError {
        let code = errors?.errors.first?.code
        let row =
            table.row(code: code, httpStatus: status, operation: operation.name)
            ?? table.rows.first { code != nil && $0.code == code }
        return table.error(
            row?.mapsTo ?? fallback(httpStatus: status),
            detail: "Telnyx HTTP \(status)\(code.map { " code \($0)" } ?? "")",
            vendorCode: code, httpStatus: status, providerID: providerID, retryAfter: retryAfter)
    }

    /// The code for an answer no row covers, by the statuses the SDK tells apart (§9).
    static func fallback(httpStatus: Int) -> GatewayError.Code {
        let byStatus: [Int: GatewayError.Code] = [
            400: .invalidRequest, 401: .providerAuthFailed, 402: .providerInsufficientFunds, 403: .providerRejected,
            404: .notFound, 408: .providerTimeout, 409: .invalidRequest, 422: .invalidRequest,
            429: .providerRateLimited,
        ]
        return byStatus[httpStatus] ?? (httpStatus >= 500 ? .providerUnavailable : .providerError)
    }
}
