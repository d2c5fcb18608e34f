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
    /// The account's signature secret, which signs delivery receipts once Vonage has turned signed webhooks on;
    /// `nil`: no receipts are asked for (an unsigned one could be anyone's).
    var signatureSecret: String?
    /// How receipts are signed: `md5hash` (MD5 of the parameters and the secret, Vonage's default) or an HMAC.
    var signatureMethod: String

    static let signatureMethods = ["md5hash", "md5", "sha1", "sha256", "sha512"]

    static let defaultBaseURL = "https://rest.nexmo.com"

    static let settings: [SettingSpec] = [
        .text("api_key", "API key (the dashboard's key): the Basic-auth user."),
        .secret("api_secret", "API secret: the Basic-auth password."),
        .url("base_url", "SMS API base URL; defaults to https://rest.nexmo.com."),
        .secret("signature_secret", "Signature secret of signed webhooks, to take delivery receipts.", required: false),
        .text(
            "signature_method", "How receipts are signed: md5hash (the default), md5, sha1, sha256 or sha512 (HMACs).",
            required: false, check: { signatureMethods.contains($0) },
            reason: "must be one of md5hash, md5, sha1, sha256, sha512"),
    ]

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        try settings.validate()
        apiKey = settings["api_key"] ?? ""
        apiSecret = settings["api_secret"] ?? ""
        baseURL = settings.url("base_url", default: Self.defaultBaseURL)
        signatureSecret = settings["signature_secret"]
        signatureMethod = settings["signature_method"] ?? "md5hash"
    }
}
