/// A plugin's one table from its vendor's errors to the gateway taxonomy, with the lookup every plugin used
/// to write again and the message every mapped error carries.
///
/// The rows are plain values, so a plugin's tests run one parameterized test over them, its docs test finds
/// each row's line in `docs/errors.md`, and the provider conformance suite reaches each through the emulator.
public struct VendorErrorTable: Sendable {
    /// The vendor's name as messages say it (`Vonage`).
    public var vendor: String
    /// The rows, in order; ``row(vocabulary:code:httpStatus:operation:)`` takes the first that fits at each step.
    public var rows: [VendorErrorRow]
    /// Message openings that differ from ``summary(of:)``'s defaults, by code.
    public var summaries: [GatewayError.Code: String]

    /// A table of `rows` for `vendor`, with the default message openings unless `summaries` replaces some.
    public init(vendor: String, rows: [VendorErrorRow], summaries: [GatewayError.Code: String] = [:]) {
        self.vendor = vendor
        self.rows = rows
        self.summaries = summaries
    }

    /// The rows of one vocabulary, in table order.
    public func rows(in vocabulary: String) -> [VendorErrorRow] {
        rows.filter { $0.vocabulary == vocabulary }
    }

    /// The row for a vendor answer, the most specific first: the code with the status on this operation, the
    /// code with the status on any operation, then (when the code is unknown or absent) a row for the status
    /// on this operation. `nil` when no row covers the answer: the caller falls back on the status.
    public func row(
        vocabulary: String = "", code: String?, httpStatus: Int? = nil, operation: String? = nil
    ) -> VendorErrorRow? {
        let candidates = rows.lazy.filter { $0.vocabulary == vocabulary }
        func statusFits(_ row: VendorErrorRow) -> Bool { row.httpStatus == nil || row.httpStatus == httpStatus }
        if let code {
            if let row = candidates.first(where: {
                $0.matches(code: code) && statusFits($0) && $0.operation != nil && $0.operation == operation
            }) {
                return row
            }
            if let row = candidates.first(where: { $0.matches(code: code) && statusFits($0) && $0.operation == nil }) {
                return row
            }
        }
        guard let httpStatus, let operation else { return nil }
        return candidates.first { $0.httpStatus == httpStatus && $0.operation == operation }
    }

    /// The error for a vendor answer mapped to `code`: the situation in the gateway's words, then `detail` (the
    /// vendor's code and status, never its text) in brackets; the vendor's code and status kept beside it. A
    /// `max_attempts_reached` says no attempt remains.
    public func error(
        _ code: GatewayError.Code, detail: String, vendorCode: String?, httpStatus: Int?, providerID: String,
        retryAfter: Int? = nil, retryable: Bool? = nil
    ) -> GatewayError {
        GatewayError(
            code, "\(summary(of: code)) (\(detail)).",
            vendor: GatewayError.VendorDetail(providerID: providerID, code: vendorCode, httpStatus: httpStatus),
            attemptsRemaining: code == .maxAttemptsReached ? 0 : nil, retryAfter: retryAfter, retryable: retryable)
    }

    /// A message that names the situation, never the vendor's own text.
    public func summary(of code: GatewayError.Code) -> String {
        if let custom = summaries[code] { return custom }
        switch code {
        case .invalidRequest: return "\(vendor) rejected the request as invalid"
        case .invalidPhoneNumber: return "\(vendor) rejected the phone number"
        case .unsupportedDestination: return "\(vendor) cannot verify this destination this way"
        case .destinationBlocked: return "\(vendor) blocked verification of this destination"
        case .incorrectCode: return "The code is not correct"
        case .maxAttemptsReached: return "Too many wrong codes; \(vendor) ended the verification"
        case .expired: return "The verification has expired; start a new one"
        case .notFound: return "\(vendor) does not know this verification; it may have finished"
        case .concurrentVerification: return "A verification to this number is already in progress at \(vendor)"
        case .invalidState: return "\(vendor) cannot do this in the verification's current state"
        case .unsupportedChannel: return "\(vendor) cannot use this channel for this verification"
        case .appVerificationRequired: return "\(vendor) needs the app to finish its verification first"
        case .appVerificationFailed: return "\(vendor) did not accept the app's proof"
        case .alreadyApproved: return "The verification is already approved"
        case .canceled: return "The verification was already answered or canceled"
        case .maxSendsReached: return "Too many codes were sent to this destination; wait for the current one to expire"
        case .deliveryFailed: return "\(vendor) could not deliver the code"
        case .rateLimited, .providerRateLimited: return "\(vendor) is rate limiting the gateway"
        case .providerUnavailable: return "\(vendor) is unavailable"
        case .providerTimeout: return "\(vendor) did not answer in time"
        case .providerAuthFailed: return "\(vendor) did not accept the gateway's credentials or account"
        case .providerInsufficientFunds: return "The \(vendor) account has run out of credit"
        case .providerRejected: return "\(vendor) refused the request because of its account or configuration"
        case .providerError: return "\(vendor) answered in an unexpected way"
        default: return "\(vendor) returned an error"
        }
    }
}
