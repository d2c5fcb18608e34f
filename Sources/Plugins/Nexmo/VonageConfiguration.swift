import Foundation
import GatewayCore

/// The validated settings of one Vonage provider.
struct VonageConfiguration: Sendable {
    enum API: String, Sendable {
        case v2, v1
    }

    var api: API
    var apiKey: String?
    var apiSecret: String?
    var applicationID: String?
    /// The application's private key (PEM), for RS256 application JWTs.
    var privateKeyPEM: String?
    var brand: String
    var codeLength: Int?
    /// Where the API lives, without a trailing slash (`https://api.nexmo.com`).
    var baseURL: String
    /// The account's signature secret: checks the HS256 JWT on Vonage's callbacks.
    var signatureSecret: String?
    var channelTimeout: Int?
    /// The WhatsApp Business number a WhatsApp step is sent from (Vonage requires `from`).
    var whatsappFrom: String?
    /// v1: the workflow to use whatever the request's channels (1–7).
    var workflowID: Int?

    static let defaultBaseURL = "https://api.nexmo.com"

    static let settings: [SettingSpec] = [
        SettingSpec(
            name: "api", summary: "`v2` (default): Verify v2 workflows; `v1`: the legacy Verify API.",
            isRequired: false, validate: { API(rawValue: $0) == nil ? "must be v2 or v1" : nil }),
        SettingSpec(
            name: "api_key", summary: "API key: Basic auth for v2, `api_key` in the body for v1.", isRequired: false),
        SettingSpec(name: "api_secret", summary: "API secret, with api_key.", isRequired: false, isSecret: true),
        SettingSpec(
            name: "application_id", summary: "v2: application id, to sign application JWTs (RS256) instead of Basic.",
            isRequired: false),
        SettingSpec(
            name: "private_key", summary: "v2: the application's private key (PEM), with application_id.",
            isRequired: false, isSecret: true),
        SettingSpec(
            name: "brand", summary: "The brand named in the message (1–18 characters, none of / { } : $).",
            validate: { VonageConfiguration.isValidBrand($0) ? nil : "must be 1 to 18 characters without / { } : $" }),
        SettingSpec(
            name: "code_length", summary: "Code length: 4–10 for v2, 4 or 6 for v1 (Vonage's default 4).",
            isRequired: false,
            validate: { Int($0).map { (4...10).contains($0) } == true ? nil : "must be a whole number from 4 to 10" }),
        SettingSpec(
            name: "base_url", summary: "API base URL; defaults to https://api.nexmo.com.", isRequired: false,
            validate: { VonageConfiguration.isHTTPURL($0) ? nil : "must be an http or https URL" }),
        SettingSpec(
            name: "signature_secret",
            summary: "Signature secret: checks the signed JWT on Vonage's status callbacks (needed to take them).",
            isRequired: false, isSecret: true),
        SettingSpec(
            name: "channel_timeout", summary: "v2: seconds before Vonage moves to the next channel (15–900).",
            isRequired: false,
            validate: {
                Int($0).map(VonageWire.channelTimeouts.contains) == true ? nil : "must be a whole number from 15 to 900"
            }),
        SettingSpec(
            name: "whatsapp_from",
            summary: "v2: the WhatsApp Business number WhatsApp codes come from (E.164); offers the whatsapp channel.",
            isRequired: false,
            validate: { VonageConfiguration.isPhoneNumber($0) ? nil : "must be a phone number in E.164 form" }),
        SettingSpec(
            name: "workflow_id", summary: "v1: always use this workflow (1–7) instead of one chosen from the channels.",
            isRequired: false,
            validate: { Int($0).flatMap { VonageWire.v1Workflows[$0] } == nil ? "must be a workflow id from 1 to 7" : nil }),
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
        func value(_ name: String) -> String? { settings[name].flatMap { $0.isEmpty ? nil : $0 } }
        api = value("api").flatMap(API.init(rawValue:)) ?? .v2
        apiKey = value("api_key")
        apiSecret = value("api_secret")
        applicationID = value("application_id")
        privateKeyPEM = value("private_key")
        brand = value("brand") ?? ""
        codeLength = value("code_length").flatMap(Int.init)
        signatureSecret = value("signature_secret")
        channelTimeout = value("channel_timeout").flatMap(Int.init)
        // Vonage takes numbers without the `+`.
        whatsappFrom = value("whatsapp_from").map { $0.hasPrefix("+") ? String($0.dropFirst()) : $0 }
        workflowID = value("workflow_id").flatMap(Int.init)
        var base = value("base_url") ?? Self.defaultBaseURL
        while base.hasSuffix("/") { base.removeLast() }
        baseURL = base

        let hasBasic = apiKey != nil && apiSecret != nil
        if (apiKey == nil) != (apiSecret == nil) {
            problems.append("provider \(providerID): give both `api_key` and `api_secret`, or neither")
        }
        if (applicationID == nil) != (privateKeyPEM == nil) {
            problems.append("provider \(providerID): give both `application_id` and `private_key`, or neither")
        }
        switch api {
        case .v1:
            if !hasBasic { problems.append("provider \(providerID): the v1 API needs `api_key` and `api_secret`") }
            if let length = codeLength, !VonageWire.v1CodeLengths.contains(length) {
                problems.append("provider \(providerID): setting `code_length` must be 4 or 6 for the v1 API")
            }
        case .v2:
            if !hasBasic && applicationID == nil {
                problems.append(
                    "provider \(providerID): give `api_key` and `api_secret`, or `application_id` and `private_key`")
            }
            if let pem = privateKeyPEM, applicationID != nil, !VonageJWT.isUsablePrivateKey(pem) {
                problems.append("provider \(providerID): setting `private_key` is not an RSA private key in PEM form")
            }
            if workflowID != nil {
                problems.append("provider \(providerID): setting `workflow_id` is for the v1 API only")
            }
        }
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
    }

    /// Whether v2 calls are signed with an application JWT (else Basic).
    var usesApplicationJWT: Bool { applicationID != nil && privateKeyPEM != nil }

    /// `^[^\/{}:$]*$`, 1–18 characters ([SPEC-V2-CUR] `brand`; v1 allows 18 too).
    static func isValidBrand(_ value: String) -> Bool {
        (1...18).contains(value.count) && !value.contains(where: { "/{}:$".contains($0) })
    }

    /// E.164 with or without the `+`: 7 to 15 digits, no leading zero.
    static func isPhoneNumber(_ value: String) -> Bool {
        let digits = value.hasPrefix("+") ? value.dropFirst() : Substring(value)
        return (7...15).contains(digits.count) && digits.first != "0" && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    static func isHTTPURL(_ value: String) -> Bool {
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host(), !host.isEmpty
        else { return false }
        return true
    }
}
