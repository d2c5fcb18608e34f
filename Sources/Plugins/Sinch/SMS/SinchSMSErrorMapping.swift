import Foundation
import GatewayCore

/// The table from Sinch SMS's errors to the gateway taxonomy (docs/vendors/sinch-sms.md §4.3, §5). A send's
/// refusal is read by its body's `code` with the HTTP status, else by the status alone (the `send_batch` rows
/// without a code); a delivery report's numeric `code` is in the `dlr` vocabulary. Never read by `text`.
enum SinchSMSErrorMapping {
    static let table = VendorErrorTable(vendor: "Sinch", rows: requestRows + deliveryRows)
    static let source = "docs/vendors/sinch-sms.md"

    static func request(
        _ code: String?, _ status: Int, _ name: String, _ mapsTo: GatewayError.Code, _ note: String
    ) -> VendorErrorRow {
        VendorErrorRow(
            code: code, httpStatus: status, operation: code == nil ? VendorOperation.sendBatch.name : nil, name: name,
            mapsTo: mapsTo, source: source + " §5", note: note)
    }

    static func delivery(_ code: Int, _ name: String, _ mapsTo: GatewayError.Code, _ note: String) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "dlr", code: String(code), name: name, mapsTo: mapsTo, source: source + " §4.3", note: note)
    }

    /// What a send is refused with: a `code` in a 400 or 403, or the status alone.
    // swift-format-ignore
    static let requestRows: [VendorErrorRow] = [
        request("syntax_invalid_json", 400, "Invalid JSON", .providerRejected, "the body was not valid: a gateway bug"),
        request("syntax_invalid_parameter_format", 400, "Invalid parameter format", .invalidPhoneNumber, "a malformed field, as an MSISDN"),
        request("syntax_constraint_violation", 400, "Constraint violation", .providerRejected, "a field's constraint failed: a gateway bug"),
        request("missing_callback_url", 403, "Missing callback URL", .providerRejected, "a report was asked for with no URL: configuration"),
        request("unknown_group", 403, "Unknown group", .providerRejected, "the gateway sends to numbers, never groups"),
        request("unknown_campaign", 403, "Unknown campaign", .providerRejected, "the plan's campaign: configuration"),
        request("blocked_account", 403, "Account blocked", .providerInsufficientFunds, "blocked, possibly out of credit"),
        request("illegal_number_type", 403, "Illegal number type", .unsupportedDestination, "a landline or a number type the region refuses"),
        request(nil, 400, "Bad request", .providerRejected, "a 400 without a known code"),
        request(nil, 401, "Unauthorized", .providerAuthFailed, "the token is not the service plan's"),
        request(nil, 403, "Forbidden", .providerRejected, "a 403 without a known code: the account"),
        request(nil, 404, "Not found", .providerRejected, "an unknown service plan or path: configuration"),
        request(nil, 415, "Unsupported media type", .providerRejected, "not application/json: a gateway bug"),
        request(nil, 429, "Too many requests", .providerRateLimited, "too many outstanding requests: back off"),
    ]

    /// The codes a delivery report says a message failed with (400 and 401 are `Queued` and `Dispatched`, no error).
    // swift-format-ignore
    static let deliveryRows: [VendorErrorRow] = [
        delivery(402, "Unroutable", .deliveryFailed, "the SMSC had no route: another vendor may have one"),
        delivery(403, "Internal error", .deliveryFailed, "Sinch's own failure: may be retried"),
        delivery(404, "Temporary delivery failure", .deliveryFailed, "the phone was unreachable for now"),
        delivery(405, "Unmatched parameter", .providerRejected, "a template parameter: the gateway sends none"),
        delivery(406, "Internal expiry", .deliveryFailed, "expired before reaching the SMSC"),
        delivery(407, "Cancelled", .deliveryFailed, "cancelled before reaching the SMSC"),
        delivery(408, "Internal reject", .providerRejected, "the SMSC rejected it for good: filtered or blocked"),
        delivery(410, "No default originator", .providerRejected, "no sender for this recipient: configuration"),
        delivery(411, "Too many parts", .providerRejected, "more parts than allowed: the template is too long"),
        delivery(412, "Region not provisioned", .unsupportedDestination, "the account does not send to this region"),
        delivery(413, "Account blocked", .providerInsufficientFunds, "blocked, possibly out of credit"),
        delivery(414, "Bad media (MMS)", .providerRejected, "MMS only: the gateway sends none"),
        delivery(415, "MMS rejected", .providerRejected, "MMS only: the gateway sends none"),
        delivery(416, "MMS not supported", .providerRejected, "MMS only: the gateway sends none"),
        delivery(417, "MMS unreachable", .deliveryFailed, "MMS only: the gateway sends none"),
        delivery(418, "MMS unrecognized", .providerRejected, "MMS only: the gateway sends none"),
    ]

    /// Maps an error answer to a send: the body's `code` with the status, then the status alone; a 5xx no row
    /// covers is `provider_unavailable`.
    static func map(status: Int, problem: SinchSMSWire.Problem?, retryAfter: Int?, providerID: String) -> GatewayError {
        let code = problem?.code
        let row = table.row(code: code, httpStatus: status, operation: VendorOperation.sendBatch.name)
        return table.error(
            row?.mapsTo ?? (status >= 500 ? .providerUnavailable : .providerError),
            detail: "Sinch HTTP \(status)\(code.map { " code \($0)" } ?? "")", vendorCode: code, httpStatus: status,
            providerID: providerID, retryAfter: retryAfter)
    }

    /// A report's error code in the taxonomy: its row's, else `delivery_failed` (an SMPP code no row names).
    static func delivery(code: Int) -> GatewayError.Code {
        table.row(vocabulary: "dlr", code: String(code))?.mapsTo ?? .deliveryFailed
    }
}
