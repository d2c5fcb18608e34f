import Foundation
import GatewayCore

/// The settings of a Twilio Programmable Messaging provider (docs/vendors/twilio-messaging.md §1).
struct TwilioMessagingConfiguration: Sendable, Equatable {
    /// The account the messages are sent from: the `AccountSid` of the path.
    var accountSID: String
    /// The Basic-auth user: an API key SID (`SK…`) when one is set, else the account SID.
    var username: String
    /// The Basic-auth password: the auth token, or the API key's secret.
    var authToken: String
    /// Without a trailing slash.
    var baseURL: String
    /// The account's auth token, which Twilio signs status callbacks with: `auth_token`, or `webhook_auth_token`
    /// beside an API key; `nil` (no receipts asked for) with an API key alone.
    var signingToken: String?

    static let defaultBaseURL = "https://api.twilio.com"

    static let settings: [SettingSpec] = [
        .text(
            "account_sid", "Account SID (AC…) the messages are sent from.",
            check: { TwilioConfiguration.matches($0, prefixes: ["AC"]) },
            reason: "must be AC followed by 32 hex digits"),
        .text(
            "api_key_sid", "API key SID (SK…) to authenticate with; auth_token is then the key's secret.",
            required: false, check: { TwilioConfiguration.matches($0, prefixes: ["SK"]) },
            reason: "must be SK followed by 32 hex digits"),
        .secret("auth_token", "Auth token, or the API key's secret when api_key_sid is set."),
        .url("base_url", "Messaging API base URL; defaults to https://api.twilio.com."),
        .secret(
            "webhook_auth_token",
            "The account's auth token, to check status-callback signatures when auth_token is an API key's secret.",
            required: false),
    ]

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        try settings.validate()
        accountSID = settings["account_sid"] ?? ""
        username = settings["api_key_sid"] ?? accountSID
        authToken = settings["auth_token"] ?? ""
        baseURL = settings.url("base_url", default: Self.defaultBaseURL)
        signingToken = settings["webhook_auth_token"] ?? (settings["api_key_sid"] == nil ? authToken : nil)
    }
}
