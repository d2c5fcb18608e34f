import Foundation

/// What changed at the vendor, as a status refresh or a callback reports it. Every field is optional:
/// `nil` means "no news". The engine never moves a final verification (an approval stays approved).
public struct VerificationChange: Sendable, Equatable {
    /// What to do with the verification's ``VerificationRecord/nextAction``.
    public enum NextActionChange: Sendable, Equatable {
        case keep
        case clear
        case set(NextAction)
    }

    /// The new status; a final status also clears the next action.
    public var status: VerificationStatus?
    /// The channel the vendor moved to (Vonage's workflow from SMS to voice).
    public var channel: Channel?
    /// Whether the next action stays, is cleared or is replaced.
    public var nextAction: NextActionChange
    /// Vendor tokens issued with an approval; returned once with the gateway's own token.
    public var tokens: [String: JSONValue]
    /// Replacement vendor state.
    public var state: ProviderState?
    /// The language the vendor used for the content.
    public var contentLanguage: String?
    /// The new expiry.
    public var expiresAt: Date?
    /// The vendor's reason for the status, as a bounded code (`DENIED`, `Fraud`), for the timeline.
    public var reason: String?

    /// A change that says nothing unless told: every field `nil` or empty, the next action kept.
    public init(
        status: VerificationStatus? = nil, channel: Channel? = nil, nextAction: NextActionChange = .keep,
        tokens: [String: JSONValue] = [:], state: ProviderState? = nil, contentLanguage: String? = nil,
        expiresAt: Date? = nil, reason: String? = nil
    ) {
        self.status = status
        self.channel = channel
        self.nextAction = nextAction
        self.tokens = tokens
        self.state = state
        self.contentLanguage = contentLanguage
        self.expiresAt = expiresAt
        self.reason = reason
    }
}
