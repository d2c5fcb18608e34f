import Foundation

/// A plain messaging API (Twilio Programmable Messaging, the Vonage SMS API): sends one rendered text message.
///
/// A messaging plugin implements this and nothing of verification; ``OwnCodeProvider`` wraps it into a
/// ``VerificationProvider`` that issues and checks the gateway's own codes. It throws only ``GatewayError``,
/// mapped through the plugin's error table.
public protocol MessageSender: Sendable {
    /// Sends `message` and answers what the vendor said when it took it.
    func send(_ message: OutboundMessage) async throws(GatewayError) -> SentMessage
}

/// One text message for a sender to send.
public struct OutboundMessage: Sendable, Hashable {
    /// The recipient.
    public var to: PhoneNumber
    /// The sender the table chose for the recipient's country.
    public var from: SenderAddress
    /// The text, rendered.
    public var text: String
    /// Its encoding (the Vonage SMS API must be told `type=unicode` for UCS-2).
    public var encoding: SMSEncoding
    /// The segments the gateway counted.
    public var segments: Int
    /// The gateway's verification id, for the vendor's client reference or the receipt URL.
    public var reference: String
    /// How long the vendor may keep trying: the code's validity, after which the message is of no use.
    public var validity: Duration

    /// A message from its parts.
    public init(
        to: PhoneNumber, from: SenderAddress, text: String, encoding: SMSEncoding, segments: Int,
        reference: String, validity: Duration
    ) {
        self.to = to
        self.from = from
        self.text = text
        self.encoding = encoding
        self.segments = segments
        self.reference = reference
        self.validity = validity
    }
}

/// What a messaging vendor answered when it took a message.
public struct SentMessage: Sendable, Hashable {
    /// The vendor's message id (Twilio `SM…`, Vonage `message-id`).
    public var messageID: String
    /// The delivery status the answer reports (`queued` at first for most vendors).
    public var status: DeliveryStatus
    /// The segments the vendor says it sends, when it says.
    public var segments: Int?

    /// An answer with the vendor's message id.
    public init(messageID: String, status: DeliveryStatus = .queued, segments: Int? = nil) {
        self.messageID = messageID
        self.status = status
        self.segments = segments
    }
}

/// Where a sent message stands, normalized across messaging vendors.
public enum DeliveryStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Taken by the vendor, not yet handed on.
    case queued
    /// Handed to the carrier; for some destinations the last news there is.
    case sent
    /// The carrier's receipt says delivered.
    case delivered
    /// The carrier's receipt says not delivered.
    case undelivered
    /// The vendor could not send it.
    case failed

    /// Whether no later receipt changes it.
    public var isFinal: Bool { self == .delivered || self == .undelivered || self == .failed }
}

extension GatewayPlugin {
    /// A messaging plugin: each provider is an ``OwnCodeProvider`` over the `sender` made from its context, with
    /// the context's ``ProviderContext/ownCodes``, which the configuration must give.
    public init(
        id: String, displayName: String, settings: [SettingSpec],
        sender: @escaping @Sendable (ProviderContext) throws(ConfigurationError) -> any MessageSender,
        makeEmulator: @escaping @Sendable (EmulatorContext) -> any VendorEmulator,
        sandboxSettings: @escaping @Sendable (_ baseURL: URL) -> [String: String]
    ) {
        self.init(
            id: id, displayName: displayName, settings: settings,
            makeProvider: { (context) throws(ConfigurationError) -> any VerificationProvider in
                guard let ownCodes = context.ownCodes else {
                    // The sender's own problems too, so that one reading reports everything.
                    var problems: [String] = []
                    do throws(ConfigurationError) { _ = try sender(context) } catch { problems = error.problems }
                    problems.append(
                        "provider \(context.providerID): plugin \(id) sends the gateway's own codes; it needs "
                            + "`own_codes: {secret_env: VARIABLE}`, `messages: {app: NAME}` and the provider's "
                            + "`senders`")
                    throw ConfigurationError(problems: problems)
                }
                return OwnCodeProvider(
                    id: context.providerID, sender: try sender(context), settings: ownCodes, clock: context.clock)
            },
            makeEmulator: makeEmulator, sandboxSettings: sandboxSettings)
        self.sendsOwnCodes = true
    }
}
