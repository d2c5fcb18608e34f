import Foundation
import GatewayCore
import HTTPTypes

/// Sinch SMS (XMS) JSON (docs/vendors/sinch-sms.md §2 to §5): keys in snake_case, which the kit's ``SnakeCaseJSON``
/// converts, and absent optionals left out.
enum SinchSMSWire {
    /// The body of `POST /xms/v1/{service_plan_id}/batches` (`TextRequest`, `type: mt_text`).
    struct Send: Codable, Sendable, Equatable {
        var to: [String]
        var from: String?
        var body: String
        var type: String?
        var deliveryReport: String?
        var callbackUrl: String?
        var clientReference: String?
        var expireAt: String?
    }

    /// The created batch (`TextResponse`): no per-recipient id or status, which only delivery reports carry.
    struct Batch: Codable, Sendable, Equatable {
        var id: String?
        var to: [String]?
        var from: String?
        var body: String?
        var type: String?
        var canceled: Bool?
        var createdAt: String?
        var modifiedAt: String?
        var deliveryReport: String?
        var expireAt: String?
        var callbackUrl: String?
        var clientReference: String?
        var flashMessage: Bool?
    }

    /// A request error's body: `{"code": "syntax_invalid_parameter_format", "text": "…"}`.
    struct Problem: Codable, Sendable, Equatable {
        var code: String?
        var text: String?
    }

    /// A `per_recipient_final` delivery report (`RecipientDeliveryReport`, `type: recipient_delivery_report_sms`).
    struct RecipientReport: Codable, Sendable, Equatable {
        var type: String
        var batchId: String?
        var recipient: String?
        var status: String?
        var code: Int?
        var at: String?
        var operatorStatusAt: String?
        var clientReference: String?
    }

    /// Where a report's `status` leaves the message (§4.2). `Unknown` says nothing either way, so it stays `sent`.
    static func deliveryStatus(_ status: String?) -> DeliveryStatus? {
        switch status {
        case "Queued": .queued
        case "Dispatched", "Unknown": .sent
        case "Delivered": .delivered
        case "Failed", "Expired", "Deleted": .undelivered
        case "Rejected", "Aborted", "Cancelled": .failed
        default: nil
        }
    }

    /// The signature headers of a callback (§4.5; names case-insensitive).
    static let signatureHeader = HTTPField.Name("x-sinch-webhook-signature")!
    static let timestampHeader = HTTPField.Name("x-sinch-webhook-signature-timestamp")!
    static let nonceHeader = HTTPField.Name("x-sinch-webhook-signature-nonce")!
    static let algorithmHeader = HTTPField.Name("x-sinch-webhook-signature-algorithm")!
}
