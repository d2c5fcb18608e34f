import Foundation
import GatewayCore

/// The validated settings of one Twilio provider.
struct TwilioConfiguration: Sendable, Equatable {
    /// The Basic-auth user: an account SID (`AC…`) or an API key SID (`SK…`).
    var accountSID: String
    /// The Basic-auth password: the auth token or the API key secret.
    var authToken: String
    var serviceSID: String
    /// Where the Verify API lives, without a trailing slash (`https://verify.twilio.com`).
    var baseURL: String
    /// How long a push challenge lives; `nil` leaves Twilio's default (5 minutes).
    var pushChallengeSeconds: Int?

    static let defaultBaseURL = "https://verify.twilio.com"

    /// The settings the plugin takes (`docs/errors.md` and the configuration guide list them).
    static let settings: [SettingSpec] = [
        SettingSpec(
            name: "account_sid",
            summary: "Account SID (AC…) or API key SID (SK…): the Basic-auth user.",
            validate: {
                TwilioConfiguration.matches($0, prefixes: ["AC", "SK"])
                    ? nil : "must be AC or SK followed by 32 hex digits"
            }),
        SettingSpec(
            name: "auth_token",
            summary: "Auth token, or the API key secret when account_sid is an SK… key.",
            isSecret: true),
        SettingSpec(
            name: "service_sid",
            summary: "Verify service SID (VA…).",
            validate: {
                TwilioConfiguration.matches($0, prefixes: ["VA"]) ? nil : "must be VA followed by 32 hex digits"
            }),
        SettingSpec(
            name: "base_url",
            summary: "Verify API base URL; defaults to https://verify.twilio.com.",
            isRequired: false,
            validate: { TwilioConfiguration.isHTTPURL($0) ? nil : "must be an http or https URL" }),
        SettingSpec(
            name: "push_challenge_seconds",
            summary: "Lifetime of a push challenge (ExpirationDate), 1 to 3600 seconds; defaults to Twilio's 5 minutes.",
            isRequired: false,
            validate: { Int($0).map { (1...3600).contains($0) } == true ? nil : "must be 1 to 3600 seconds" }),
    ]

    /// Reads and checks `settings`, reporting every problem at once.
    init(settings: [String: String], providerID: String) throws(ConfigurationError) {
        var problems: [String] = []
        for spec in Self.settings {
            guard let value = settings[spec.name], !value.isEmpty else {
                if spec.isRequired { problems.append("provider \(providerID): missing setting `\(spec.name)`") }
                continue
            }
            if let reason = spec.validate?(value) {
                problems.append("provider \(providerID): setting `\(spec.name)` \(reason)")
            }
        }
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        accountSID = settings["account_sid"] ?? ""
        authToken = settings["auth_token"] ?? ""
        serviceSID = settings["service_sid"] ?? ""
        var base = settings["base_url"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultBaseURL
        while base.hasSuffix("/") { base.removeLast() }
        baseURL = base
        pushChallengeSeconds = settings["push_challenge_seconds"].flatMap { Int($0) }
    }

    /// Whether `value` is one of `prefixes` followed by exactly 32 hex digits (Twilio's SID shape).
    static func matches(_ value: String, prefixes: [String]) -> Bool {
        guard value.count == 34, prefixes.contains(where: { value.hasPrefix($0) }) else { return false }
        return value.dropFirst(2).allSatisfy { $0.isASCII && $0.isHexDigit }
    }

    static func isHTTPURL(_ value: String) -> Bool {
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host(), !host.isEmpty
        else { return false }
        return true
    }
}
