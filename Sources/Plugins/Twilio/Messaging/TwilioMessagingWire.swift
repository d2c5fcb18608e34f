import Foundation
import GatewayCore

/// The Message resource of the 2010-04-01 API (`api.v2010.account.message`), as much as the plugin and its
/// emulator use; the emulator writes every field, `null` where Twilio would.
enum TwilioMessagingWire {
    struct Message: Codable, Sendable, Equatable {
        var sid: String?
        var accountSID: String?
        var messagingServiceSID: String?
        var from: String?
        var to: String?
        var body: String?
        var status: String?
        var direction: String?
        var numSegments: String?
        var numMedia: String?
        var price: String?
        var priceUnit: String?
        var errorCode: Int?
        var errorMessage: String?
        var dateCreated: String?
        var dateSent: String?
        var dateUpdated: String?
        var apiVersion: String?
        var uri: String?
        var subresourceURIs: [String: String]?

        enum CodingKeys: String, CodingKey {
            case sid, from, to, body, status, direction, price, uri
            case accountSID = "account_sid"
            case messagingServiceSID = "messaging_service_sid"
            case numSegments = "num_segments"
            case numMedia = "num_media"
            case priceUnit = "price_unit"
            case errorCode = "error_code"
            case errorMessage = "error_message"
            case dateCreated = "date_created"
            case dateSent = "date_sent"
            case dateUpdated = "date_updated"
            case apiVersion = "api_version"
            case subresourceURIs = "subresource_uris"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(sid, forKey: .sid)
            try container.encode(accountSID, forKey: .accountSID)
            try container.encode(messagingServiceSID, forKey: .messagingServiceSID)
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
            try container.encode(body, forKey: .body)
            try container.encode(status, forKey: .status)
            try container.encode(direction, forKey: .direction)
            try container.encode(numSegments, forKey: .numSegments)
            try container.encode(numMedia, forKey: .numMedia)
            try container.encode(price, forKey: .price)
            try container.encode(priceUnit, forKey: .priceUnit)
            try container.encode(errorCode, forKey: .errorCode)
            try container.encode(errorMessage, forKey: .errorMessage)
            try container.encode(dateCreated, forKey: .dateCreated)
            try container.encode(dateSent, forKey: .dateSent)
            try container.encode(dateUpdated, forKey: .dateUpdated)
            try container.encode(apiVersion, forKey: .apiVersion)
            try container.encode(uri, forKey: .uri)
            try container.encode(subresourceURIs, forKey: .subresourceURIs)
        }
    }

    /// A message status in the gateway's terms (§4): the initial and in-flight ones are `queued` and `sent`,
    /// `canceled` is `failed`; `nil` for the inbound and channel-only statuses a sent SMS never has.
    static func deliveryStatus(_ name: String) -> DeliveryStatus? {
        switch name {
        case "accepted", "scheduled", "queued", "sending": return .queued
        case "sent": return .sent
        case "delivered", "read": return .delivered
        case "undelivered": return .undelivered
        case "failed", "canceled": return .failed
        default: return nil
        }
    }
}

extension TwilioMessagingWire {
    /// A date as the 2010-04-01 API writes it (RFC 2822, UTC): `Thu, 24 Aug 2023 05:01:45 +0000`.
    static func rfc2822(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(days[((parts.weekday ?? 1) - 1) % 7]), \(two(parts.day)) \(months[((parts.month ?? 1) - 1) % 12]) "
            + "\(parts.year ?? 1970) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) +0000"
    }
}
