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
        // Without a Calendar: this runs for every message the emulator answers.
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (civilYear, civilMonth, civilDay) = VendorDate.civil(days: Int64(days))
        let (year, month, day) = (Int(civilYear), Int(civilMonth), Int(civilDay))
        // 1970-01-01 was a Thursday.
        let weekday = ((days % 7) + 11) % 7
        let names = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int) -> String { value < 10 ? "0" + String(value) : String(value) }
        return "\(names[weekday]), \(two(day)) \(months[month - 1]) \(year) \(two(secondOfDay / 3600)):"
            + "\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) +0000"
    }
}
