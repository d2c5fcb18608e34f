import Foundation

/// A challenge the app must solve before anything is sent (IDaaS's slider captcha).
public struct ProviderChallenge: Sendable, Equatable {
    /// What the app is shown to solve.
    public var challenge: NextAction.Challenge
    /// State to keep until the answer arrives (the captcha's token).
    public var state: ProviderState
    /// The vendor's id, when it gives one before anything is sent.
    public var reference: String?

    /// A challenge with the state to keep until its answer arrives.
    public init(challenge: NextAction.Challenge, state: ProviderState = .empty, reference: String? = nil) {
        self.challenge = challenge
        self.state = state
        self.reference = reference
    }
}
