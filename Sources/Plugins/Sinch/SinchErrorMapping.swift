import GatewayCore

/// Sinch's three error vocabularies, mapped to the gateway taxonomy (docs/design.md §5): the REST `errorCode`
/// (docs/vendors/sinch.md §4.2), the `status`/`reason` pair a report or status answer carries in-band (§3.1, §3.2), and
/// the classic iOS SDK's `SINVerificationError` constants (§5.1), keyed by name because their numbers
/// changed between SDK versions. Mapping is by these structured fields only, never by `message`.
enum SinchErrorMapping {
    /// The one table, in three vocabularies: `""` the REST `errorCode`s, `reason` the in-band reasons (the
    /// verification status each means in `related["status"]`), `ios` the SDK constants by name (their numbers
    /// in `related["values"]`).
    static let table = VendorErrorTable(
        vendor: "Sinch", rows: rows + reasons + iosErrors,
        summaries: [
            .rateLimited: "Too many verifications to this number too quickly",
            .destinationBlocked: "Sinch blocked verifications to this destination",
            .notFound: "Sinch does not know this verification",
            .providerAuthFailed: "Sinch did not accept the gateway's application credentials or signature",
            .providerRejected: "Sinch refused the request because of its application configuration",
        ])

    // MARK: errorCode

    /// One `errorCode`; its HTTP status is the code's first three digits (docs/vendors/sinch.md §4.1). `name` is the
    /// iOS SDK's constant name, or the OAS example message for codes it lacks.
    static func row(
        _ code: Int, _ name: String, _ mapsTo: GatewayError.Code, _ source: String, _ note: String
    ) -> VendorErrorRow {
        VendorErrorRow(
            code: String(code), httpStatus: code / 100, name: name, mapsTo: mapsTo, source: source, note: note)
    }

    // swift-format-ignore
    static let rows: [VendorErrorRow] = [
        row(40001, "ParameterValidation", .invalidRequest, "[IOS-NEW] [OAS]",
            "a parameter failed validation (often the number's format): never failed over"),
        row(40002, "Missing parameter", .invalidRequest, "[OAS] [DOC-ERR]", "\"Endpoint parameter is missing.\""),
        row(40003, "InvalidRequest", .invalidRequest, "[IOS-NEW] [OAS]", "\"Invalid identity or code.\""),
        row(40004, "InvalidAuthorizationKey", .providerAuthFailed, "[IOS-NEW]",
            "the application key is not known: fail over, alert"),
        row(40005, "NumberMissingLeadingPlus", .invalidPhoneNumber, "[IOS-NEW] [OAS]",
            "the number is not in E.164 form"),
        row(40100, "AuthorizationHeader", .providerAuthFailed, "[IOS-NEW] [OAS]", "malformed Authorization header"),
        row(40101, "TimestampHeader", .providerAuthFailed, "[IOS-NEW] [OAS]", "x-timestamp missing or unreadable"),
        row(40102, "InvalidSignature", .providerAuthFailed, "[IOS-NEW] [OAS]",
            "wrong application secret (or a signing bug): fail over, alert"),
        row(40103, "AlreadyAuthorized", .providerAuthFailed, "[IOS-NEW]", "an authorization problem"),
        row(40104, "AuthorizationRequired", .providerAuthFailed, "[IOS-NEW] [OAS]", "no Authorization header"),
        row(40105, "Expired", .providerAuthFailed, "[IOS-NEW]",
            "the request's credentials or x-timestamp are too old (clock skew): alert"),
        row(40106, "UserBarred", .providerAuthFailed, "[IOS-NEW]",
            "the account is barred: an account problem, fail over and alert"),
        row(40107, "InvalidAuthorization", .providerAuthFailed, "[IOS-NEW] [OAS]", "an authorization problem"),
        row(40108, "InvalidCredentials", .providerAuthFailed, "[IOS-NEW]", "wrong key or secret"),
        row(40200, "NotEnoughCredit", .providerInsufficientFunds, "[IOS-NEW] [OAS]", "the account is out of credit"),
        row(40300, "ForbiddenRequest", .destinationBlocked, "[IOS-NEW] [OAS]",
            "\"Identity is blacklisted.\", or a request event the gateway denied: a block, never routed around"),
        row(40301, "InvalidScheme", .providerAuthFailed, "[IOS-NEW]",
            "the scheme is weaker than the application's minimum (Basic where signing is required): configuration"),
        row(40302, "InsufficientPrivileges", .providerRejected, "[IOS-NEW]",
            "the application may not do this: configuration, fail over"),
        row(40303, "RestrictedAction", .providerRejected, "[IOS-NEW] [DOC-SIGN]",
            "e.g. public authentication without a callback URL: configuration"),
        row(40400, "ResourceNotFound", .notFound, "[IOS-NEW] [OAS]",
            "unknown verification id, identity or reference: the gateway settles it as expired"),
        row(40900, "RequestConflict", .providerRejected, "[IOS-NEW] [OAS]",
            "\"Reference already defined\": the gateway sends unique references, so this is a fault to alert on"),
        row(42200, "ApplicationConfiguration", .providerRejected, "[IOS-NEW] [OAS]",
            "the application is not configured (name, templates): fail over"),
        row(42201, "Unavailable", .providerRejected, "[IOS-NEW] [OAS]",
            "\"No route to destination.\": outside Sinch's coverage, another vendor may reach it, so fail over"),
        row(42202, "InvalidCallbackResponse", .providerRejected, "[IOS-NEW]",
            "the gateway's answer to a request event was not usable: callback configuration"),
        row(42900, "CapacityExceeded", .providerRateLimited, "[IOS-NEW] [OAS]",
            "the account's request capacity: back off or fail over"),
        row(42901, "VelocityConstraint", .rateLimited, "[IOS-NEW] [OAS]",
            "too many verifications to this number too quickly: a per-number limit failover would defeat"),
        row(50000, "InternalError", .providerUnavailable, "[IOS-NEW]", "a fault at Sinch: retry, fail over"),
        row(50100, "MethodNotImplemented", .providerError, "[IOS-NEW]", "Sinch does not implement the call"),
        row(50101, "StatusNotImplemented", .providerError, "[IOS-NEW]", "Sinch does not implement the call"),
        row(50300, "TemporaryDown", .providerUnavailable, "[IOS-NEW] [OAS]",
            "\"Service is temporarily unavailable\": retry with back-off, fail over"),
        row(50301, "ConfigurationError", .providerRejected, "[IOS-NEW] [OAS]",
            "\"Configuration error, please contact support.\": fail over, alert"),
    ]

    static func row(for code: Int) -> VendorErrorRow? { table.row(code: String(code), httpStatus: code / 100) }

    /// Maps an error answer: a known `errorCode` decides, else the HTTP status (401/403 →
    /// `provider_auth_failed`, 404 → `not_found`, 429 → `provider_rate_limited`, 5xx →
    /// `provider_unavailable`, other 4xx → `provider_rejected`, anything else → `provider_error`).
    static func map(errorCode: Int?, httpStatus: Int, retryAfter: Int?, providerID: String) -> GatewayError {
        let found = errorCode.flatMap(row(for:))
        let detail =
            if let errorCode, let found { "Sinch \(errorCode): \(found.name)" } else {
                errorCode.map { "Sinch \($0), HTTP \(httpStatus)" } ?? "HTTP \(httpStatus)"
            }
        return table.error(
            found?.mapsTo ?? .forVendorStatus(httpStatus), detail: detail, vendorCode: errorCode.map(String.init),
            httpStatus: httpStatus, providerID: providerID, retryAfter: retryAfter)
    }

    static func summary(of code: GatewayError.Code) -> String { table.summary(of: code) }

    // MARK: status and reason

    /// Sinch's `status` values (§3.1); `FAILED` is the iOS Swift SDK's spelling of `FAIL`.
    static let statuses = ["PENDING", "SUCCESSFUL", "FAIL", "FAILED", "DENIED", "ABORTED", "ERROR"]

    /// What a `reason` means for the verification (`status`) and, where it ends it, which error a request on it
    /// gets.
    static func reason(
        _ reason: String, _ status: VerificationStatus, _ mapsTo: GatewayError.Code, _ note: String
    ) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "reason", code: reason, name: reason, mapsTo: mapsTo, source: "docs/vendors/sinch.md §3.2",
            note: note, related: ["status": status.rawValue])
    }

    // swift-format-ignore
    static let reasons: [VendorErrorRow] = [
        reason("Fraud", .blocked, .destinationBlocked, "Sinch's fraud engine: a block, never routed around"),
        reason("Not enough credit", .failed, .providerInsufficientFunds, "the account ran out of credit mid-verification"),
        reason("Blocked", .blocked, .destinationBlocked, "a block at Sinch"),
        reason("Denied by callback", .denied, .denied, "the gateway (or another backend) answered the request event with deny"),
        reason("Invalid callback", .denied, .denied, "the request event's answer was unusable, so Sinch denied"),
        reason("Internal error", .failed, .providerError, "a fault at Sinch ended the verification"),
        reason("Destination denied", .denied, .denied, "Sinch refuses this destination"),
        reason("Network error or number unreachable", .failed, .deliveryFailed, "delivery failed"),
        reason("Failed pending", .failed, .deliveryFailed, "delivery failed"),
        reason("SMS delivery failure", .failed, .deliveryFailed, "the SMS was not delivered"),
        reason("Invalid CLI", .pending, .incorrectCode, "a flash call's wrong caller number: a wrong code, attempts remain"),
        reason("Invalid code", .pending, .incorrectCode, "a wrong code, not a failure: attempts remain"),
        reason("Expired", .expired, .expired, "the code's time is over"),
        reason("Hung up without entering valid code", .failed, .deliveryFailed, "the callout ended without a code"),
    ]

    /// The row of a reason, whatever its case.
    static func reasonRow(_ reason: String) -> VendorErrorRow? {
        reasons.first { $0.code?.lowercased() == reason.lowercased() }
    }

    /// The verification status a reason row means.
    static func status(of row: VendorErrorRow) -> VerificationStatus? {
        row.related["status"].flatMap(VerificationStatus.init(rawValue:))
    }

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
        default: return reason.flatMap(reasonRow).flatMap(status(of:)) ?? byStatus
        }
    }

    // MARK: SINVerificationError (classic iOS SDK)

    /// One constant by name, with its value in each SDK generation that has it (the 2015 header had
    /// ServiceError = 3).
    static func ios(_ name: String, _ values: [Int], _ mapsTo: GatewayError.Code, _ note: String) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "ios", code: name, name: name, mapsTo: mapsTo, source: "docs/vendors/sinch.md §5.1", note: note,
            related: ["values": values.map(String.init).joined(separator: ", ")])
    }

    // swift-format-ignore
    static let iosErrors: [VendorErrorRow] = [
        ios("SINVerificationErrorInvalidInput", [1], .invalidRequest,
               "invalid input (a missing number or code): the gateway answers before any vendor call"),
        ios("SINVerificationErrorIncorrectCode", [2], .incorrectCode, "a wrong code; attempts remain"),
        ios("SINVerificationErrorCalloutFailure", [3], .deliveryFailed, "the callout failed"),
        ios("SINVerificationErrorTimeout", [4], .expired, "the verification timed out"),
        ios("SINVerificationErrorCancelled", [5], .canceled, "cancelled, usually by the user: do not alert"),
        ios("SINVerificationErrorServiceError", [6, 3], .providerError,
               "a Sinch backend error; the REST errorCode (SINServiceErrorReferenceKey's reference) says more"),
    ]

    /// The row of an iOS constant, by name (with or without the `SINVerificationError` prefix).
    static func iosError(named name: String) -> VendorErrorRow? {
        table.row(vocabulary: "ios", code: name) ?? table.row(vocabulary: "ios", code: "SINVerificationError" + name)
    }
}
