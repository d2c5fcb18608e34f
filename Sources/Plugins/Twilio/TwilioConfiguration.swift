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
    /// Read as UTF-8 bytes: a SID is ASCII, and walking it by `Character` would break graphemes for each one.
    static func matches(_ value: String, prefixes: [String]) -> Bool {
        let bytes = value.utf8
        guard bytes.count == 34, prefixes.contains(where: { value.utf8.starts(with: $0.utf8) }) else { return false }
        return bytes.dropFirst(2).allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
        }
    }
}
