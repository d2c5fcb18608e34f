import GatewayCore

/// Sinch's errors in the gateway taxonomy, never by `message`, in three vocabularies: `""` the REST `errorCode`s
/// (docs/vendors/sinch.md §4.2), `reason` the in-band reasons of a `status` (§3.2; the verification status each
/// means in `related["status"]`), `ios` the classic iOS SDK's `SINVerificationError` constants by name (§5.1;
/// their numbers, which changed between SDK versions, in `related["values"]`). `docs/errors.md` says why.
enum SinchErrorMapping {
    static let table = VendorErrorTable(
        vendor: "Sinch", rows: rows + reasons + iosErrors,
        summaries: [
            .rateLimited: "Too many verifications to this number too quickly",
            .destinationBlocked: "Sinch blocked verifications to this destination",
            .notFound: "Sinch does not know this verification",
            .providerAuthFailed: "Sinch did not accept the gateway's application credentials or signature",
            .providerRejected: "Sinch refused the request because of its application configuration",
        ])

    /// One `errorCode`; its HTTP status is the code's first three digits (docs/vendors/sinch.md §4.1). `name` is the
    /// iOS SDK's constant name, or the OAS example message for codes it lacks.
    static func row(_ code: Int, _ name: String, _ mapsTo: GatewayError.Code, _ source: String) -> VendorErrorRow {
        VendorErrorRow(code: String(code), httpStatus: code / 100, name: name, mapsTo: mapsTo, source: source)
    }

    // swift-format-ignore
    static let rows: [VendorErrorRow] = [
        row(40001, "ParameterValidation", .invalidRequest, "[IOS-NEW] [OAS]"),
        row(40002, "Missing parameter", .invalidRequest, "[OAS] [DOC-ERR]"),
        row(40003, "InvalidRequest", .invalidRequest, "[IOS-NEW] [OAS]"),
        row(40004, "InvalidAuthorizationKey", .providerAuthFailed, "[IOS-NEW]"),
        row(40005, "NumberMissingLeadingPlus", .invalidPhoneNumber, "[IOS-NEW] [OAS]"),
        row(40100, "AuthorizationHeader", .providerAuthFailed, "[IOS-NEW] [OAS]"),
        row(40101, "TimestampHeader", .providerAuthFailed, "[IOS-NEW] [OAS]"),
        row(40102, "InvalidSignature", .providerAuthFailed, "[IOS-NEW] [OAS]"),
        row(40103, "AlreadyAuthorized", .providerAuthFailed, "[IOS-NEW]"),
        row(40104, "AuthorizationRequired", .providerAuthFailed, "[IOS-NEW] [OAS]"),
        row(40105, "Expired", .providerAuthFailed, "[IOS-NEW]"),
        row(40106, "UserBarred", .providerAuthFailed, "[IOS-NEW]"),
        row(40107, "InvalidAuthorization", .providerAuthFailed, "[IOS-NEW] [OAS]"),
        row(40108, "InvalidCredentials", .providerAuthFailed, "[IOS-NEW]"),
        row(40200, "NotEnoughCredit", .providerInsufficientFunds, "[IOS-NEW] [OAS]"),
        row(40300, "ForbiddenRequest", .destinationBlocked, "[IOS-NEW] [OAS]"),
        row(40301, "InvalidScheme", .providerAuthFailed, "[IOS-NEW]"),
        row(40302, "InsufficientPrivileges", .providerRejected, "[IOS-NEW]"),
        row(40303, "RestrictedAction", .providerRejected, "[IOS-NEW] [DOC-SIGN]"),
        row(40400, "ResourceNotFound", .notFound, "[IOS-NEW] [OAS]"),
        row(40900, "RequestConflict", .providerRejected, "[IOS-NEW] [OAS]"),
        row(42200, "ApplicationConfiguration", .providerRejected, "[IOS-NEW] [OAS]"),
        row(42201, "Unavailable", .providerRejected, "[IOS-NEW] [OAS]"),
        row(42202, "InvalidCallbackResponse", .providerRejected, "[IOS-NEW]"),
        row(42900, "CapacityExceeded", .providerRateLimited, "[IOS-NEW] [OAS]"),
        row(42901, "VelocityConstraint", .rateLimited, "[IOS-NEW] [OAS]"),
        row(50000, "InternalError", .providerUnavailable, "[IOS-NEW]"),
        row(50100, "MethodNotImplemented", .providerError, "[IOS-NEW]"),
        row(50101, "StatusNotImplemented", .providerError, "[IOS-NEW]"),
        row(50300, "TemporaryDown", .providerUnavailable, "[IOS-NEW] [OAS]"),
        row(50301, "ConfigurationError", .providerRejected, "[IOS-NEW] [OAS]"),
    ]

    static func row(for code: Int) -> VendorErrorRow? { table.row(anyStatus: String(code)) }

    static func map(errorCode: Int?, httpStatus: Int, retryAfter: Int?, providerID: String) -> GatewayError {
        table.error(
            code: errorCode.map(String.init), httpStatus: httpStatus, retryAfter: retryAfter, providerID: providerID)
    }

    /// What a `reason` means for the verification (`status`) and which error a request on it gets.
    static func reason(_ reason: String, _ status: VerificationStatus, _ mapsTo: GatewayError.Code) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "reason", code: reason, name: reason, mapsTo: mapsTo, source: "docs/vendors/sinch.md §3.2",
            related: ["status": status.rawValue])
    }

    // swift-format-ignore
    static let reasons: [VendorErrorRow] = [
        reason("Fraud", .blocked, .destinationBlocked),
        reason("Not enough credit", .failed, .providerInsufficientFunds),
        reason("Blocked", .blocked, .destinationBlocked),
        reason("Denied by callback", .denied, .denied),
        reason("Invalid callback", .denied, .denied),
        reason("Internal error", .failed, .providerError),
        reason("Destination denied", .denied, .denied),
        reason("Network error or number unreachable", .failed, .deliveryFailed),
        reason("Failed pending", .failed, .deliveryFailed),
        reason("SMS delivery failure", .failed, .deliveryFailed),
        reason("Invalid CLI", .pending, .incorrectCode),
        reason("Invalid code", .pending, .incorrectCode),
        reason("Expired", .expired, .expired),
        reason("Hung up without entering valid code", .failed, .deliveryFailed),
    ]

    /// Whatever its case.
    static func reasonRow(_ reason: String) -> VendorErrorRow? {
        reasons.first { $0.code?.lowercased() == reason.lowercased() }
    }

    static func status(of row: VendorErrorRow) -> VerificationStatus? {
        row.related["status"].flatMap(VerificationStatus.init(rawValue:))
    }

    /// What each `status` (§3.1) means when no known reason says more (`FAILED` is the iOS Swift SDK's `FAIL`):
    /// an attempt that failed leaves the number unverified; with a reason, the reason decides.
    static let statuses: [String: VerificationStatus] = [
        "PENDING": .pending, "SUCCESSFUL": .approved, "FAIL": .failed, "FAILED": .failed, "DENIED": .denied,
        "ABORTED": .canceled, "ERROR": .failed,
    ]

    static func status(named status: String) -> VerificationStatus? { statuses[status.uppercased()] }

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

    /// One constant by name, with its value in each SDK generation that has it (the 2015 header had
    /// ServiceError = 3).
    static func ios(_ name: String, _ values: [Int], _ mapsTo: GatewayError.Code) -> VendorErrorRow {
        VendorErrorRow(
            vocabulary: "ios", code: name, name: name, mapsTo: mapsTo, source: "docs/vendors/sinch.md §5.1",
            related: ["values": values.map(String.init).joined(separator: ", ")])
    }

    // swift-format-ignore
    static let iosErrors: [VendorErrorRow] = [
        ios("SINVerificationErrorInvalidInput", [1], .invalidRequest),
        ios("SINVerificationErrorIncorrectCode", [2], .incorrectCode),
        ios("SINVerificationErrorCalloutFailure", [3], .deliveryFailed),
        ios("SINVerificationErrorTimeout", [4], .expired),
        ios("SINVerificationErrorCancelled", [5], .canceled),
        ios("SINVerificationErrorServiceError", [6, 3], .providerError),
    ]

    /// The row of an iOS constant, by name (with or without the `SINVerificationError` prefix).
    static func iosError(named name: String) -> VendorErrorRow? {
        table.row(vocabulary: "ios", code: name) ?? table.row(vocabulary: "ios", code: "SINVerificationError" + name)
    }
}
