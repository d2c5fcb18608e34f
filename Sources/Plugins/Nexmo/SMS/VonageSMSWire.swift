import Foundation
import GatewayCore

/// The SMS API's answer (`SMS`, docs/vendors/vonage-sms.md §3): one element per part, each accepted
/// (`status` `"0"`, with its `message-id`) or refused (a non-zero `status` and its `error-text`). Every value
/// is a string.
enum VonageSMSWire {
    struct Answer: Codable, Sendable, Equatable {
        var messageCount: String?
        var messages: [Part]

        enum CodingKeys: String, CodingKey {
            case messages
            case messageCount = "message-count"
        }
    }

    struct Part: Codable, Sendable, Equatable {
        var to: String?
        var messageID: String?
        var status: String?
        var errorText: String?
        var remainingBalance: String?
        var messagePrice: String?
        var network: String?
        var clientRef: String?

        enum CodingKeys: String, CodingKey {
            case to, status, network
            case messageID = "message-id"
            case errorText = "error-text"
            case remainingBalance = "remaining-balance"
            case messagePrice = "message-price"
            case clientRef = "client-ref"
        }
    }
}
