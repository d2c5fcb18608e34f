import GatewayCore

/// The one table from Vonage's errors to the gateway taxonomy (docs/design.md §5), as one ``VendorErrorTable`` of
/// three vocabularies: `v2` problem details by HTTP status and the `type` fragment (docs/vendors/vonage.md §2.4), `v1`
/// `status` codes by operation where their meaning differs (§1.5), and `sdk`, the retired Nexmo Verify iOS
/// SDK's `VerifyError` cases for teams leaving it (§3.1).
///
/// Never by `title`, `detail` or `error_text`: Vonage's texts vary between hosts and versions and can
/// name the number. The vendor's own code and HTTP status stay in ``GatewayError/vendor``.
enum VonageErrorMapping {
    static let table = VendorErrorTable(vendor: "Vonage", rows: v2Rows + v1Rows + sdkRows)

    // MARK: v2

    static func v2(
        _ status: Int, _ fragment: String, _ operation: String?, _ title: String, _ mapsTo: GatewayError.Code,
        _ note: String
    ) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "v2", code: fragment, httpStatus: status, operation: operation, name: title, mapsTo: mapsTo,
            source: "docs/vendors/vonage.md §2.4", note: note)
    }

    /// Every v2 problem of docs/vendors/vonage.md §2.4 and its `x-errors` ids.
    // swift-format-ignore
    static let v2Rows: [VendorErrorRow] = [
        v2(400, "invalid-code", "check", "Invalid Code", .incorrectCode,
            "a wrong code; the provider reads it as a pending check, not an error"),
        v2(401, "unauthorized", nil, "Unauthorized", .providerAuthFailed, "bad key/secret or JWT: fail over, alert"),
        v2(401, "jwt-expired", nil, "Unauthorized", .providerAuthFailed,
            "an expired application JWT; the gateway makes a fresh one per call, so the clock is wrong"),
        v2(402, "low-balance", nil, "Low balance", .providerInsufficientFunds, "top up the account; fail over"),
        v2(403, "forbidden", nil, "Forbidden", .providerRejected, "a feature (templates) not enabled: configuration"),
        v2(404, "not-found", nil, "Not Found", .notFound, "unknown, finished or already verified request"),
        v2(404, "request-not-found", nil, "Not Found", .notFound, "the x-errors id of the same answer"),
        v2(409, "concurrent", "start", "Conflict", .concurrentVerification,
            "a verification to this number is in flight (its request_id is in the body)"),
        v2(409, "no-code", "check", "Conflict", .invalidState,
            "the current step takes no code (silent auth before its redirects gave one)"),
        v2(409, "conflict", "next_workflow", "Conflict", .invalidState,
            "no further workflow step to trigger"),
        v2(409, "no-events", "next_workflow", "Conflict", .invalidState, "the x-errors id of the same answer"),
        v2(409, "conflict", "cancel", "Conflict", .invalidState,
            "cancel within the first 30 s or after the second step began (the emulator's answer; the spec names no status)"),
        v2(410, "expired", "check", "Invalid Code", .maxAttemptsReached,
            "the third wrong code (the first on silent auth): Vonage ended the workflow"),
        v2(410, "gone", "check", "Invalid Code", .maxAttemptsReached, "the Python SDK fixture's type for the same answer"),
        v2(412, "precondition-failed", nil, "Silent authentication failed", .unsupportedDestination,
            "silent auth cannot run for this number or network: use a code channel"),
        v2(412, "network-error", nil, "Network not supported", .unsupportedDestination,
            "the mobile network does not support silent auth"),
        v2(422, "invalid-params", nil, "Invalid params", .invalidRequest,
            "a parameter is invalid; `invalid_parameters` naming `to` means the number (invalid_phone_number)"),
        v2(422, "msisdn-error", nil, "Invalid params", .invalidPhoneNumber, "the `to` number is not valid"),
        v2(429, "throttled", nil, "Rate Limit Hit", .providerRateLimited, "back off, or fail over"),
        v2(500, "internal-error", nil, "Internal error", .providerUnavailable, "platform fault: retry, fail over"),
        // Templates (not used by the gateway; listed so every documented id has a row).
        v2(409, "fragment-exists", nil, "Conflict", .providerRejected, "template configuration"),
        v2(404, "template-fragment-not-found", nil, "Not Found", .providerRejected, "template configuration"),
        v2(404, "template-not-found", nil, "Not Found", .providerRejected, "template configuration"),
        v2(409, "template-exists", nil, "Conflict", .providerRejected, "template configuration"),
        v2(409, "not-empty-template", nil, "Conflict", .providerRejected, "template configuration"),
        v2(403, "max-templates", nil, "Forbidden", .providerRejected, "template configuration"),
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

    // MARK: v1

    static func v1(
        _ code: Int, _ operation: String?, _ text: String, _ mapsTo: GatewayError.Code, _ note: String
    ) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "v1", code: String(code), operation: operation, name: text, mapsTo: mapsTo,
            source: "docs/vendors/vonage.md §1.5", note: note)
    }

    /// Every v1 status of docs/vendors/vonage.md §1.5 and the v1 spec (0 is success and has no row), answered in HTTP
    /// 200.
    // swift-format-ignore
    static let v1Rows: [VendorErrorRow] = [
        v1(1, nil, "Throttled", .providerRateLimited, "more than 30 requests/s: back off, or fail over"),
        v1(2, nil, "Missing mandatory parameter", .invalidRequest, "a parameter the gateway should have sent"),
        v1(3, nil, "Invalid value for parameter", .invalidRequest, "a parameter is invalid"),
        v1(4, nil, "Invalid credentials were provided", .providerAuthFailed, "bad key or secret: fail over, alert"),
        v1(5, nil, "Internal Error", .providerUnavailable, "platform fault: retry, fail over"),
        v1(6, "start", "The request could not be routed", .unsupportedDestination,
            "Vonage cannot route to this number"),
        v1(6, "check", "Request not found or no longer active", .notFound, "unknown, inactive or verified request"),
        v1(6, "cancel", "Request not found or no longer active", .notFound, "unknown, inactive or verified request"),
        v1(6, "next_workflow", "Request not found or no longer active", .notFound,
            "unknown, inactive or verified request"),
        v1(7, "start", "Number blacklisted for verification", .destinationBlocked,
            "Vonage's anti-fraud block: never failed over"),
        v1(8, nil, "Account barred", .providerAuthFailed, "the account is barred: fail over, alert"),
        v1(9, nil, "Partner quota exceeded", .providerInsufficientFunds, "top up the account; fail over"),
        v1(10, "start", "Concurrent verifications to the same number are not allowed", .concurrentVerification,
            "a verification to this number is in flight (its request_id is in the body)"),
        v1(15, "start", "The destination number is not in a supported network", .providerRejected,
            "Vonage cannot reach this network; another vendor may, so fail over"),
        v1(16, "check", "The code inserted does not match the expected value", .incorrectCode,
            "a wrong code; the provider reads it as a pending check"),
        v1(17, "check", "The wrong code was provided too many times", .maxAttemptsReached,
            "the third wrong code: the request failed"),
        v1(18, "search", "Too many request_ids provided", .invalidRequest, "more than 10 ids in one search"),
        v1(19, "cancel", "Cancel not possible now", .invalidState,
            "within the first 30 s, or after the second event"),
        v1(19, "next_workflow", "No more events are left to execute", .invalidState,
            "trigger_next_event with no event left"),
        v1(20, "start", "This account does not support the parameter: pin_code", .providerRejected,
            "an account feature: configuration"),
        v1(29, "start", "Non-Permitted Destination", .providerRejected,
            "a demo account whose approved numbers lack this one: another vendor may send"),
        v1(101, "search", "No response found", .notFound, "unknown request, or one finished in the last minute"),
    ]

    /// Maps a v1 status code (non-zero) from `operation`; a code no row knows is `provider_error`.
    static func mapV1(code: Int, operation: VendorOperation, providerID: String) -> GatewayError {
        let row = table.row(vocabulary: "v1", code: String(code), httpStatus: 200, operation: operation.name)
        return table.error(
            row?.mapsTo ?? .providerError, detail: "Vonage v1 status \(code)\(row.map { ": " + $0.name } ?? "")",
            vendorCode: String(code), httpStatus: 200, providerID: providerID)
    }

    // MARK: Nexmo Verify iOS SDK

    static func sdk(_ rawValue: Int, _ name: String, _ mapsTo: GatewayError.Code, _ note: String) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "sdk", code: String(rawValue), name: name, mapsTo: mapsTo,
            source: "docs/vendors/vonage.md §3.1",
            note: note)
    }

    /// One `VerifyError` case of the retired SDK (its raw value as the code) and the gateway code an app sees
    /// instead. Not wire answers: no call returns them.
    // swift-format-ignore
    static let sdkRows: [VendorErrorRow] = [
        sdk(1, "verificationAlreadyStarted", .concurrentVerification, "a verification is already pending"),
        sdk(2, "invalidNumber", .invalidPhoneNumber, "number missing, invalid or unroutable"),
        sdk(3, "numberRequired", .invalidRequest, "no number in the request"),
        sdk(4, "cannotPerformCheck", .invalidState, "nothing pending to check"),
        sdk(5, "invalidPinCode", .incorrectCode, "a wrong or malformed code"),
        sdk(6, "invalidCodeTooManyTimes", .maxAttemptsReached, "too many wrong codes"),
        sdk(7, "userExpired", .expired, "the verification expired"),
        sdk(8, "userBlacklisted", .destinationBlocked, "the user is blocked"),
        sdk(9, "throttled", .rateLimited, "too many requests"),
        sdk(10, "quotaExceeded", .providerInsufficientFunds, "the account ran out of credit"),
        sdk(11, "invalidCredentials", .providerAuthFailed, "the app's credentials were refused"),
        sdk(12, "sdkRevisionNotSupported", .providerRejected, "no SDK any more: the gateway's API has no revision gate"),
        sdk(13, "osNotSupported", .providerRejected, "no SDK any more: the gateway serves any client"),
        sdk(14, "internalError", .providerError, "an unexpected vendor answer"),
        sdk(15, "accountBarred", .providerAuthFailed, "the account is barred"),
        sdk(16, "networkError", .providerUnavailable, "the vendor could not be reached"),
    ]

    static func sdkError(rawValue: Int) -> GatewayError.Code? {
        table.row(vocabulary: "sdk", code: String(rawValue))?.mapsTo
    }
}
