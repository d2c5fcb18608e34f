import Foundation
import GatewayCore

struct SinchConfiguration: Sendable, Equatable {
    /// Application-signed requests (HMAC-SHA256, docs/vendors/sinch.md §1.1), what production uses, or Basic for
    /// prototyping where the application's minimum scheme allows it.
    enum Authentication: String, Sendable, Equatable {
        case signed, basic
    }

    var applicationKey: String
    /// As Sinch shows it (base64); ``signingKey`` is it decoded, the HMAC key.
    var applicationSecret: String
    var signingKey: Data
    var baseURL: String
    var authentication: Authentication
    var smsExpiry: Int?
    var flashCallInterceptionTimeout: Int?
    /// docs/vendors/sinch.md does not state Sinch's own skew (§8, uncertain): a setting, 10 minutes by default.
    var callbackTolerance: TimeInterval
    /// Whether a request event for a verification the gateway did not start (the mobile SDK or another backend
    /// sharing the application) is allowed; the sandbox allows it so the vendor's own clients work against it.
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
        .choice("auth", "`signed` (application-signed requests, the default) or `basic`.", ["signed", "basic"]),
        .seconds("sms_expiry_seconds", "How long an SMS code lives, sent as smsOptions.expiry.", in: 1...86_399),
        .seconds("flash_call_interception_timeout", "flashCallOptions.interceptionTimeout, 5 to 120 s.", in: 5...120),
        .seconds(
            "callback_tolerance_seconds", "Allowed clock skew of a callback's x-timestamp; default 600.", in: 1...86_400
        ),
        .choice(
            "foreign_request_events",
            "`deny` (default) or `allow`: the answer to a request event for a verification the gateway did not start.",
            ["deny", "allow"]),
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

    /// `HH:MM:SS` for a number of seconds below a day (the setting's range).
    static func expiry(_ seconds: Int) -> String {
        String(VendorDate.utc(Date(timeIntervalSince1970: TimeInterval(seconds))).suffix(8))
    }
}
