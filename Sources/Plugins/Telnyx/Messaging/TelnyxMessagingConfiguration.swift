import Foundation
import GatewayCore

/// The settings of a Telnyx Messaging provider (docs/vendors/telnyx-messaging.md §1, §5, §8).
struct TelnyxMessagingConfiguration: Sendable, Equatable {
    var apiKey: String
    /// Sent with every message when set; Telnyx needs it for an alphanumeric sender.
    var messagingProfileID: String?
    /// Where the API lives, without a trailing slash (`https://api.telnyx.com/v2`).
    var baseURL: String
    /// The account's Ed25519 public key (32 raw bytes), which checks message webhooks; `nil`: none asked for.
    var publicKey: Data?

    static let settings: [SettingSpec] = [
        .secret("api_key", "API key (V2), sent as `Authorization: Bearer`."),
        .text(
            "messaging_profile_id",
            "The messaging profile (uuid) sent with each message; needed for alphanumeric senders.",
            required: false, check: TelnyxConfiguration.isUUID, reason: "must be a messaging profile id (a uuid)"),
        .url("base_url", "API base URL including `/v2`; defaults to https://api.telnyx.com/v2."),
        .text(
            "public_key", "The account's Ed25519 public key (base64): checks delivery webhooks (needed to take them).",
            required: false, check: { TelnyxConfiguration.publicKey(from: $0) != nil },
            reason: "must be the base64 of a 32-byte key"),
    ]

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        try settings.validate()
        apiKey = settings["api_key"] ?? ""
        messagingProfileID = settings["messaging_profile_id"]
        baseURL = settings.url("base_url", default: "https://api.telnyx.com/v2")
        publicKey = settings["public_key"].flatMap(TelnyxConfiguration.publicKey(from:))
    }
}
