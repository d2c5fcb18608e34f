import Foundation
import GatewayCore

struct TwilioConfiguration: Sendable, Equatable {
    /// The Basic-auth user: an account SID (`AC…`) or an API key SID (`SK…`).
    var accountSID: String
    /// The Basic-auth password: the auth token or the API key secret.
    var authToken: String
    var serviceSID: String
    /// Without a trailing slash.
    var baseURL: String
    /// How long a push challenge lives; `nil` leaves Twilio's default (5 minutes).
    var pushChallengeSeconds: Int?

    static let defaultBaseURL = "https://verify.twilio.com"

    static let settings: [SettingSpec] = [
        .text(
            "account_sid", "Account SID (AC…) or API key SID (SK…): the Basic-auth user.",
            check: { TwilioConfiguration.matches($0, prefixes: ["AC", "SK"]) },
            reason: "must be AC or SK followed by 32 hex digits"),
        .secret("auth_token", "Auth token, or the API key secret when account_sid is an SK… key."),
        .text(
            "service_sid", "Verify service SID (VA…).", check: { TwilioConfiguration.matches($0, prefixes: ["VA"]) },
            reason: "must be VA followed by 32 hex digits"),
        .url("base_url", "Verify API base URL; defaults to https://verify.twilio.com."),
        .seconds(
            "push_challenge_seconds",
            "Lifetime of a push challenge (ExpirationDate), 1 to 3600 seconds; defaults to Twilio's 5 minutes.",
            in: 1...3600),
    ]

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        try settings.validate()
        accountSID = settings["account_sid"] ?? ""
        authToken = settings["auth_token"] ?? ""
        serviceSID = settings["service_sid"] ?? ""
        baseURL = settings.url("base_url", default: Self.defaultBaseURL)
        pushChallengeSeconds = settings.int("push_challenge_seconds")
    }

    /// Whether `value` is one of `prefixes` followed by exactly 32 hex digits (Twilio's SID shape).
    static func matches(_ value: String, prefixes: [String]) -> Bool {
        guard value.count == 34, prefixes.contains(where: { value.hasPrefix($0) }) else { return false }
        return value.dropFirst(2).allSatisfy { $0.isASCII && $0.isHexDigit }
    }
}
