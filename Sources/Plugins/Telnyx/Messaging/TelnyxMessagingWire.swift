import Foundation
import GatewayCore

/// Telnyx Messaging's JSON (docs/vendors/telnyx-messaging.md §2 to §5; `telnyx_messaging_v2.yaml`): keys in
/// snake_case, which the kit's ``SnakeCaseJSON`` converts, and absent optionals left out.
enum TelnyxMessagingWire {
    /// The body of `POST /messages` (`CreateMessageRequest`).
    struct Send: Codable, Sendable, Equatable {
        var from: String?
        var to: String
        var text: String?
        var type: String?
        var messagingProfileId: String?
        var webhookUrl: String?
    }

    /// One recipient, or the sender, of a message.
    struct Address: Codable, Sendable, Equatable {
        var phoneNumber: String?
        var status: String?
        var carrier: String?
        var lineType: String?
    }

    /// One `{code, title, detail}` of a message's `errors[]`.
    struct Problem: Codable, Sendable, Equatable {
        var code: String
        var title: String
        var detail: String?
    }

    struct Money: Codable, Sendable, Equatable {
        var amount: String
        var currency: String
    }

    /// A message (`OutboundMessagePayload`): the answer's `data` and a webhook's `payload`.
    struct Message: Codable, Sendable, Equatable {
        var id: String?
        var recordType: String?
        var direction: String?
        var type: String?
        var from: Address?
        var to: [Address]?
        var text: String?
        var encoding: String?
        var parts: Int?
        var cost: Money?
        var errors: [Problem]?
        var messagingProfileId: String?
        var receivedAt: String?
        var sentAt: String?
        var completedAt: String?
        var validUntil: String?
        var webhookUrl: String?
        var waitSeconds: Double?
        var tags: [String]?
    }

    /// A message webhook (`OutboundMessageEvent`): `data.event_type` `message.sent` or `message.finalized`, the
    /// message in `data.payload`.
    struct Event: Codable, Sendable {
        struct Body: Codable, Sendable {
            var eventType: String
            var id: String?
            var occurredAt: String?
            var recordType: String?
            var payload: Message?
        }

        var data: Body
        var meta: [String: JSONValue]?
    }

    /// Where a recipient's `status` leaves the message (§4). `delivery_unconfirmed` is final at Telnyx but says
    /// nothing either way, so it stays `sent`: nothing confirmed the code arrived, nor that it did not.
    static func deliveryStatus(_ status: String?) -> DeliveryStatus? {
        switch status {
        case "scheduled", "queued", "sending": .queued
        case "sent", "delivery_unconfirmed": .sent
        case "delivered": .delivered
        case "delivery_failed", "expired": .undelivered
        case "sending_failed", "cancelled": .failed
        default: nil
        }
    }
}
