import Foundation
import GatewayCore

/// The validated settings of one IDaaS provider. Every path, header name and value docs/vendors/idaas.md marks
/// uncertain is a setting whose default is the documented bccastle CIAM value (docs/vendors/idaas.md §4, §5).
struct IDaaSConfiguration: Sendable, Equatable {
    var baseURL: String
    var clientID: String
    /// Each call's path: the documented one unless its setting (``pathSettings``) says otherwise.
    var paths: [VendorOperation: String]
    var headers: Headers
    var smsType: String
    var mobileFormat: MobileFormat
    var defaultOS: String
    var defaultAgent: String
    /// `X-L`: `zh` or `en` (only `error_msg` is localized, docs/vendors/idaas.md §1).
    var defaultLanguage: String
    /// The language of the tenant's login SMS template, reported as `content_language` (the SMS is
    /// Chinese, [BC-IOS]; `X-L` does not change it).
    var smsLanguage: String
    var areaCodesTTL: TimeInterval
    var preloadAreaCodes: Bool
    var jwksTTL: TimeInterval
    var idTokenIssuer: String?
    var clockSkew: TimeInterval
    /// The regions declared until the tenant's area codes are read (bccastle tenants are China-centric,
    /// docs/vendors/idaas.md §2.6), so routing never hands a provider with a cold cache a number it cannot serve.
    var defaultRegions: Set<String>
    /// How long the app has to solve a slider (our choice: docs/vendors/idaas.md documents no lifetime).
    var challengeLifetime: TimeInterval

    struct Headers: Sendable, Equatable {
        var clientID = IDaaSWire.clientIDHeader
        var os = IDaaSWire.osHeader
        var fingerprint = IDaaSWire.fingerprintHeader
        var ip = IDaaSWire.ipHeader
        var agent = IDaaSWire.agentHeader
        var language = IDaaSWire.languageHeader
        var sessionToken = IDaaSWire.sessionTokenHeader
    }

    /// How `mobile` is written (docs/vendors/idaas.md §2.3, §5: the international form is ASSUMED): `dashed`
    /// `+86-13800138000`, the `mobileRegex` form (default); `e164` `+8613800138000`; `national` `13800138000`, as
    /// OneAccess (China only) documents.
    enum MobileFormat: String, Sendable, Equatable, CaseIterable {
        case dashed, e164, national

        func write(_ number: PhoneNumber) -> String {
            switch self {
            case .dashed: return number.dashedE164
            case .e164: return number.e164
            case .national: return number.nationalNumber
            }
        }
    }

    static let pathSettings: [(name: String, operation: VendorOperation, path: String)] = [
        ("area_codes_path", .areaCodes, IDaaSWire.areaCodesPath),
        ("captcha_path", .captcha, IDaaSWire.captchaPath),
        ("captcha_verify_path", .captchaVerify, IDaaSWire.captchaVerifyPath),
        ("sms_send_path", .smsSend, IDaaSWire.smsSendPath),
        ("sms_login_path", .smsLogin, IDaaSWire.smsLoginPath),
        ("refresh_path", .refresh, IDaaSWire.refreshPath),
        ("jwks_path", .jwks, IDaaSWire.jwksPath),
    ]

    static var headerSettings: [(String, WritableKeyPath<Headers, String>, String)] {
        [
            ("client_id_header", \.clientID, IDaaSWire.clientIDHeader),
            ("os_header", \.os, IDaaSWire.osHeader),
            ("fingerprint_header", \.fingerprint, IDaaSWire.fingerprintHeader),
            ("ip_header", \.ip, IDaaSWire.ipHeader),
            ("agent_header", \.agent, IDaaSWire.agentHeader),
            ("language_header", \.language, IDaaSWire.languageHeader),
            ("session_token_header", \.sessionToken, IDaaSWire.sessionTokenHeader),
        ]
    }

    static let defaultOSValue = "gateway/1.0"
    static let defaultAgentValue = "verification-gateway/1.0"

    static var settings: [SettingSpec] {
        func printable(
            _ name: String, _ summary: String, max: Int, required: Bool = false,
            reason: String = "must be printable ASCII"
        ) -> SettingSpec {
            .text(name, summary, required: required, check: { ASCIIText.isPrintable($0, max: max) }, reason: reason)
        }
        func seconds(_ name: String, _ summary: String) -> SettingSpec {
            .integer(name, summary, in: 0...86_400, reason: "must be a whole number of seconds from 0 to 86400")
        }
        let paths = pathSettings.map { name, _, value in
            SettingSpec.text(
                name, "Path of the call; default \(value).", required: false,
                check: { $0.hasPrefix("/") && ASCIIText.isPrintable($0, max: 300) },
                reason: "must be a path starting with /")
        }
        let headers = headerSettings.map { name, _, value in
            SettingSpec.text(
                name, "Header name; default \(value).", required: false, check: { ASCIIText.isToken($0, extra: "-_") },
                reason: "must be an HTTP header name")
        }
        return [
            .url("base_url", "The tenant's IDaaS domain, `https://{tenant}.bccastle.com`.", required: true),
            printable(
                "client_id", "The application's ClientId, sent as X-client-id; the ID tokens' `aud`.", max: 200,
                required: true, reason: "must be printable ASCII, at most 200 characters"),
        ] + paths + headers + [
            .text(
                "sms_type", "`type` of the SMS send; default LOGIN_SMS.", required: false,
                check: { ASCIIText.isToken($0, extra: "-_") }, reason: "must be letters, digits, - or _"),
            .text(
                "mobile_format",
                "How numbers are written: dashed (+86-138…, default), e164 (+86138…) or national (138…).",
                required: false, check: { MobileFormat(rawValue: $0) != nil },
                reason: "must be one of dashed, e164, national"),
            printable("default_os", "X-operating-sys-version when the client's user agent names no OS.", max: 100),
            printable("default_agent", "X-agent when the client context has no user agent.", max: 300),
            .choice("language", "X-L: zh or en (default en).", ["zh", "en"]),
            .text(
                "sms_language", "The language of the tenant's login SMS (default zh).", required: false,
                check: ASCIIText.isLanguageTag, reason: "must be a language tag such as zh or en"),
            seconds("area_codes_cache_seconds", "How long the tenant's area codes are cached (default 3600)."),
            .choice("area_codes_preload", "Read the area codes at startup (default true).", ["true", "false"]),
            seconds("jwks_cache_seconds", "How long the tenant's signing keys are cached (default 3600)."),
            printable("id_token_issuer", "The `iss` ID tokens must carry; unchecked when unset.", max: 300),
            .text(
                "default_regions", "Regions declared until the tenant's area codes are read (default CN,HK,MO,TW).",
                required: false, check: { regions($0) != nil },
                reason: "must be ISO 3166 alpha-2 codes separated by commas"),
            seconds("challenge_seconds", "How long the app has to solve the slider (default 120)."),
        ]
    }

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        try settings.validate()
        baseURL = settings.url("base_url", default: "")
        clientID = settings["client_id"] ?? ""
        paths = Dictionary(uniqueKeysWithValues: Self.pathSettings.map { ($0.operation, settings[$0.name] ?? $0.path) })
        var headers = Headers()
        for (name, key, _) in Self.headerSettings { if let header = settings[name] { headers[keyPath: key] = header } }
        self.headers = headers
        smsType = settings["sms_type"] ?? IDaaSWire.loginSMSType
        mobileFormat = settings.choice("mobile_format", default: .dashed)
        defaultOS = settings["default_os"] ?? Self.defaultOSValue
        defaultAgent = settings["default_agent"] ?? Self.defaultAgentValue
        defaultLanguage = settings["language"] ?? "en"
        smsLanguage = settings["sms_language"] ?? "zh"
        areaCodesTTL = settings.int("area_codes_cache_seconds").map(Double.init) ?? 3600
        preloadAreaCodes = settings["area_codes_preload"] != "false"
        jwksTTL = settings.int("jwks_cache_seconds").map(Double.init) ?? 3600
        idTokenIssuer = settings["id_token_issuer"]
        clockSkew = 60
        defaultRegions = settings["default_regions"].flatMap(Self.regions) ?? ["CN", "HK", "MO", "TW"]
        challengeLifetime = settings.int("challenge_seconds").map(Double.init) ?? 120
    }

    static func regions(_ value: String) -> Set<String>? {
        let codes = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }
        guard !codes.isEmpty,
            codes.allSatisfy({ $0.count == 2 && $0.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) } })
        else { return nil }
        return Set(codes)
    }
}
