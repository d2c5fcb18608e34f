/// How one messaging provider issues the gateway's own codes: the key, the code's shape and life, the messages,
/// and the senders.
public struct OwnCodeSettings: Sendable {
    /// The secret the codes are derived and checked under.
    public var key: any OwnCodeKey
    /// The code's length and alphabet (a start's `code_length` overrides the length within 4 to 10).
    public var format: OwnCodeFormat
    /// How long a code stays good; the message says it in whole minutes.
    public var validity: Duration
    /// Whether a resend issues a new code instead of sending the same one again.
    public var newCodeOnResend: Bool
    /// The templates, app name and autofill.
    public var catalog: MessageCatalog
    /// Who the messages come from, by country.
    public var senders: SenderTable

    /// Settings from their parts: by default six digits good for 10 minutes, the same code on a resend.
    public init(
        key: any OwnCodeKey, catalog: MessageCatalog, senders: SenderTable, format: OwnCodeFormat = .standard,
        validity: Duration = .seconds(600), newCodeOnResend: Bool = false
    ) {
        self.key = key
        self.format = format
        self.validity = validity
        self.newCodeOnResend = newCodeOnResend
        self.catalog = catalog
        self.senders = senders
    }

    /// The validity in whole minutes, at least 1, as the message states it.
    public var validityMinutes: Int { max(1, Int(validity.components.seconds / 60)) }
}
