import Foundation

/// What the vendor said when it accepted a start (or a resend, or a solved challenge).
public struct ProviderStartResult: Sendable, Equatable {
    /// The vendor's id for the verification.
    public var reference: String?
    /// Opaque vendor state to keep with the verification (never shown to API clients).
    public var state: ProviderState
    /// The verification's status after the start: `pending` unless the vendor settled it at once.
    public var status: VerificationStatus
    /// When the vendor says the code stops working, if it says.
    public var expiresAt: Date?
    /// The language the vendor actually used for the content (Sinch reports it back).
    public var contentLanguage: String?
    /// The channel actually used, if the vendor chose (Twilio `auto`, Vonage workflows).
    public var channel: Channel?
    /// Whether nothing was sent (a test number, a reentrant resend, a fresh challenge).
    public var sentNothing: Bool
    /// What the app must do next (`nil`: enter the code it receives).
    public var nextAction: NextAction?
    /// For a provider priced per message segment (the gateway's own codes): the segments this send was billed
    /// in. `nil` for a vendor priced per verification. The engine puts it on the send's `provider_call` event,
    /// which the console's cost per country adds up.
    public var billedSegments: Int?

    /// A result with the vendor's `reference`; the rest defaults to a pending verification with no news.
    public init(
        reference: String?,
        state: ProviderState = .empty,
        status: VerificationStatus = .pending,
        expiresAt: Date? = nil,
        contentLanguage: String? = nil,
        channel: Channel? = nil,
        sentNothing: Bool = false,
        nextAction: NextAction? = nil,
        billedSegments: Int? = nil
    ) {
        self.reference = reference
        self.state = state
        self.status = status
        self.expiresAt = expiresAt
        self.contentLanguage = contentLanguage
        self.channel = channel
        self.sentNothing = sentNothing
        self.nextAction = nextAction
        self.billedSegments = billedSegments
    }
}
