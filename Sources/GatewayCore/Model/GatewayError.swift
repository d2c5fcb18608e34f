import Foundation

/// The one error that crosses the provider boundary and reaches API clients.
///
/// Every vendor error is mapped to a ``GatewayError/Code`` by the vendor's structured fields
/// (HTTP status, numeric code, problem type), never by message text. The vendor's original code is
/// kept in ``vendor`` so operators can still see what the vendor said.
public struct GatewayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable, snake_case error code of the taxonomy (docs/design.md §5, `docs/errors.md`).
    public enum Code: String, Sendable, CaseIterable, Codable {
        // caller: the request is wrong; never retried.
        case invalidRequest = "invalid_request"
        case invalidPhoneNumber = "invalid_phone_number"
        case unsupportedChannel = "unsupported_channel"
        case unsupportedDestination = "unsupported_destination"
        case appVerificationRequired = "app_verification_required"
        case appVerificationFailed = "app_verification_failed"
        case unauthorized
        case forbidden
        case rateLimited = "rate_limited"
        case destinationBlocked = "destination_blocked"
        /// The SIM behind the number changed within the risk step's window and the route refuses such starts
        /// (docs/network-signals.md): nothing was sent.
        case recentSimSwap = "recent_sim_swap"
        case idempotencyConflict = "idempotency_conflict"
        /// An earlier request with this Idempotency-Key died after calling the vendor and before its outcome
        /// was stored: a code may have been sent, and the gateway cannot say under which verification.
        case idempotencyOutcomeUnknown = "idempotency_outcome_unknown"
        /// No device or user to verify (no enrolled push factor, an unknown IDaaS user).
        case notEnrolled = "not_enrolled"
        /// The end user's account at the vendor is locked.
        case accountLocked = "account_locked"
        /// A token the caller passed (to an action, or a device's proof) is malformed, expired or not valid.
        case invalidToken = "invalid_token"
        // verification: state of this verification; never failed over.
        case incorrectCode = "incorrect_code"
        case maxAttemptsReached = "max_attempts_reached"
        case expired
        case notFound = "not_found"
        case alreadyApproved = "already_approved"
        case canceled
        case concurrentVerification = "concurrent_verification"
        case maxSendsReached = "max_sends_reached"
        /// The user or the vendor refused: a push denied, Sinch `DENIED`, IDaaS `ACCESS_DENIED`.
        case denied
        /// The call is not allowed in the verification's current state (a check while a challenge is
        /// unsolved, a check of a verification that completes without a code, Vonage v1 status 19).
        case invalidState = "invalid_state"
        // provider
        case providerUnavailable = "provider_unavailable"
        case providerTimeout = "provider_timeout"
        case providerRateLimited = "provider_rate_limited"
        case providerAuthFailed = "provider_auth_failed"
        case providerInsufficientFunds = "provider_insufficient_funds"
        case providerRejected = "provider_rejected"
        case deliveryFailed = "delivery_failed"
        case providerError = "provider_error"
        // gateway
        case noProviderAvailable = "no_provider_available"
        /// The store (a shared PostgreSQL) cannot be reached or did not answer in time; retry shortly.
        case storeUnavailable = "store_unavailable"
        case `internal`

        /// The routing class of the code: what the router may do after seeing it.
        public var errorClass: ErrorClass {
            switch self {
            case .invalidRequest, .invalidPhoneNumber, .unsupportedChannel, .unsupportedDestination,
                .appVerificationRequired, .appVerificationFailed, .unauthorized, .forbidden, .rateLimited,
                .idempotencyConflict, .idempotencyOutcomeUnknown, .notEnrolled, .accountLocked, .invalidToken:
                return .caller
            case .destinationBlocked, .recentSimSwap:
                return .blocked
            case .incorrectCode, .maxAttemptsReached, .expired, .notFound, .alreadyApproved, .canceled,
                .concurrentVerification, .maxSendsReached, .denied, .invalidState:
                return .verification
            case .providerUnavailable, .providerTimeout, .providerRateLimited, .deliveryFailed, .providerError:
                return .providerTransient
            case .providerAuthFailed, .providerInsufficientFunds, .providerRejected:
                return .providerPermanent
            case .noProviderAvailable, .storeUnavailable, .internal:
                return .gateway
            }
        }

        /// The HTTP status the API answers with.
        public var httpStatus: Int {
            switch self {
            case .invalidRequest, .invalidPhoneNumber, .unsupportedChannel, .unsupportedDestination,
                .appVerificationRequired:
                return 400
            case .appVerificationFailed: return 403
            case .unauthorized: return 401
            case .forbidden, .destinationBlocked, .recentSimSwap, .denied, .accountLocked: return 403
            case .notEnrolled, .invalidToken: return 422
            case .invalidState: return 409
            case .rateLimited, .maxSendsReached, .maxAttemptsReached: return 429
            case .idempotencyConflict, .idempotencyOutcomeUnknown, .alreadyApproved, .canceled, .concurrentVerification:
                return 409
            case .incorrectCode: return 422
            case .expired: return 410
            case .notFound: return 404
            case .providerUnavailable, .providerRateLimited, .providerAuthFailed, .providerInsufficientFunds,
                .providerRejected, .deliveryFailed, .providerError:
                return 502
            case .providerTimeout: return 504
            case .noProviderAvailable, .storeUnavailable: return 503
            case .internal: return 500
            }
        }

        /// Whether the same request may succeed if the client simply tries again later.
        public var isRetryable: Bool {
            switch self {
            case .rateLimited, .providerUnavailable, .providerTimeout, .providerRateLimited, .deliveryFailed,
                .providerError, .noProviderAvailable, .storeUnavailable, .concurrentVerification, .idempotencyConflict:
                return true
            default:
                return false
            }
        }
    }

    /// What the router may do with an error (docs/design.md §5, §6).
    public enum ErrorClass: String, Sendable, Codable, CaseIterable {
        /// The request is wrong; never retried, never failed over.
        case caller
        /// The state of this verification; never failed over.
        case verification
        /// Safe to fail over *before* the vendor accepted the send.
        case providerTransient = "provider_transient"
        /// Configuration or account problem at the vendor: fail over and alert.
        case providerPermanent = "provider_permanent"
        /// Fraud or geo block: terminal, never failed over.
        case blocked
        /// The gateway itself.
        case gateway
    }

    /// The vendor's own view of the failure, kept beside the normalized code.
    public struct VendorDetail: Sendable, Equatable, Codable {
        /// The provider instance id (for example `twilio`).
        public var providerID: String
        /// The vendor's structured code (`60202`, `INVALID_CODE`, `IDAAS.SDK.CAPTCHA.0007`), if any.
        public var code: String?
        /// The HTTP status the vendor answered with, if any.
        public var httpStatus: Int?

        /// A vendor detail for `providerID`, with the vendor's code and HTTP status where it gave them.
        public init(providerID: String, code: String?, httpStatus: Int?) {
            self.providerID = providerID
            self.code = code
            self.httpStatus = httpStatus
        }
    }

    /// What went wrong, in the taxonomy clients switch on.
    public var code: Code
    /// A human-readable message. It never contains a phone number, a code or vendor message text.
    public var message: String
    /// What the vendor answered, when the error came from a vendor call.
    public var vendor: VendorDetail?
    /// Checks left on the verification, for an error that spends or refuses one (`incorrect_code`).
    public var attemptsRemaining: Int?
    /// Seconds after which a retry may succeed, when the vendor or the gateway knows.
    public var retryAfter: Int?
    /// Whether the vendor may already have accepted the send (an ambiguous timeout). The router does
    /// not fail over such an error unless the route allows it.
    public var sendMayHaveHappened: Bool
    /// Overrides the code's own retryability: a verification that finally failed is not retryable, even
    /// though `delivery_failed` usually is.
    public var retryable: Bool?
    /// What the app must do now, when the error comes with a new step (a wrong slider answer comes with a
    /// fresh challenge).
    public var nextAction: NextAction?

    /// An error with `code` and `message`; every other field absent or `false` unless given.
    public init(
        _ code: Code,
        _ message: String,
        vendor: VendorDetail? = nil,
        attemptsRemaining: Int? = nil,
        retryAfter: Int? = nil,
        sendMayHaveHappened: Bool = false,
        retryable: Bool? = nil,
        nextAction: NextAction? = nil
    ) {
        self.retryable = retryable
        self.nextAction = nextAction
        self.code = code
        self.message = message
        self.vendor = vendor
        self.attemptsRemaining = attemptsRemaining
        self.retryAfter = retryAfter
        self.sendMayHaveHappened = sendMayHaveHappened
    }

    /// The routing class of ``code``.
    public var errorClass: ErrorClass { code.errorClass }
    /// The HTTP status the API answers with for ``code``.
    public var httpStatus: Int { code.httpStatus }
    /// Whether a retry of the same request may succeed: ``retryable`` when set, otherwise the code's own answer.
    public var isRetryable: Bool { retryable ?? code.isRetryable }

    /// For logs: the code, the message and the vendor detail, never a phone number.
    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let vendor {
            text += " [\(vendor.providerID) \(vendor.code ?? "-") http=\(vendor.httpStatus.map(String.init) ?? "-")]"
        }
        return text
    }
}

extension GatewayError {
    /// An `invalid_request` error with `message`.
    public static func invalidRequest(_ message: String) -> GatewayError { GatewayError(.invalidRequest, message) }
    /// A `not_found` error; by default the message says no verification has the id.
    public static func notFound(_ message: String = "No verification with this id.") -> GatewayError {
        GatewayError(.notFound, message)
    }
    /// An `internal` error; by default its message says only that the gateway failed.
    public static func `internal`(_ message: String = "The gateway failed to handle the request.") -> GatewayError {
        GatewayError(.internal, message)
    }
}

extension GatewayError {
    /// A vendor call that got no HTTP answer, named for the vendor (`"Sinch"`). Only a refused connection
    /// proves the vendor never saw the request; after a timeout or a reset the send may have happened, as
    /// `sendMayHaveHappened` says for the operation.
    public static func transport(
        _ error: TransportError, vendor name: String, providerID: String, sendMayHaveHappened: Bool
    ) -> GatewayError {
        let vendor = VendorDetail(providerID: providerID, code: nil, httpStatus: nil)
        switch error {
        case .timeout:
            return GatewayError(
                .providerTimeout, "\(name) did not answer within the deadline.", vendor: vendor,
                sendMayHaveHappened: sendMayHaveHappened)
        case .connectFailed:
            return GatewayError(.providerUnavailable, "\(name) could not be reached.", vendor: vendor)
        case .connectionReset:
            return GatewayError(
                .providerUnavailable, "The connection to \(name) broke before it answered.", vendor: vendor,
                sendMayHaveHappened: sendMayHaveHappened)
        }
    }
}

extension GatewayError.Code {
    /// The code for a vendor error answer whose own code no mapping row knows: by HTTP status alone
    /// (401/403 → `provider_auth_failed`, 404 → `not_found`, 429 → `provider_rate_limited`, 5xx →
    /// `provider_unavailable`, other 4xx → `provider_rejected`, anything else → `provider_error`).
    /// Plugins whose vendor gives a status its own meaning (Vonage's 402) decide that first.
    public static func forVendorStatus(_ httpStatus: Int) -> GatewayError.Code {
        switch httpStatus {
        case 401, 403: return .providerAuthFailed
        case 404: return .notFound
        case 429: return .providerRateLimited
        case 500...599: return .providerUnavailable
        case 400...499: return .providerRejected
        default: return .providerError
        }
    }
}
