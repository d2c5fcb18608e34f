import Foundation
import GatewayCore

struct VonageConfiguration: Sendable {
    enum API: String, Sendable {
        case v2, v1
    }

    var api: API
    var apiKey: String?
    var apiSecret: String?
    var applicationID: String?
    var privateKeyPEM: String?
    var brand: String
    var codeLength: Int?
    var baseURL: String
    var signatureSecret: String?
    var channelTimeout: Int?
    /// Without the `+`, as Vonage takes numbers.
    var whatsappFrom: String?
    var workflowID: Int?

    static let defaultBaseURL = "https://api.nexmo.com"

    static let settings: [SettingSpec] = [
        .choice("api", "`v2` (default): Verify v2 workflows; `v1`: the legacy Verify API.", ["v2", "v1"]),
        .text("api_key", "API key: Basic auth for v2, `api_key` in the body for v1.", required: false),
        .secret("api_secret", "API secret, with api_key.", required: false),
        .text(
            "application_id", "v2: application id, to sign application JWTs (RS256) instead of Basic.",
            required: false),
        .secret("private_key", "v2: the application's private key (PEM), with application_id.", required: false),
        .text(
            "brand", "The brand named in the message (1–18 characters, none of / { } : $).",
            check: VonageConfiguration.isValidBrand, reason: "must be 1 to 18 characters without / { } : $"),
        .integer("code_length", "Code length: 4–10 for v2, 4 or 6 for v1 (Vonage's default 4).", in: 4...10),
        .url("base_url", "API base URL; defaults to https://api.nexmo.com."),
        .secret(
            "signature_secret",
            "Signature secret: checks the signed JWT on Vonage's status callbacks (needed to take them).",
            required: false),
        .integer("channel_timeout", "v2: seconds before Vonage moves to the next channel (15–900).", in: 15...900),
        .text(
            "whatsapp_from",
            "v2: the WhatsApp Business number WhatsApp codes come from (E.164); offers the whatsapp channel.",
            required: false, check: VonageConfiguration.isPhoneNumber, reason: "must be a phone number in E.164 form"),
        .integer(
            "workflow_id", "v1: always use this workflow (1–7) instead of one chosen from the channels.", in: 1...7,
            reason: "must be a workflow id from 1 to 7"),
    ]

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        var settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        api = settings.choice("api", default: .v2)
        apiKey = settings["api_key"]
        apiSecret = settings["api_secret"]
        applicationID = settings["application_id"]
        privateKeyPEM = settings["private_key"]
        brand = settings["brand"] ?? ""
        codeLength = settings.int("code_length")
        signatureSecret = settings["signature_secret"]
        channelTimeout = settings.int("channel_timeout")
        // Vonage takes numbers without the `+`.
        whatsappFrom = settings["whatsapp_from"].map { $0.hasPrefix("+") ? String($0.dropFirst()) : $0 }
        workflowID = settings.int("workflow_id")
        baseURL = settings.url("base_url", default: Self.defaultBaseURL)

        let hasBasic = apiKey != nil && apiSecret != nil
        settings.require((apiKey == nil) == (apiSecret == nil), "give both `api_key` and `api_secret`, or neither")
        settings.require(
            (applicationID == nil) == (privateKeyPEM == nil), "give both `application_id` and `private_key`, or neither"
        )
        switch api {
        case .v1:
            settings.require(hasBasic, "the v1 API needs `api_key` and `api_secret`")
            settings.require(
                codeLength.map(VonageWire.v1CodeLengths.contains) ?? true,
                "setting `code_length` must be 4 or 6 for the v1 API")
        case .v2:
            settings.require(
                hasBasic || applicationID != nil,
                "give `api_key` and `api_secret`, or `application_id` and `private_key`")
            settings.require(
                privateKeyPEM.map { applicationID == nil || VonageJWT.isUsablePrivateKey($0) } ?? true,
                "setting `private_key` is not an RSA private key in PEM form")
            settings.require(workflowID == nil, "setting `workflow_id` is for the v1 API only")
        }
        try settings.validate()
    }

    /// `^[^\/{}:$]*$`, 1–18 characters ([SPEC-V2-CUR] `brand`; v1 allows 18 too).
    @Sendable static func isValidBrand(_ value: String) -> Bool {
        (1...18).contains(value.count) && !value.contains(where: { "/{}:$".contains($0) })
    }

    /// E.164 with or without the `+`: 7 to 15 digits, no leading zero.
    @Sendable static func isPhoneNumber(_ value: String) -> Bool {
        let digits = value.hasPrefix("+") ? value.dropFirst() : Substring(value)
        return (7...15).contains(digits.count) && digits.first != "0" && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
