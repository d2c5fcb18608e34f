/// The state of a verification. `pending` is the only state that can change; the others are final.
public enum VerificationStatus: String, Sendable, Codable, CaseIterable, Hashable {
    case pending
    case approved
    /// The user (or push device) refused.
    case denied
    case canceled
    case expired
    /// Too many wrong codes.
    case maxAttemptsReached = "max_attempts_reached"
    /// Delivery failed for good.
    case failed
    /// A vendor's fraud or geo block ended it (during a check, or by callback).
    case blocked

    /// Whether the status can no longer change: every status but `pending`.
    public var isFinal: Bool { self != .pending }

    /// Whether the status machine allows moving from `self` to `next`.
    public func canTransition(to next: VerificationStatus) -> Bool {
        self == next ? true : self == .pending
    }

    /// The error a request on a verification in this final state receives.
    public var finalStateError: GatewayError? {
        switch self {
        case .pending: return nil
        case .approved: return GatewayError(.alreadyApproved, "This verification is already approved.")
        case .denied: return GatewayError(.denied, "This verification was denied.")
        case .canceled: return GatewayError(.canceled, "This verification was canceled.")
        case .expired: return GatewayError(.expired, "This verification has expired; start a new one.")
        case .maxAttemptsReached:
            return GatewayError(
                .maxAttemptsReached, "Too many wrong codes for this verification; start a new one.",
                attemptsRemaining: 0)
        case .failed:
            return GatewayError(
                .deliveryFailed, "Delivery of this verification failed; start a new one.", retryable: false)
        case .blocked:
            return GatewayError(.destinationBlocked, "This verification was blocked by a fraud or geo rule.")
        }
    }
}
