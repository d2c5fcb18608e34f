import Foundation
import GatewayCore

/// The validated settings of one Sinch provider.
struct SinchConfiguration: Sendable, Equatable {
    enum Authentication: String, Sendable, Equatable {
        /// Application-signed requests (HMAC-SHA256, docs/vendors/sinch.md §1.1): the default, what production uses.
        case signed
        /// `Basic base64(key:secret)`: for prototyping, where the application's minimum scheme allows it.
        case basic
    }

    var applicationKey: String
    /// The application secret as Sinch shows it (base64).
    var applicationSecret: String
    /// The secret decoded: the HMAC key.
    var signingKey: Data
    /// Without a trailing slash (`https://verification.api.sinch.com`).
    var baseURL: String
    var authentication: Authentication
    /// `smsOptions.expiry` in seconds, sent as `HH:MM:SS` (Sinch's own default applies when unset).
    var smsExpiry: Int?
    /// `flashCallOptions.interceptionTimeout` (5–120 s), when set.
    var flashCallInterceptionTimeout: Int?
    /// How far a callback's `x-timestamp` may be from the gateway's clock. docs/vendors/sinch.md does not state Sinch's
    /// own skew (§8, uncertain): a setting, 10 minutes by default.
    var callbackTolerance: TimeInterval
    /// Whether a request event for a verification the gateway did not start (no reference of its own: the
    /// mobile SDK or another backend sharing the application) is allowed. Denied by default; the sandbox
    /// allows it so the vendor's own clients work against the emulator. The country policy applies either way.
    var allowsForeignVerifications: Bool

    static let defaultBaseURL = "https://verification.api.sinch.com"

    static let settings: [SettingSpec] = [
        SettingSpec(
            name: "application_key", summary: "Verification application key (dashboard: Verification → Apps).",
            validate: { $0.count <= 128 && !$0.contains(":") && !$0.contains(where: \.isWhitespace) ? nil : "must be an application key" }),
        SettingSpec(
            name: "application_secret", summary: "Application secret (base64, as the dashboard shows it).",
            isSecret: true,
            validate: { SinchSigning.key(fromSecret: $0) == nil ? "must be the base64 secret Sinch shows" : nil }),
        SettingSpec(
            name: "base_url", summary: "Verification API base URL; defaults to https://verification.api.sinch.com.",
            isRequired: false,
            validate: { SinchConfiguration.isHTTPURL($0) ? nil : "must be an http or https URL" }),
        SettingSpec(
            name: "auth", summary: "`signed` (application-signed requests, the default) or `basic`.",
            isRequired: false,
            validate: { Authentication(rawValue: $0) == nil ? "must be `signed` or `basic`" : nil }),
        SettingSpec(
            name: "sms_expiry_seconds", summary: "How long an SMS code lives, sent as smsOptions.expiry.",
            isRequired: false,
            validate: { Int($0).map { (1...86_399).contains($0) } == true ? nil : "must be 1 to 86399 seconds" }),
        SettingSpec(
            name: "flash_call_interception_timeout", summary: "flashCallOptions.interceptionTimeout, 5 to 120 s.",
            isRequired: false,
            validate: { Int($0).map { (5...120).contains($0) } == true ? nil : "must be 5 to 120 seconds" }),
        SettingSpec(
            name: "callback_tolerance_seconds",
            summary: "Allowed clock skew of a callback's x-timestamp; default 600.", isRequired: false,
            validate: { Int($0).map { (1...86_400).contains($0) } == true ? nil : "must be 1 to 86400 seconds" }),
        SettingSpec(
            name: "foreign_request_events",
            summary: "`deny` (default) or `allow`: the answer to a request event for a verification the gateway did not start.",
            isRequired: false,
            validate: { ["deny", "allow"].contains($0) ? nil : "must be `deny` or `allow`" }),
    ]

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
        guard problems.isEmpty, let key = SinchSigning.key(fromSecret: settings["application_secret"] ?? "") else {
            throw ConfigurationError(problems: problems)
        }
        applicationKey = settings["application_key"] ?? ""
        applicationSecret = settings["application_secret"] ?? ""
        signingKey = key
        var base = settings["base_url"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultBaseURL
        while base.hasSuffix("/") { base.removeLast() }
        baseURL = base
        authentication = settings["auth"].flatMap(Authentication.init(rawValue:)) ?? .signed
        smsExpiry = settings["sms_expiry_seconds"].flatMap { Int($0) }
        flashCallInterceptionTimeout = settings["flash_call_interception_timeout"].flatMap { Int($0) }
        callbackTolerance = TimeInterval(settings["callback_tolerance_seconds"].flatMap { Int($0) } ?? 600)
        allowsForeignVerifications = settings["foreign_request_events"] == "allow"
    }

    static func isHTTPURL(_ value: String) -> Bool {
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host(), !host.isEmpty
        else { return false }
        return true
    }

    /// `HH:MM:SS` for a number of seconds.
    static func expiry(_ seconds: Int) -> String {
        func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(pad(seconds / 3600)):\(pad(seconds / 60 % 60)):\(pad(seconds % 60))"
    }
}
