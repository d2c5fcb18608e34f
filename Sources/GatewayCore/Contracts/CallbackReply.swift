import Foundation
import HTTPTypes

/// What a plugin made of a callback: updates to apply, and the answer the vendor expects.
public struct CallbackReply: Sendable {
    /// The changes to apply, one per verification the callback names; empty when it changes nothing.
    public var updates: [ProviderUpdate]
    /// Delivery receipts of the gateway's own messages, to record on their verifications' timelines.
    public var receipts: [DeliveryReceipt]
    /// The HTTP answer to the vendor (Sinch's request event is answered with an allow or deny body).
    public var response: TransportResponse

    /// A reply applying `updates`, recording `receipts`, and answering the vendor `200 OK` with no body unless
    /// told.
    public init(
        updates: [ProviderUpdate], receipts: [DeliveryReceipt] = [],
        response: TransportResponse = TransportResponse(status: .ok)
    ) {
        self.updates = updates
        self.receipts = receipts
        self.response = response
    }
}
