import GatewayCore

/// Vonage's errors in the gateway taxonomy, in five vocabularies: `v2` problem details by HTTP status and `type`
/// fragment (docs/vendors/vonage.md §2.4), `v1` `status` codes by operation (§1.5), `sdk`, the retired Nexmo
/// Verify iOS SDK's `VerifyError` cases (§3.1), and for the SMS API (the `vonage_sms` plugin) `sms`, a refused
/// part's `status` (docs/vendors/vonage-sms.md §5), and `dlr`, a delivery receipt's `err-code` (§4.4). Never by `title`, `detail` or `error_text`, which vary and can name
/// the number; `docs/errors.md` says why each row maps as it does.
enum VonageErrorMapping {
    static let table = VendorErrorTable(vendor: "Vonage", rows: v2Rows + v1Rows + sdkRows + smsRows + dlrRows)

    static func v2(
        _ status: Int, _ fragment: String, _ operation: String?, _ title: String, _ mapsTo: GatewayError.Code
    ) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "v2", code: fragment, httpStatus: status, operation: operation, name: title, mapsTo: mapsTo,
            source: "docs/vendors/vonage.md §2.4")
    }

    /// Every v2 problem of docs/vendors/vonage.md §2.4 and its `x-errors` ids.
    // swift-format-ignore
    static let v2Rows: [VendorErrorRow] = [
        v2(400, "invalid-code", "check", "Invalid Code", .incorrectCode),
        v2(401, "unauthorized", nil, "Unauthorized", .providerAuthFailed),
        v2(401, "jwt-expired", nil, "Unauthorized", .providerAuthFailed),
        v2(402, "low-balance", nil, "Low balance", .providerInsufficientFunds),
        v2(403, "forbidden", nil, "Forbidden", .providerRejected),
        v2(404, "not-found", nil, "Not Found", .notFound),
        v2(404, "request-not-found", nil, "Not Found", .notFound),
        v2(409, "concurrent", "start", "Conflict", .concurrentVerification),
        v2(409, "no-code", "check", "Conflict", .invalidState),
        v2(409, "conflict", "next_workflow", "Conflict", .invalidState),
        v2(409, "no-events", "next_workflow", "Conflict", .invalidState),
        v2(409, "conflict", "cancel", "Conflict", .invalidState),
        v2(410, "expired", "check", "Invalid Code", .maxAttemptsReached),
        v2(410, "gone", "check", "Invalid Code", .maxAttemptsReached),
        v2(412, "precondition-failed", nil, "Silent authentication failed", .unsupportedDestination),
        v2(412, "network-error", nil, "Network not supported", .unsupportedDestination),
        v2(422, "invalid-params", nil, "Invalid params", .invalidRequest),
        v2(422, "msisdn-error", nil, "Invalid params", .invalidPhoneNumber),
        v2(429, "throttled", nil, "Rate Limit Hit", .providerRateLimited),
        v2(500, "internal-error", nil, "Internal error", .providerUnavailable),
        // Templates (not used by the gateway; listed so every documented id has a row).
        v2(409, "fragment-exists", nil, "Conflict", .providerRejected),
        v2(404, "template-fragment-not-found", nil, "Not Found", .providerRejected),
        v2(404, "template-not-found", nil, "Not Found", .providerRejected),
        v2(409, "template-exists", nil, "Conflict", .providerRejected),
        v2(409, "not-empty-template", nil, "Conflict", .providerRejected),
        v2(403, "max-templates", nil, "Forbidden", .providerRejected),
    ]

    /// Maps a v2 error answer: the row for the status and fragment (on this operation first), then the status
    /// on this operation; a 422 whose `invalid_parameters` names `to` is a bad number.
    static func mapV2(
        status: Int, problem: VonageWire.Problem?, operation: VendorOperation, retryAfter: Int?, providerID: String
    ) -> GatewayError {
        let fragment = problem?.fragment
        let row = table.row(vocabulary: "v2", code: fragment, httpStatus: status, operation: operation.name)
        var code = row?.mapsTo ?? fallback(httpStatus: status)
        if status == 422, problem?.namesDestination == true { code = .invalidPhoneNumber }
        return table.error(
            code, detail: "Vonage HTTP \(status)\(fragment.map { " #\($0)" } ?? "")",
            vendorCode: fragment ?? String(status),
            httpStatus: status, providerID: providerID, retryAfter: retryAfter)
    }

    /// The code for an HTTP status no row covers.
    static func fallback(httpStatus: Int) -> GatewayError.Code {
        httpStatus == 402 ? .providerInsufficientFunds : .forVendorStatus(httpStatus)
    }

    static func v1(_ code: Int, _ operation: String?, _ text: String, _ mapsTo: GatewayError.Code) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "v1", code: String(code), operation: operation, name: text, mapsTo: mapsTo,
            source: "docs/vendors/vonage.md §1.5")
    }

    /// Every v1 status of docs/vendors/vonage.md §1.5 and the v1 spec (0 is success and has no row), answered in HTTP
    /// 200.
    // swift-format-ignore
    static let v1Rows: [VendorErrorRow] = [
        v1(1, nil, "Throttled", .providerRateLimited),
        v1(2, nil, "Missing mandatory parameter", .invalidRequest),
        v1(3, nil, "Invalid value for parameter", .invalidRequest),
        v1(4, nil, "Invalid credentials were provided", .providerAuthFailed),
        v1(5, nil, "Internal Error", .providerUnavailable),
        v1(6, "start", "The request could not be routed", .unsupportedDestination),
        v1(6, "check", "Request not found or no longer active", .notFound),
        v1(6, "cancel", "Request not found or no longer active", .notFound),
        v1(6, "next_workflow", "Request not found or no longer active", .notFound),
        v1(7, "start", "Number blacklisted for verification", .destinationBlocked),
        v1(8, nil, "Account barred", .providerAuthFailed),
        v1(9, nil, "Partner quota exceeded", .providerInsufficientFunds),
        v1(10, "start", "Concurrent verifications to the same number are not allowed", .concurrentVerification),
        v1(15, "start", "The destination number is not in a supported network", .providerRejected),
        v1(16, "check", "The code inserted does not match the expected value", .incorrectCode),
        v1(17, "check", "The wrong code was provided too many times", .maxAttemptsReached),
        v1(18, "search", "Too many request_ids provided", .invalidRequest),
        v1(19, "cancel", "Cancel not possible now", .invalidState),
        v1(19, "next_workflow", "No more events are left to execute", .invalidState),
        v1(20, "start", "This account does not support the parameter: pin_code", .providerRejected),
        v1(29, "start", "Non-Permitted Destination", .providerRejected),
        v1(101, "search", "No response found", .notFound),
    ]

    /// Maps a v1 status code (non-zero) from `operation`; a code no row knows is `provider_error`.
    static func mapV1(code: Int, operation: VendorOperation, providerID: String) -> GatewayError {
        let row = table.row(vocabulary: "v1", code: String(code), httpStatus: 200, operation: operation.name)
        return table.error(
            row?.mapsTo ?? .providerError, detail: "Vonage v1 status \(code)\(row.map { ": " + $0.name } ?? "")",
            vendorCode: String(code), httpStatus: 200, providerID: providerID)
    }

    static func sdk(_ rawValue: Int, _ name: String, _ mapsTo: GatewayError.Code) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "sdk", code: String(rawValue), name: name, mapsTo: mapsTo, source: "docs/vendors/vonage.md §3.1"
        )
    }

    /// One `VerifyError` case of the retired SDK (its raw value as the code) and the gateway code an app sees
    /// instead. Not wire answers: no call returns them.
    // swift-format-ignore
    static let sdkRows: [VendorErrorRow] = [
        sdk(1, "verificationAlreadyStarted", .concurrentVerification),
        sdk(2, "invalidNumber", .invalidPhoneNumber),
        sdk(3, "numberRequired", .invalidRequest),
        sdk(4, "cannotPerformCheck", .invalidState),
        sdk(5, "invalidPinCode", .incorrectCode),
        sdk(6, "invalidCodeTooManyTimes", .maxAttemptsReached),
        sdk(7, "userExpired", .expired),
        sdk(8, "userBlacklisted", .destinationBlocked),
        sdk(9, "throttled", .rateLimited),
        sdk(10, "quotaExceeded", .providerInsufficientFunds),
        sdk(11, "invalidCredentials", .providerAuthFailed),
        sdk(12, "sdkRevisionNotSupported", .providerRejected),
        sdk(13, "osNotSupported", .providerRejected),
        sdk(14, "internalError", .providerError),
        sdk(15, "accountBarred", .providerAuthFailed),
        sdk(16, "networkError", .providerUnavailable),
    ]

    static func sdkError(rawValue: Int) -> GatewayError.Code? {
        table.row(vocabulary: "sdk", code: String(rawValue))?.mapsTo
    }

    static func sms(_ code: Int, _ text: String, _ mapsTo: GatewayError.Code) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "sms", code: String(code), name: text, mapsTo: mapsTo, source: "docs/vendors/vonage-sms.md §5")
    }

    /// Every SMS API `status` of docs/vendors/vonage-sms.md §5 (0 is accepted and has no row), answered in HTTP 200.
    // swift-format-ignore
    static let smsRows: [VendorErrorRow] = [
        sms(1, "Throttled", .providerRateLimited),
        sms(2, "Missing parameters", .providerError),
        sms(3, "Invalid parameters", .invalidPhoneNumber),
        sms(4, "Invalid credentials", .providerAuthFailed),
        sms(5, "Internal error", .providerUnavailable),
        sms(6, "Invalid message", .invalidPhoneNumber),
        sms(7, "Number barred", .destinationBlocked),
        sms(8, "Partner account barred", .providerAuthFailed),
        sms(9, "Partner quota violation", .providerInsufficientFunds),
        sms(10, "Too many existing binds", .providerRateLimited),
        sms(11, "Account not enabled for HTTP", .providerRejected),
        sms(12, "Message too long", .providerRejected),
        sms(14, "Invalid signature", .providerAuthFailed),
        sms(15, "Invalid sender address", .providerRejected),
        sms(17, "Message blocked", .providerRejected),
        sms(22, "Invalid network code", .providerRejected),
        sms(23, "Invalid callback URL", .providerRejected),
        sms(29, "Non-whitelisted destination", .providerRejected),
        sms(32, "Signature and API secret disallowed", .providerAuthFailed),
        sms(33, "Number de-activated", .invalidPhoneNumber),
    ]

    /// Maps a refused part's `status` (non-zero); a code no row knows is `provider_error`.
    static func mapSMS(status code: Int, providerID: String) -> GatewayError {
        let row = table.row(vocabulary: "sms", code: String(code), httpStatus: 200, operation: nil)
        return table.error(
            row?.mapsTo ?? .providerError, detail: "Vonage SMS status \(code)\(row.map { ": " + $0.name } ?? "")",
            vendorCode: String(code), httpStatus: 200, providerID: providerID)
    }

    /// A delivery receipt's non-zero `err-code`, by its `dlr` row.
    static func mapDLR(code: String, providerID: String) -> GatewayError {
        let row = table.row(vocabulary: "dlr", code: code, httpStatus: 200, operation: nil)
        return table.error(
            row?.mapsTo ?? .deliveryFailed, detail: "Vonage DLR err-code \(code)\(row.map { ": " + $0.name } ?? "")",
            vendorCode: code, httpStatus: 200, providerID: providerID)
    }

    static func dlr(_ code: Int, _ text: String, _ mapsTo: GatewayError.Code) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "dlr", code: String(code), name: text, mapsTo: mapsTo, source: "docs/vendors/vonage-sms.md §4.4"
        )
    }

    /// Every delivery receipt `err-code` of docs/vendors/vonage-sms.md §4.4 but 0 (delivered): what a message that was
    /// not delivered means for its verification.
    // swift-format-ignore
    static let dlrRows: [VendorErrorRow] = [
        dlr(1, "Unknown", .deliveryFailed),
        dlr(2, "Absent subscriber, temporary", .deliveryFailed),
        dlr(3, "Absent subscriber, permanent", .invalidPhoneNumber),
        dlr(4, "Call barred by user", .destinationBlocked),
        dlr(5, "Portability error", .deliveryFailed),
        dlr(6, "Anti-spam rejection", .providerRejected),
        dlr(7, "Handset busy", .deliveryFailed),
        dlr(8, "Network error", .deliveryFailed),
        dlr(9, "Illegal number", .destinationBlocked),
        dlr(10, "Illegal message", .providerRejected),
        dlr(11, "Unroutable", .unsupportedDestination),
        dlr(12, "Destination unreachable", .deliveryFailed),
        dlr(13, "Subscriber age restriction", .destinationBlocked),
        dlr(14, "Number blocked by carrier", .destinationBlocked),
        dlr(15, "Destination lacks credit", .deliveryFailed),
        dlr(99, "General error", .deliveryFailed),
    ]
}
