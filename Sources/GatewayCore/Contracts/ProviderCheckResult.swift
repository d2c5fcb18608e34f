import Foundation

/// The outcome of a check at the vendor.
public struct ProviderCheckResult: Sendable, Equatable {
    /// `approved`, `pending` (wrong code), or a final state (`denied`, `expired`…).
    public var status: VerificationStatus
    /// Vendor tokens issued on success (Firebase `idToken`, IDaaS `session_token`, its `expire` number).
    public var tokens: [String: JSONValue]
    /// Replacement vendor state, when the vendor rotates it.
    public var state: ProviderState?
    /// The vendor's own count of checks left, if it reports one.
    public var attemptsRemaining: Int?
    /// A step the app must take before the verification can finish (IDaaS `MFA_AUTH`).
    public var nextAction: NextAction?

    /// A result with `status`; the rest defaults to no tokens, no new state and no next action.
    public init(
        status: VerificationStatus, tokens: [String: JSONValue] = [:], state: ProviderState? = nil,
        attemptsRemaining: Int? = nil, nextAction: NextAction? = nil
    ) {
        self.status = status
        self.tokens = tokens
        self.state = state
        self.attemptsRemaining = attemptsRemaining
        self.nextAction = nextAction
    }
}
