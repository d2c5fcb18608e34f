import Foundation

/// The stored view of a verification a provider is asked about, with the current request's client context.
public struct ProviderVerification: Sendable {
    /// The gateway's id (`vf_…`), which plugins send as the vendor's reference where it takes one.
    public var id: String
    /// The stored status.
    public var status: VerificationStatus
    /// Where the verification was sent.
    public var destination: Destination
    /// The channel of the latest send.
    public var channel: Channel
    /// The fallback channels not used yet.
    public var fallbackChannels: [Channel]
    /// The vendor's id for the verification (``VerificationRecord/providerReference``), if it gave one.
    public var reference: String?
    /// The vendor state the plugin stored with the verification.
    public var state: ProviderState
    /// The preferred content languages of the start, most preferred first.
    public var locales: [String]
    /// The end user's device for the request being served (empty for callbacks).
    public var clientContext: ClientContext

    /// A view from its parts; tests and callbacks build one without a stored record.
    public init(
        id: String = "", status: VerificationStatus = .pending, destination: Destination, channel: Channel,
        fallbackChannels: [Channel] = [], reference: String?, state: ProviderState, locales: [String] = [],
        clientContext: ClientContext = ClientContext()
    ) {
        self.id = id
        self.status = status
        self.destination = destination
        self.channel = channel
        self.fallbackChannels = fallbackChannels
        self.reference = reference
        self.state = state
        self.locales = locales
        self.clientContext = clientContext
    }

    /// The view of a stored record, with the context of the request being served.
    public init(_ record: VerificationRecord, clientContext: ClientContext = ClientContext()) {
        self.init(
            id: record.id, status: record.status, destination: record.destination, channel: record.channel,
            fallbackChannels: record.fallbackChannels, reference: record.providerReference,
            state: record.providerState, locales: record.locales, clientContext: clientContext)
    }
}
