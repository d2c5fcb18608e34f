/// A normalized request to send a verification again.
public struct ResendRequest: Sendable {
    /// Another channel to send over; `nil` keeps the channel, or takes the next fallback channel.
    public var channel: Channel?
    /// A fresh app-verification proof, for vendors that want one per send (Firebase).
    public var appVerification: AppVerificationProof?
    /// The end user's device, for vendors that want it.
    public var clientContext: ClientContext
    /// Another provider to send through: only between providers that send the gateway's own codes
    /// (``OwnCodeProvider``), which carry the same code over; `nil` keeps the verification's provider.
    public var provider: String?

    /// A resend over the same channel (or the next fallback one) with no new proof unless given.
    public init(
        channel: Channel? = nil, appVerification: AppVerificationProof? = nil,
        clientContext: ClientContext = ClientContext(), provider: String? = nil
    ) {
        self.provider = provider
        self.channel = channel
        self.appVerification = appVerification
        self.clientContext = clientContext
    }
}
