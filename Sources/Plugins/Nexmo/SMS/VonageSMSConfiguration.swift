import Foundation
import GatewayCore

/// The settings of a Vonage SMS API provider (docs/vendors/vonage-sms.md §1).
struct VonageSMSConfiguration: Sendable, Equatable {
    /// The Basic-auth user.
    var apiKey: String
    /// The Basic-auth password.
    var apiSecret: String
    /// Without a trailing slash.
    var baseURL: String

    static let defaultBaseURL = "https://rest.nexmo.com"

    static let settings: [SettingSpec] = [
        .text("api_key", "API key (the dashboard's key): the Basic-auth user."),
        .secret("api_secret", "API secret: the Basic-auth password."),
        .url("base_url", "SMS API base URL; defaults to https://rest.nexmo.com."),
    ]

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        try settings.validate()
        apiKey = settings["api_key"] ?? ""
        apiSecret = settings["api_secret"] ?? ""
        baseURL = settings.url("base_url", default: Self.defaultBaseURL)
    }
}
