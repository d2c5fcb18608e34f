import GatewayCore

/// Sinch's three error vocabularies, mapped to the gateway taxonomy (docs/design.md §5): the REST `errorCode`
/// (docs/vendors/sinch.md §4.2), the `status`/`reason` pair a report or status answer carries in-band (§3.1, §3.2), and
/// the classic iOS SDK's `SINVerificationError` constants (§5.1), keyed by name because their numbers
/// changed between SDK versions. Mapping is by these structured fields only, never by `message`.
enum SinchErrorMapping {
    // MARK: errorCode

    struct Row: Sendable, Equatable {
        var code: Int
        /// The iOS SDK's constant name, or the OAS example message for codes it lacks.
        var name: String
        var mapsTo: GatewayError.Code
        var source: String
        var note: String

        init(_ code: Int, _ name: String, _ mapsTo: GatewayError.Code, _ source: String, _ note: String) {
            self.code = code
            self.name = name
            self.mapsTo = mapsTo
            self.source = source
            self.note = note
        }

        /// The HTTP status Sinch answers with: the code's first three digits (docs/vendors/sinch.md §4.1).
        var httpStatus: Int { code / 100 }
    }

    // swift-format-ignore
    static let rows: [Row] = [
        Row(40001, "ParameterValidation", .invalidRequest, "[IOS-NEW] [OAS]",
            "a parameter failed validation (often the number's format): never failed over"),
        Row(40002, "Missing parameter", .invalidRequest, "[OAS] [DOC-ERR]", "\"Endpoint parameter is missing.\""),
        Row(40003, "InvalidRequest", .invalidRequest, "[IOS-NEW] [OAS]", "\"Invalid identity or code.\""),
        Row(40004, "InvalidAuthorizationKey", .providerAuthFailed, "[IOS-NEW]",
            "the application key is not known: fail over, alert"),
        Row(40005, "NumberMissingLeadingPlus", .invalidPhoneNumber, "[IOS-NEW] [OAS]",
            "the number is not in E.164 form"),
        Row(40100, "AuthorizationHeader", .providerAuthFailed, "[IOS-NEW] [OAS]", "malformed Authorization header"),
        Row(40101, "TimestampHeader", .providerAuthFailed, "[IOS-NEW] [OAS]", "x-timestamp missing or unreadable"),
        Row(40102, "InvalidSignature", .providerAuthFailed, "[IOS-NEW] [OAS]",
            "wrong application secret (or a signing bug): fail over, alert"),
        Row(40103, "AlreadyAuthorized", .providerAuthFailed, "[IOS-NEW]", "an authorization problem"),
        Row(40104, "AuthorizationRequired", .providerAuthFailed, "[IOS-NEW] [OAS]", "no Authorization header"),
        Row(40105, "Expired", .providerAuthFailed, "[IOS-NEW]",
            "the request's credentials or x-timestamp are too old (clock skew): alert"),
        Row(40106, "UserBarred", .providerAuthFailed, "[IOS-NEW]",
            "the account is barred: an account problem, fail over and alert"),
        Row(40107, "InvalidAuthorization", .providerAuthFailed, "[IOS-NEW] [OAS]", "an authorization problem"),
        Row(40108, "InvalidCredentials", .providerAuthFailed, "[IOS-NEW]", "wrong key or secret"),
        Row(40200, "NotEnoughCredit", .providerInsufficientFunds, "[IOS-NEW] [OAS]", "the account is out of credit"),
        Row(40300, "ForbiddenRequest", .destinationBlocked, "[IOS-NEW] [OAS]",
            "\"Identity is blacklisted.\", or a request event the gateway denied: a block, never routed around"),
        Row(40301, "InvalidScheme", .providerAuthFailed, "[IOS-NEW]",
            "the scheme is weaker than the application's minimum (Basic where signing is required): configuration"),
        Row(40302, "InsufficientPrivileges", .providerRejected, "[IOS-NEW]",
            "the application may not do this: configuration, fail over"),
        Row(40303, "RestrictedAction", .providerRejected, "[IOS-NEW] [DOC-SIGN]",
            "e.g. public authentication without a callback URL: configuration"),
        Row(40400, "ResourceNotFound", .notFound, "[IOS-NEW] [OAS]",
            "unknown verification id, identity or reference: the gateway settles it as expired"),
        Row(40900, "RequestConflict", .providerRejected, "[IOS-NEW] [OAS]",
            "\"Reference already defined\": the gateway sends unique references, so this is a fault to alert on"),
        Row(42200, "ApplicationConfiguration", .providerRejected, "[IOS-NEW] [OAS]",
            "the application is not configured (name, templates): fail over"),
        Row(42201, "Unavailable", .providerRejected, "[IOS-NEW] [OAS]",
            "\"No route to destination.\": outside Sinch's coverage, another vendor may reach it, so fail over"),
        Row(42202, "InvalidCallbackResponse", .providerRejected, "[IOS-NEW]",
            "the gateway's answer to a request event was not usable: callback configuration"),
        Row(42900, "CapacityExceeded", .providerRateLimited, "[IOS-NEW] [OAS]",
            "the account's request capacity: back off or fail over"),
        Row(42901, "VelocityConstraint", .rateLimited, "[IOS-NEW] [OAS]",
            "too many verifications to this number too quickly: a per-number limit failover would defeat"),
        Row(50000, "InternalError", .providerUnavailable, "[IOS-NEW]", "a fault at Sinch: retry, fail over"),
        Row(50100, "MethodNotImplemented", .providerError, "[IOS-NEW]", "Sinch does not implement the call"),
        Row(50101, "StatusNotImplemented", .providerError, "[IOS-NEW]", "Sinch does not implement the call"),
        Row(50300, "TemporaryDown", .providerUnavailable, "[IOS-NEW] [OAS]",
            "\"Service is temporarily unavailable\": retry with back-off, fail over"),
        Row(50301, "ConfigurationError", .providerRejected, "[IOS-NEW] [OAS]",
            "\"Configuration error, please contact support.\": fail over, alert"),
    ]

    private static let byCode: [Int: Row] = Dictionary(rows.map { ($0.code, $0) }, uniquingKeysWith: { a, _ in a })

    static func row(for code: Int) -> Row? { byCode[code] }

    /// Maps an error answer: a known `errorCode` decides, else the HTTP status (401/403 →
    /// `provider_auth_failed`, 404 → `not_found`, 429 → `provider_rate_limited`, 5xx →
    /// `provider_unavailable`, other 4xx → `provider_rejected`, anything else → `provider_error`).
    static func map(errorCode: Int?, httpStatus: Int, retryAfter: Int?, providerID: String) -> GatewayError {
        let vendor = GatewayError.VendorDetail(
            providerID: providerID, code: errorCode.map(String.init), httpStatus: httpStatus)
        let mapped: GatewayError.Code
        var message: String
        if let errorCode, let row = byCode[errorCode] {
            mapped = row.mapsTo
            message = "\(summary(of: mapped)) (Sinch \(errorCode): \(row.name))"
        } else {
            mapped = fallback(httpStatus: httpStatus)
            message = summary(of: mapped)
            message += errorCode.map { " (Sinch \($0), HTTP \(httpStatus))" } ?? " (HTTP \(httpStatus))"
        }
        return GatewayError(mapped, message + ".", vendor: vendor, retryAfter: retryAfter)
    }

    static func fallback(httpStatus: Int) -> GatewayError.Code {
        .forVendorStatus(httpStatus)
    }

    static func summary(of code: GatewayError.Code) -> String {
        switch code {
        case .invalidRequest: return "Sinch rejected the request as invalid"
        case .invalidPhoneNumber: return "Sinch rejected the phone number"
        case .rateLimited: return "Too many verifications to this number too quickly"
        case .destinationBlocked: return "Sinch blocked verifications to this destination"
        case .notFound: return "Sinch does not know this verification"
        case .providerUnavailable: return "Sinch is unavailable"
        case .providerRateLimited: return "Sinch is rate limiting the gateway"
        case .providerAuthFailed: return "Sinch did not accept the gateway's application credentials or signature"
        case .providerInsufficientFunds: return "The Sinch account has run out of credit"
        case .providerRejected: return "Sinch refused the request because of its application configuration"
        case .providerError: return "Sinch answered in an unexpected way"
        default: return "Sinch returned an error"
        }
    }

    // MARK: status and reason

    /// Sinch's `status` values (§3.1); `FAILED` is the iOS Swift SDK's spelling of `FAIL`.
    static let statuses = ["PENDING", "SUCCESSFUL", "FAIL", "FAILED", "DENIED", "ABORTED", "ERROR"]

    /// What a `reason` means for the verification and, where it ends it, which error a request on it gets.
    struct ReasonRow: Sendable, Equatable {
        var reason: String
        var status: VerificationStatus
        var mapsTo: GatewayError.Code
        var note: String

        init(_ reason: String, _ status: VerificationStatus, _ mapsTo: GatewayError.Code, _ note: String) {
            self.reason = reason
            self.status = status
            self.mapsTo = mapsTo
            self.note = note
        }
    }

    // swift-format-ignore
    static let reasons: [ReasonRow] = [
        ReasonRow("Fraud", .blocked, .destinationBlocked, "Sinch's fraud engine: a block, never routed around"),
        ReasonRow("Not enough credit", .failed, .providerInsufficientFunds, "the account ran out of credit mid-verification"),
        ReasonRow("Blocked", .blocked, .destinationBlocked, "a block at Sinch"),
        ReasonRow("Denied by callback", .denied, .denied, "the gateway (or another backend) answered the request event with deny"),
        ReasonRow("Invalid callback", .denied, .denied, "the request event's answer was unusable, so Sinch denied"),
        ReasonRow("Internal error", .failed, .providerError, "a fault at Sinch ended the verification"),
        ReasonRow("Destination denied", .denied, .denied, "Sinch refuses this destination"),
        ReasonRow("Network error or number unreachable", .failed, .deliveryFailed, "delivery failed"),
        ReasonRow("Failed pending", .failed, .deliveryFailed, "delivery failed"),
        ReasonRow("SMS delivery failure", .failed, .deliveryFailed, "the SMS was not delivered"),
        ReasonRow("Invalid CLI", .pending, .incorrectCode, "a flash call's wrong caller number: a wrong code, attempts remain"),
        ReasonRow("Invalid code", .pending, .incorrectCode, "a wrong code, not a failure: attempts remain"),
        ReasonRow("Expired", .expired, .expired, "the code's time is over"),
        ReasonRow("Hung up without entering valid code", .failed, .deliveryFailed, "the callout ended without a code"),
    ]

    private static let byReason: [String: ReasonRow] = Dictionary(
        reasons.map { ($0.reason.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })

    static func reasonRow(_ reason: String) -> ReasonRow? { byReason[reason.lowercased()] }

    /// The verification status a `status` alone means, when no known reason says more.
    static func status(named status: String) -> VerificationStatus? {
        switch status.uppercased() {
        case "PENDING": return .pending
        case "SUCCESSFUL": return .approved
        // An attempt was made and the number is not verified; with a reason, the reason decides.
        case "FAIL", "FAILED": return .failed
        case "DENIED": return .denied
        case "ABORTED": return .canceled
        case "ERROR": return .failed
        default: return nil
        }
    }

    /// The gateway status of a `status`/`reason` pair: `PENDING`, `SUCCESSFUL` and `ABORTED` decide alone;
    /// for the others a known reason decides (`FAIL`/`Invalid code` is a wrong code, so `pending`;
    /// `DENIED`/`Fraud` is `blocked`), else the status. `nil` for a status Sinch does not document.
    static func outcome(status: String, reason: String?) -> VerificationStatus? {
        guard let byStatus = self.status(named: status) else { return nil }
        switch byStatus {
        case .pending, .approved, .canceled: return byStatus
        default: return reason.flatMap(reasonRow)?.status ?? byStatus
        }
    }

    // MARK: SINVerificationError (classic iOS SDK)

    struct IOSRow: Sendable, Equatable {
        var name: String
        /// The constant's value in each SDK generation that has it (the 2015 header had ServiceError = 3).
        var values: [Int]
        var mapsTo: GatewayError.Code
        var note: String

        init(_ name: String, _ values: [Int], _ mapsTo: GatewayError.Code, _ note: String) {
            self.name = name
            self.values = values
            self.mapsTo = mapsTo
            self.note = note
        }
    }

    // swift-format-ignore
    static let iosErrors: [IOSRow] = [
        IOSRow("SINVerificationErrorInvalidInput", [1], .invalidRequest,
               "invalid input (a missing number or code): the gateway answers before any vendor call"),
        IOSRow("SINVerificationErrorIncorrectCode", [2], .incorrectCode, "a wrong code; attempts remain"),
        IOSRow("SINVerificationErrorCalloutFailure", [3], .deliveryFailed, "the callout failed"),
        IOSRow("SINVerificationErrorTimeout", [4], .expired, "the verification timed out"),
        IOSRow("SINVerificationErrorCancelled", [5], .canceled, "cancelled, usually by the user: do not alert"),
        IOSRow("SINVerificationErrorServiceError", [6, 3], .providerError,
               "a Sinch backend error; the REST errorCode (SINServiceErrorReferenceKey's reference) says more"),
    ]

    private static let byIOSName: [String: IOSRow] = Dictionary(
        iosErrors.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })

    /// The gateway code for an iOS constant, by name (with or without the `SINVerificationError` prefix).
    static func iosError(named name: String) -> IOSRow? {
        byIOSName[name] ?? byIOSName["SINVerificationError" + name]
    }
}
