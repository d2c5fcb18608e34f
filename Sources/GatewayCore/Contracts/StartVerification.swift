/// A normalized request to start a verification, the same whatever vendor serves it.
public struct StartVerification: Sendable {
    /// Where to send the code.
    public var destination: Destination
    /// The first channel to send over.
    public var channel: Channel
    /// Channels to use after ``channel``, in order. A provider with native workflows
    /// (``ProviderCapabilities/nativeWorkflows``) gets them in the start; for others the gateway moves to
    /// the next one on each resend that names no channel.
    public var fallbackChannels: [Channel]
    /// Preferred content languages, most preferred first (IETF tags such as `es-ES`).
    public var locales: [String]
    /// The proof that the request comes from a real app, for vendors that need one.
    public var appVerification: AppVerificationProof?
    /// The multi-factor step this start belongs to (a second factor of a sign-in, or an enrollment), for
    /// vendors that run one (Firebase); routing considers only providers that declare the step.
    public var multiFactor: MultiFactor?
    /// Code length the caller asks for, where the vendor lets a request choose it.
    public var codeLength: Int?
    /// The code to send, chosen by the caller (the Twilio front door's `CustomCode`), already checked with
    /// ``OwnCodeFormat/custom(_:)``. Only providers that take one (``ProviderCapabilities/takesCustomCode``)
    /// are candidates for such a start.
    public var customCode: String?
    /// The caller's own reference, echoed back and stored.
    public var clientReference: String?
    /// Free-form metadata stored with the verification, never sent to a vendor.
    public var metadata: [String: String]
    /// A provider id that bypasses routing (tests and support).
    public var forcedProvider: String?
    /// A route the front door the request came through chose for it (a Twilio-compatible service's routing
    /// profile), used instead of the routing table's rules; a forced provider and a test number still come first.
    public var route: Route?
    /// The end user's device, for vendors that want it.
    public var clientContext: ClientContext
    /// Push factor and prompt, for channels that need them.
    public var channelOptions: ChannelOptions
    /// The gateway's id for this verification, set by the engine before a provider sees the request, so a
    /// plugin can send it as the vendor's reference and find it again in a callback.
    public var verificationID: String?

    /// A request to send over `channel` to `destination`; every other field is empty or absent unless given.
    public init(
        destination: Destination,
        channel: Channel,
        locales: [String] = [],
        appVerification: AppVerificationProof? = nil,
        codeLength: Int? = nil,
        clientReference: String? = nil,
        metadata: [String: String] = [:],
        forcedProvider: String? = nil,
        fallbackChannels: [Channel] = [],
        clientContext: ClientContext = ClientContext(),
        channelOptions: ChannelOptions = ChannelOptions(),
        verificationID: String? = nil,
        multiFactor: MultiFactor? = nil,
        route: Route? = nil
    ) {
        self.route = route
        self.multiFactor = multiFactor
        self.destination = destination
        self.channel = channel
        self.fallbackChannels = fallbackChannels
        self.clientContext = clientContext
        self.channelOptions = channelOptions
        self.verificationID = verificationID
        self.locales = locales
        self.appVerification = appVerification
        self.codeLength = codeLength
        self.clientReference = clientReference
        self.metadata = metadata
        self.forcedProvider = forcedProvider
    }
}
