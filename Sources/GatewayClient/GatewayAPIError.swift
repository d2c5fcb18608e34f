import Foundation

/// An error answer of the gateway: its one error shape (docs/errors.md), typed.
public struct GatewayAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status it came with.
    public var httpStatus: Int
    /// The error code; one a newer gateway added still decodes (its ``ErrorCode/errorClass`` is `unknown`).
    public var code: ErrorCode
    /// A message for people; it never names the phone number, the code or a vendor's own text.
    public var message: String
    /// Whether the same request may succeed later (false for a verification that finally failed).
    public var retryable: Bool
    /// The request's id (also its `X-Request-ID` header), to quote to the gateway's operators.
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

    /// The status, code and message, with the attempts left and the vendor when known.
    public var description: String {
        var text = "\(httpStatus) \(code.rawValue): \(message)"
        if let attemptsRemaining { text += " (attempts remaining: \(attemptsRemaining))" }
        if let vendor { text += " [\(vendor.id)\(vendor.code.map { " \($0)" } ?? "")]" }
        return text
    }
}

/// The vendor's part of an error: its own code kept as it is.
public struct VendorError: Sendable, Hashable {
    /// The provider instance the vendor is configured as (`twilio`).
    public var id: String
    /// The vendor's own error code, as it sent it.
    public var code: String?
    /// The HTTP status the vendor answered with.
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

    /// What failed, with at most 200 characters of an unexpected body.
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
    /// The code as the gateway sends it (`incorrect_code`).
    public var rawValue: String
    /// The code `rawValue`, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The code `value`, so a literal compares with a code (`error.code == "incorrect_code"`).
    public init(stringLiteral value: String) { self.rawValue = value }
    /// The code itself, ``rawValue``.
    public var description: String { rawValue }

    /// The request is malformed or a parameter is invalid.
    public static let invalidRequest: ErrorCode = "invalid_request"
    /// The destination is not a valid phone number.
    public static let invalidPhoneNumber: ErrorCode = "invalid_phone_number"
    /// No provider offers this channel for this verification.
    public static let unsupportedChannel: ErrorCode = "unsupported_channel"
    /// The destination cannot receive this channel (a landline for SMS), or no provider serves its country.
    public static let unsupportedDestination: ErrorCode = "unsupported_destination"
    /// The start needs an app-verification proof, or the app must finish a verification step first.
    public static let appVerificationRequired: ErrorCode = "app_verification_required"
    /// The app's proof was rejected, or a challenge's answer was wrong (a fresh challenge comes with it).
    public static let appVerificationFailed: ErrorCode = "app_verification_failed"
    /// The API key or client secret is missing, wrong or no longer valid.
    public static let unauthorized: ErrorCode = "unauthorized"
    /// The credential lacks the scope for this operation, or a client secret was used outside its verification.
    public static let forbidden: ErrorCode = "forbidden"
    /// The gateway's own rate limit was hit; wait ``GatewayAPIError/retryAfter`` seconds.
    public static let rateLimited: ErrorCode = "rate_limited"
    /// The `Idempotency-Key` was used with a different request, or that request is still running.
    public static let idempotencyConflict: ErrorCode = "idempotency_conflict"
    /// An earlier request with this `Idempotency-Key` may have sent a code the gateway cannot name; ask the user before
    /// starting again.
    public static let idempotencyOutcomeUnknown: ErrorCode = "idempotency_outcome_unknown"
    /// No device or user to verify: no enrolled push factor, or a user the vendor does not know.
    public static let notEnrolled: ErrorCode = "not_enrolled"
    /// The end user's account at the vendor is locked.
    public static let accountLocked: ErrorCode = "account_locked"
    /// A token the caller passed is malformed, expired or no longer valid.
    public static let invalidToken: ErrorCode = "invalid_token"
    /// A fraud rule, opt-out or geo permission blocks this destination; terminal.
    public static let destinationBlocked: ErrorCode = "destination_blocked"
    /// The number's SIM changed recently and the gateway's risk step refuses such starts; nothing was sent.
    public static let recentSimSwap: ErrorCode = "recent_sim_swap"
    /// The code is wrong; attempts remain.
    public static let incorrectCode: ErrorCode = "incorrect_code"
    /// Too many wrong codes or challenge answers; start a new verification.
    public static let maxAttemptsReached: ErrorCode = "max_attempts_reached"
    /// The verification has expired; start a new one.
    public static let expired: ErrorCode = "expired"
    /// No such verification, at the gateway or at the vendor.
    public static let notFound: ErrorCode = "not_found"
    /// The verification is already approved.
    public static let alreadyApproved: ErrorCode = "already_approved"
    /// The verification was canceled.
    public static let canceled: ErrorCode = "canceled"
    /// Too many verifications are running for this destination at once; retry shortly.
    public static let concurrentVerification: ErrorCode = "concurrent_verification"
    /// Too many codes were sent; wait for the current one to expire.
    public static let maxSendsReached: ErrorCode = "max_sends_reached"
    /// The user or the vendor refused the verification.
    public static let denied: ErrorCode = "denied"
    /// The call is not allowed in the verification's current state (a check while a challenge is unsolved).
    public static let invalidState: ErrorCode = "invalid_state"
    /// The vendor is down or unreachable.
    public static let providerUnavailable: ErrorCode = "provider_unavailable"
    /// The vendor did not answer in time; the code may have been sent.
    public static let providerTimeout: ErrorCode = "provider_timeout"
    /// The vendor is rate limiting the gateway's account.
    public static let providerRateLimited: ErrorCode = "provider_rate_limited"
    /// The vendor rejected the gateway's credentials; operators must act.
    public static let providerAuthFailed: ErrorCode = "provider_auth_failed"
    /// The vendor account is out of credit.
    public static let providerInsufficientFunds: ErrorCode = "provider_insufficient_funds"
    /// The vendor refused because of its account or service configuration.
    public static let providerRejected: ErrorCode = "provider_rejected"
    /// The vendor accepted the send but could not deliver it.
    public static let deliveryFailed: ErrorCode = "delivery_failed"
    /// The vendor answered in an unexpected way.
    public static let providerError: ErrorCode = "provider_error"
    /// No configured provider can serve the request right now.
    public static let noProviderAvailable: ErrorCode = "no_provider_available"
    /// The gateway's shared store cannot be reached; retry shortly.
    public static let storeUnavailable: ErrorCode = "store_unavailable"
    /// The gateway failed to handle the request.
    public static let `internal`: ErrorCode = "internal"

    /// The class of every code docs/errors.md lists (a test holds this table to the server's).
    static let classes: [ErrorCode: ErrorClass] = [
        .invalidRequest: .caller, .invalidPhoneNumber: .caller, .unsupportedChannel: .caller,
        .unsupportedDestination: .caller, .appVerificationRequired: .caller, .appVerificationFailed: .caller,
        .unauthorized: .caller, .forbidden: .caller, .rateLimited: .caller, .idempotencyConflict: .caller,
        .idempotencyOutcomeUnknown: .caller, .notEnrolled: .caller, .accountLocked: .caller, .invalidToken: .caller,
        .destinationBlocked: .blocked,
        .recentSimSwap: .blocked,
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

    /// The code's class; `unknown` for a code this client does not know.
    public var errorClass: ErrorClass { Self.classes[self] ?? .unknown }
}
