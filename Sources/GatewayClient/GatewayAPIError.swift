import Foundation

/// An error answer of the gateway: its one error shape (docs/errors.md), typed.
public struct GatewayAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status it came with.
    public var httpStatus: Int
    public var code: ErrorCode
    public var message: String
    /// Whether the same request may succeed later (false for a verification that finally failed).
    public var retryable: Bool
    public var requestID: String?
    /// Code attempts left, on a wrong code.
    public var attemptsRemaining: Int?
    /// Seconds to wait, on `rate_limited` and the like (also the `Retry-After` header).
    public var retryAfter: Int?
    /// The step the app must take now (a wrong challenge answer comes with a fresh challenge).
    public var nextAction: NextAction?
    /// What the vendor said, when a vendor caused the error: its id, its own code and HTTP status.
    public var vendor: VendorError?

    /// The code's class: how the router treats it, and what an app can do about it.
    public var errorClass: ErrorClass { code.errorClass }

    public var description: String {
        var text = "\(httpStatus) \(code.rawValue): \(message)"
        if let attemptsRemaining { text += " (attempts remaining: \(attemptsRemaining))" }
        if let vendor { text += " [\(vendor.id)\(vendor.code.map { " \($0)" } ?? "")]" }
        return text
    }
}

/// The vendor's part of an error: its own code kept as it is.
public struct VendorError: Sendable, Hashable {
    public var id: String
    public var code: String?
    public var status: Int?
}

/// A failure that is not an answer of the gateway's error shape.
public enum GatewayClientError: Error, Sendable, CustomStringConvertible {
    /// No answer: the connection failed, timed out or was cut (`underlying` describes it).
    case transport(underlying: String)
    /// An answer that is neither a documented success nor the error shape (a proxy's page, say).
    case unexpectedResponse(status: Int, body: String)
    /// A success answer the client could not read.
    case undecodable(String)

    public var description: String {
        switch self {
        case .transport(let underlying): "transport error: \(underlying)"
        case .unexpectedResponse(let status, let body): "unexpected HTTP \(status): \(body.prefix(200))"
        case .undecodable(let detail): "unreadable answer: \(detail)"
        }
    }
}

/// How the gateway classes an error code (docs/errors.md).
public enum ErrorClass: String, Sendable, Hashable, CaseIterable {
    /// The request is wrong: fix it, do not retry it as it is.
    case caller
    /// The state of this verification (a wrong code, expired, already approved…).
    case verification
    /// A vendor failed for now: a retry may succeed.
    case providerTransient = "provider_transient"
    /// A vendor's configuration or account: operators must act.
    case providerPermanent = "provider_permanent"
    /// Fraud or geo block: terminal.
    case blocked
    /// The gateway itself.
    case gateway
    /// A code this client does not know (a newer gateway).
    case unknown
}

/// `error.code`: a string, so that a code a newer gateway adds still decodes; the known ones are constants.
public struct ErrorCode: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    public static let invalidRequest: ErrorCode = "invalid_request"
    public static let invalidPhoneNumber: ErrorCode = "invalid_phone_number"
    public static let unsupportedChannel: ErrorCode = "unsupported_channel"
    public static let unsupportedDestination: ErrorCode = "unsupported_destination"
    public static let appVerificationRequired: ErrorCode = "app_verification_required"
    public static let appVerificationFailed: ErrorCode = "app_verification_failed"
    public static let unauthorized: ErrorCode = "unauthorized"
    public static let forbidden: ErrorCode = "forbidden"
    public static let rateLimited: ErrorCode = "rate_limited"
    public static let idempotencyConflict: ErrorCode = "idempotency_conflict"
    public static let idempotencyOutcomeUnknown: ErrorCode = "idempotency_outcome_unknown"
    public static let notEnrolled: ErrorCode = "not_enrolled"
    public static let accountLocked: ErrorCode = "account_locked"
    public static let invalidToken: ErrorCode = "invalid_token"
    public static let destinationBlocked: ErrorCode = "destination_blocked"
    public static let incorrectCode: ErrorCode = "incorrect_code"
    public static let maxAttemptsReached: ErrorCode = "max_attempts_reached"
    public static let expired: ErrorCode = "expired"
    public static let notFound: ErrorCode = "not_found"
    public static let alreadyApproved: ErrorCode = "already_approved"
    public static let canceled: ErrorCode = "canceled"
    public static let concurrentVerification: ErrorCode = "concurrent_verification"
    public static let maxSendsReached: ErrorCode = "max_sends_reached"
    public static let denied: ErrorCode = "denied"
    public static let invalidState: ErrorCode = "invalid_state"
    public static let providerUnavailable: ErrorCode = "provider_unavailable"
    public static let providerTimeout: ErrorCode = "provider_timeout"
    public static let providerRateLimited: ErrorCode = "provider_rate_limited"
    public static let providerAuthFailed: ErrorCode = "provider_auth_failed"
    public static let providerInsufficientFunds: ErrorCode = "provider_insufficient_funds"
    public static let providerRejected: ErrorCode = "provider_rejected"
    public static let deliveryFailed: ErrorCode = "delivery_failed"
    public static let providerError: ErrorCode = "provider_error"
    public static let noProviderAvailable: ErrorCode = "no_provider_available"
    public static let storeUnavailable: ErrorCode = "store_unavailable"
    public static let `internal`: ErrorCode = "internal"

    /// The class of every code docs/errors.md lists (a test holds this table to the server's).
    static let classes: [ErrorCode: ErrorClass] = [
        .invalidRequest: .caller, .invalidPhoneNumber: .caller, .unsupportedChannel: .caller,
        .unsupportedDestination: .caller, .appVerificationRequired: .caller, .appVerificationFailed: .caller,
        .unauthorized: .caller, .forbidden: .caller, .rateLimited: .caller, .idempotencyConflict: .caller,
        .idempotencyOutcomeUnknown: .caller, .notEnrolled: .caller, .accountLocked: .caller, .invalidToken: .caller,
        .destinationBlocked: .blocked,
        .incorrectCode: .verification, .maxAttemptsReached: .verification, .expired: .verification,
        .notFound: .verification, .alreadyApproved: .verification, .canceled: .verification,
        .concurrentVerification: .verification, .maxSendsReached: .verification, .denied: .verification,
        .invalidState: .verification,
        .providerUnavailable: .providerTransient, .providerTimeout: .providerTransient,
        .providerRateLimited: .providerTransient, .deliveryFailed: .providerTransient,
        .providerError: .providerTransient,
        .providerAuthFailed: .providerPermanent, .providerInsufficientFunds: .providerPermanent,
        .providerRejected: .providerPermanent,
        .noProviderAvailable: .gateway, .storeUnavailable: .gateway, .internal: .gateway,
    ]

    /// Every code this client knows.
    public static var known: [ErrorCode] { classes.keys.sorted { $0.rawValue < $1.rawValue } }

    public var errorClass: ErrorClass { Self.classes[self] ?? .unknown }
}
