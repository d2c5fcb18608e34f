import Foundation

/// A messaging vendor's news of one sent message, normalized: what its status callback (Twilio) or delivery
/// receipt (Vonage) said, read by the plugin after it checked the vendor's signature.
public struct DeliveryReceipt: Sendable, Hashable {
    /// The vendor's message id, as ``SentMessage/messageID`` gave it.
    public var messageID: String
    /// The gateway's verification id, when the receipt carries it (in the signed callback URL, or echoed as the
    /// vendor's client reference); without it the engine looks the message id up.
    public var verificationID: String?
    /// Where the message stands.
    public var status: DeliveryStatus
    /// The vendor's own word for it (`undelivered`, `expired`, `rejected`), bounded, for the timeline.
    public var vendorStatus: String
    /// The vendor's error code, when the receipt has one (Twilio `ErrorCode` 30003, Vonage `err-code` 12).
    public var errorCode: String?
    /// That code in the gateway's taxonomy, through the plugin's error table.
    public var error: GatewayError.Code?

    /// A receipt from its parts.
    public init(
        messageID: String, verificationID: String? = nil, status: DeliveryStatus, vendorStatus: String,
        errorCode: String? = nil, error: GatewayError.Code? = nil
    ) {
        self.messageID = messageID
        self.verificationID = verificationID
        self.status = status
        self.vendorStatus = vendorStatus
        self.errorCode = errorCode
        self.error = error
    }
}

/// A ``MessageSender`` whose vendor reports deliveries to the gateway's callback route
/// (`/callbacks/{provider id}/…`). The own-code provider over it takes callbacks; over a sender without this, the
/// route answers `404`.
///
/// The sender asks for receipts on each message it sends (Twilio's `StatusCallback`, Vonage's `callback`), at
/// ``ProviderContext/callbackURL``, naming the message's ``OutboundMessage/reference`` where the vendor lets it.
public protocol ReceiptReadingSender: MessageSender {
    /// Checks the vendor's signature over `callback` and reads the receipts in it. A missing or wrong signature
    /// throws `unauthorized`; a signed callback that is not a receipt throws `invalid_request`. Neither changes
    /// anything.
    func receipts(in callback: VendorCallback) throws(GatewayError) -> [DeliveryReceipt]
}
