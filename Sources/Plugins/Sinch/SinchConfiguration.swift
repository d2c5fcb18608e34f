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
        .text(
            "application_key", "Verification application key (dashboard: Verification → Apps).",
            check: { $0.count <= 128 && !$0.contains(":") && !$0.contains(where: \.isWhitespace) },
            reason: "must be an application key"),
        SettingSpec(
            name: "application_secret", summary: "Application secret (base64, as the dashboard shows it).",
            isSecret: true,
            validate: { SinchSigning.key(fromSecret: $0) == nil ? "must be the base64 secret Sinch shows" : nil }),
        .url("base_url", "Verification API base URL; defaults to https://verification.api.sinch.com."),
        .text(
            "auth", "`signed` (application-signed requests, the default) or `basic`.", required: false,
            check: { Authentication(rawValue: $0) != nil }, reason: "must be `signed` or `basic`"),
        .integer(
            "sms_expiry_seconds", "How long an SMS code lives, sent as smsOptions.expiry.", in: 1...86_399,
            reason: "must be 1 to 86399 seconds"),
        .integer(
            "flash_call_interception_timeout", "flashCallOptions.interceptionTimeout, 5 to 120 s.", in: 5...120,
            reason: "must be 5 to 120 seconds"),
        .integer(
            "callback_tolerance_seconds", "Allowed clock skew of a callback's x-timestamp; default 600.",
            in: 1...86_400, reason: "must be 1 to 86400 seconds"),
        .text(
            "foreign_request_events",
            "`deny` (default) or `allow`: the answer to a request event for a verification the gateway did not start.",
            required: false, check: { ["deny", "allow"].contains($0) }, reason: "must be `deny` or `allow`"),
    ]

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        try settings.validate()
        guard let key = SinchSigning.key(fromSecret: settings["application_secret"] ?? "") else {
            throw ConfigurationError(problems: settings.problems)
        }
        applicationKey = settings["application_key"] ?? ""
        applicationSecret = settings["application_secret"] ?? ""
        signingKey = key
        baseURL = settings.url("base_url", default: Self.defaultBaseURL)
        authentication = settings.choice("auth", default: .signed)
        smsExpiry = settings.int("sms_expiry_seconds")
        flashCallInterceptionTimeout = settings.int("flash_call_interception_timeout")
        callbackTolerance = TimeInterval(settings.int("callback_tolerance_seconds") ?? 600)
        allowsForeignVerifications = settings["foreign_request_events"] == "allow"
    }

    /// `HH:MM:SS` for a number of seconds.
    static func expiry(_ seconds: Int) -> String {
        func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(pad(seconds / 3600)):\(pad(seconds / 60 % 60)):\(pad(seconds % 60))"
    }
}
