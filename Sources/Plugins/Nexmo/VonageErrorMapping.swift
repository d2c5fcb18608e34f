import GatewayCore

/// The one table from Vonage's errors to the gateway taxonomy (DESIGN.md §5): v2 problem details by HTTP
/// status and the `type` fragment, v1 `status` codes by endpoint where their meaning differs, and the
/// retired Nexmo Verify iOS SDK's `VerifyError` cases for teams leaving it (vonage.md §1.5, §2.4, §3.1).
///
/// Never by `title`, `detail` or `error_text`: Vonage's texts vary between hosts and versions and can
/// name the number. The vendor's own code and HTTP status stay in ``GatewayError/vendor``.
enum VonageErrorMapping {
    /// The operation a Vonage answer came from; some codes mean different things on different endpoints.
    enum Endpoint: String, Sendable, CaseIterable {
        case start, check, cancel, nextWorkflow = "next_workflow", search, silentAuth = "silent_auth"
    }

    // MARK: v2

    /// One v2 problem: an HTTP status, the `type` fragment (Vonage's `x-errors` id), and where it applies.
    struct V2Row: Sendable, Equatable {
        var status: Int
        /// The id after `#` in `type`; `nil` for the row that covers the status when the fragment is unknown.
        var fragment: String?
        /// The endpoint the row is limited to; `nil`: any.
        var endpoint: Endpoint?
        var title: String
        var mapsTo: GatewayError.Code
        var note: String

        init(
            _ status: Int, _ fragment: String?, _ endpoint: Endpoint?, _ title: String, _ mapsTo: GatewayError.Code,
            _ note: String
        ) {
            self.status = status
            self.fragment = fragment
            self.endpoint = endpoint
            self.title = title
            self.mapsTo = mapsTo
            self.note = note
        }
    }

    /// Every v2 problem of vonage.md §2.4 and its `x-errors` ids.
    // swift-format-ignore
    static let v2Rows: [V2Row] = [
        V2Row(400, "invalid-code", .check, "Invalid Code", .incorrectCode,
              "a wrong code; the provider reads it as a pending check, not an error"),
        V2Row(401, "unauthorized", nil, "Unauthorized", .providerAuthFailed, "bad key/secret or JWT: fail over, alert"),
        V2Row(401, "jwt-expired", nil, "Unauthorized", .providerAuthFailed,
              "an expired application JWT; the gateway makes a fresh one per call, so the clock is wrong"),
        V2Row(402, "low-balance", nil, "Low balance", .providerInsufficientFunds, "top up the account; fail over"),
        V2Row(403, "forbidden", nil, "Forbidden", .providerRejected, "a feature (templates) not enabled: configuration"),
        V2Row(404, "not-found", nil, "Not Found", .notFound, "unknown, finished or already verified request"),
        V2Row(404, "request-not-found", nil, "Not Found", .notFound, "the x-errors id of the same answer"),
        V2Row(409, "concurrent", .start, "Conflict", .concurrentVerification,
              "a verification to this number is in flight (its request_id is in the body)"),
        V2Row(409, "no-code", .check, "Conflict", .invalidState,
              "the current step takes no code (silent auth before its redirects gave one)"),
        V2Row(409, "conflict", .nextWorkflow, "Conflict", .invalidState,
              "no further workflow step to trigger"),
        V2Row(409, "no-events", .nextWorkflow, "Conflict", .invalidState, "the x-errors id of the same answer"),
        V2Row(409, "conflict", .cancel, "Conflict", .invalidState,
              "cancel within the first 30 s or after the second step began (the emulator's answer; the spec names no status)"),
        V2Row(410, "expired", .check, "Invalid Code", .maxAttemptsReached,
              "the third wrong code (the first on silent auth): Vonage ended the workflow"),
        V2Row(410, "gone", .check, "Invalid Code", .maxAttemptsReached, "the Python SDK fixture's type for the same answer"),
        V2Row(412, "precondition-failed", nil, "Silent authentication failed", .unsupportedDestination,
              "silent auth cannot run for this number or network: use a code channel"),
        V2Row(412, "network-error", nil, "Network not supported", .unsupportedDestination,
              "the mobile network does not support silent auth"),
        V2Row(422, "invalid-params", nil, "Invalid params", .invalidRequest,
              "a parameter is invalid; `invalid_parameters` naming `to` means the number (invalid_phone_number)"),
        V2Row(422, "msisdn-error", nil, "Invalid params", .invalidPhoneNumber, "the `to` number is not valid"),
        V2Row(429, "throttled", nil, "Rate Limit Hit", .providerRateLimited, "back off, or fail over"),
        V2Row(500, "internal-error", nil, "Internal error", .providerUnavailable, "platform fault: retry, fail over"),
        // Templates (not used by the gateway; listed so every documented id has a row).
        V2Row(409, "fragment-exists", nil, "Conflict", .providerRejected, "template configuration"),
        V2Row(404, "template-fragment-not-found", nil, "Not Found", .providerRejected, "template configuration"),
        V2Row(404, "template-not-found", nil, "Not Found", .providerRejected, "template configuration"),
        V2Row(409, "template-exists", nil, "Conflict", .providerRejected, "template configuration"),
        V2Row(409, "not-empty-template", nil, "Conflict", .providerRejected, "template configuration"),
        V2Row(403, "max-templates", nil, "Forbidden", .providerRejected, "template configuration"),
    ]

    /// Maps a v2 error answer. The row for the status and fragment (on this endpoint first) decides; then the
    /// status alone; a 422 whose `invalid_parameters` names `to` is a bad number.
    static func mapV2(
        status: Int, problem: VonageWire.Problem?, endpoint: Endpoint, retryAfter: Int?, providerID: String
    ) -> GatewayError {
        let fragment = problem?.fragment
        let row =
            v2Rows.first { $0.status == status && $0.fragment == fragment && $0.endpoint == endpoint }
            ?? v2Rows.first { $0.status == status && $0.fragment == fragment && $0.endpoint == nil }
            ?? v2Rows.first { $0.status == status && $0.endpoint == endpoint && $0.fragment != nil }
        var code = row?.mapsTo ?? fallback(httpStatus: status)
        if status == 422, problem?.namesDestination == true { code = .invalidPhoneNumber }
        let vendor = GatewayError.VendorDetail(
            providerID: providerID, code: fragment ?? String(status), httpStatus: status)
        var message = summary(of: code)
        message += " (Vonage HTTP \(status)\(fragment.map { " #\($0)" } ?? ""))."
        return GatewayError(
            code, message, vendor: vendor, attemptsRemaining: code == .maxAttemptsReached ? 0 : nil,
            retryAfter: retryAfter)
    }

    // MARK: v1

    /// One v1 status code, on one endpoint or on all.
    struct V1Row: Sendable, Equatable {
        var code: Int
        /// `nil`: the same meaning on every endpoint that returns the code.
        var endpoint: Endpoint?
        var text: String
        var mapsTo: GatewayError.Code
        var note: String

        init(_ code: Int, _ endpoint: Endpoint?, _ text: String, _ mapsTo: GatewayError.Code, _ note: String) {
            self.code = code
            self.endpoint = endpoint
            self.text = text
            self.mapsTo = mapsTo
            self.note = note
        }
    }

    /// Every v1 status of vonage.md §1.5 and the v1 spec (0 is success and has no row).
    // swift-format-ignore
    static let v1Rows: [V1Row] = [
        V1Row(1, nil, "Throttled", .providerRateLimited, "more than 30 requests/s: back off, or fail over"),
        V1Row(2, nil, "Missing mandatory parameter", .invalidRequest, "a parameter the gateway should have sent"),
        V1Row(3, nil, "Invalid value for parameter", .invalidRequest, "a parameter is invalid"),
        V1Row(4, nil, "Invalid credentials were provided", .providerAuthFailed, "bad key or secret: fail over, alert"),
        V1Row(5, nil, "Internal Error", .providerUnavailable, "platform fault: retry, fail over"),
        V1Row(6, .start, "The request could not be routed", .unsupportedDestination,
              "Vonage cannot route to this number"),
        V1Row(6, .check, "Request not found or no longer active", .notFound, "unknown, inactive or verified request"),
        V1Row(6, .cancel, "Request not found or no longer active", .notFound, "unknown, inactive or verified request"),
        V1Row(6, .nextWorkflow, "Request not found or no longer active", .notFound,
              "unknown, inactive or verified request"),
        V1Row(7, .start, "Number blacklisted for verification", .destinationBlocked,
              "Vonage's anti-fraud block: never failed over"),
        V1Row(8, nil, "Account barred", .providerAuthFailed, "the account is barred: fail over, alert"),
        V1Row(9, nil, "Partner quota exceeded", .providerInsufficientFunds, "top up the account; fail over"),
        V1Row(10, .start, "Concurrent verifications to the same number are not allowed", .concurrentVerification,
              "a verification to this number is in flight (its request_id is in the body)"),
        V1Row(15, .start, "The destination number is not in a supported network", .providerRejected,
              "Vonage cannot reach this network; another vendor may, so fail over"),
        V1Row(16, .check, "The code inserted does not match the expected value", .incorrectCode,
              "a wrong code; the provider reads it as a pending check"),
        V1Row(17, .check, "The wrong code was provided too many times", .maxAttemptsReached,
              "the third wrong code: the request failed"),
        V1Row(18, .search, "Too many request_ids provided", .invalidRequest, "more than 10 ids in one search"),
        V1Row(19, .cancel, "Cancel not possible now", .invalidState,
              "within the first 30 s, or after the second event"),
        V1Row(19, .nextWorkflow, "No more events are left to execute", .invalidState,
              "trigger_next_event with no event left"),
        V1Row(20, .start, "This account does not support the parameter: pin_code", .providerRejected,
              "an account feature: configuration"),
        V1Row(29, .start, "Non-Permitted Destination", .providerRejected,
              "a demo account whose approved numbers lack this one: another vendor may send"),
        V1Row(101, .search, "No response found", .notFound, "unknown request, or one finished in the last minute"),
    ]

    /// Maps a v1 status code (non-zero) from `endpoint`.
    static func mapV1(code: Int, endpoint: Endpoint, providerID: String) -> GatewayError {
        let row = v1Rows.first { $0.code == code && $0.endpoint == endpoint } ?? v1Rows.first { $0.code == code && $0.endpoint == nil }
        let mapped = row?.mapsTo ?? .providerError
        let vendor = GatewayError.VendorDetail(providerID: providerID, code: String(code), httpStatus: 200)
        let message = summary(of: mapped) + " (Vonage v1 status \(code)\(row.map { ": " + $0.text } ?? ""))."
        return GatewayError(
            mapped, message, vendor: vendor, attemptsRemaining: mapped == .maxAttemptsReached ? 0 : nil)
    }

    // MARK: Nexmo Verify iOS SDK

    /// One `VerifyError` case of the retired SDK (vonage.md §3.1) and the gateway code an app sees instead.
    struct SDKRow: Sendable, Equatable {
        var rawValue: Int
        var name: String
        var mapsTo: GatewayError.Code
        var note: String

        init(_ rawValue: Int, _ name: String, _ mapsTo: GatewayError.Code, _ note: String) {
            self.rawValue = rawValue
            self.name = name
            self.mapsTo = mapsTo
            self.note = note
        }
    }

    // swift-format-ignore
    static let sdkRows: [SDKRow] = [
        SDKRow(1, "verificationAlreadyStarted", .concurrentVerification, "a verification is already pending"),
        SDKRow(2, "invalidNumber", .invalidPhoneNumber, "number missing, invalid or unroutable"),
        SDKRow(3, "numberRequired", .invalidRequest, "no number in the request"),
        SDKRow(4, "cannotPerformCheck", .invalidState, "nothing pending to check"),
        SDKRow(5, "invalidPinCode", .incorrectCode, "a wrong or malformed code"),
        SDKRow(6, "invalidCodeTooManyTimes", .maxAttemptsReached, "too many wrong codes"),
        SDKRow(7, "userExpired", .expired, "the verification expired"),
        SDKRow(8, "userBlacklisted", .destinationBlocked, "the user is blocked"),
        SDKRow(9, "throttled", .rateLimited, "too many requests"),
        SDKRow(10, "quotaExceeded", .providerInsufficientFunds, "the account ran out of credit"),
        SDKRow(11, "invalidCredentials", .providerAuthFailed, "the app's credentials were refused"),
        SDKRow(12, "sdkRevisionNotSupported", .providerRejected, "no SDK any more: the gateway's API has no revision gate"),
        SDKRow(13, "osNotSupported", .providerRejected, "no SDK any more: the gateway serves any client"),
        SDKRow(14, "internalError", .providerError, "an unexpected vendor answer"),
        SDKRow(15, "accountBarred", .providerAuthFailed, "the account is barred"),
        SDKRow(16, "networkError", .providerUnavailable, "the vendor could not be reached"),
    ]

    static func sdkError(rawValue: Int) -> GatewayError.Code? {
        sdkRows.first { $0.rawValue == rawValue }?.mapsTo
    }

    // MARK: shared

    /// The code for an HTTP status no row covers.
    static func fallback(httpStatus: Int) -> GatewayError.Code {
        httpStatus == 402 ? .providerInsufficientFunds : .forVendorStatus(httpStatus)
    }

    /// A message that names the situation, never Vonage's own text.
    static func summary(of code: GatewayError.Code) -> String {
        switch code {
        case .invalidRequest: return "Vonage rejected the request as invalid"
        case .invalidPhoneNumber: return "Vonage rejected the phone number"
        case .unsupportedDestination: return "Vonage cannot verify this destination this way"
        case .destinationBlocked: return "Vonage blocked verification of this destination"
        case .incorrectCode: return "The code is not correct"
        case .maxAttemptsReached: return "Too many wrong codes; Vonage ended the verification"
        case .expired: return "The verification has expired; start a new one"
        case .notFound: return "Vonage does not know this verification; it may have finished"
        case .concurrentVerification: return "A verification to this number is already in progress at Vonage"
        case .invalidState: return "Vonage cannot do this in the verification's current state"
        case .rateLimited, .providerRateLimited: return "Vonage is rate limiting the gateway"
        case .providerUnavailable: return "Vonage is unavailable"
        case .providerTimeout: return "Vonage did not answer in time"
        case .providerAuthFailed: return "Vonage did not accept the gateway's credentials or account"
        case .providerInsufficientFunds: return "The Vonage account has run out of credit"
        case .providerRejected: return "Vonage refused the request because of its account or configuration"
        case .providerError: return "Vonage answered in an unexpected way"
        default: return "Vonage returned an error"
        }
    }
}
