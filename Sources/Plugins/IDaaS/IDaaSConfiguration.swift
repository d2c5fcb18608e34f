import Foundation
import GatewayCore

/// The validated settings of one IDaaS provider. Every path, header name and value docs/vendors/idaas.md marks
/// uncertain
/// is a setting whose default is the documented bccastle CIAM value (docs/vendors/idaas.md §4, §5).
struct IDaaSConfiguration: Sendable, Equatable {
    var baseURL: String
    var clientID: String
    var paths: Paths
    var headers: Headers
    var smsType: String
    var mobileFormat: MobileFormat
    /// `X-operating-sys-version` when the client context's user agent names no OS.
    var defaultOS: String
    /// `X-agent` when the client context has no user agent.
    var defaultAgent: String
    /// `X-L`: `zh` or `en` (only `error_msg` is localized, docs/vendors/idaas.md §1).
    var defaultLanguage: String
    /// The language of the tenant's login SMS template, reported as `content_language` (the SMS is
    /// Chinese, [BC-IOS]; `X-L` does not change it).
    var smsLanguage: String
    var areaCodesTTL: TimeInterval
    var preloadAreaCodes: Bool
    var jwksTTL: TimeInterval
    /// Checked against the ID token's `iss` when set.
    var idTokenIssuer: String?
    var clockSkew: TimeInterval
    /// The regions declared until the tenant's area codes are read (bccastle tenants are China-centric,
    /// docs/vendors/idaas.md §2.6), so routing never hands a provider with a cold cache a number it cannot serve.
    var defaultRegions: Set<String>
    /// How long the app has to solve a slider (our choice: docs/vendors/idaas.md documents no lifetime).
    var challengeLifetime: TimeInterval

    struct Paths: Sendable, Equatable {
        var areaCodes = IDaaSWire.areaCodesPath
        var captcha = IDaaSWire.captchaPath
        var captchaVerify = IDaaSWire.captchaVerifyPath
        var smsSend = IDaaSWire.smsSendPath
        var smsLogin = IDaaSWire.smsLoginPath
        var refresh = IDaaSWire.refreshPath
        var jwks = IDaaSWire.jwksPath
    }

    struct Headers: Sendable, Equatable {
        var clientID = IDaaSWire.clientIDHeader
        var os = IDaaSWire.osHeader
        var fingerprint = IDaaSWire.fingerprintHeader
        var ip = IDaaSWire.ipHeader
        var agent = IDaaSWire.agentHeader
        var language = IDaaSWire.languageHeader
        var sessionToken = IDaaSWire.sessionTokenHeader
    }

    /// How `mobile` is written (docs/vendors/idaas.md §2.3, §5: the international form is ASSUMED).
    enum MobileFormat: String, Sendable, Equatable, CaseIterable {
        /// `+86-13800138000`, the `mobileRegex` form (default).
        case dashed
        /// `+8613800138000`.
        case e164
        /// `13800138000`, as OneAccess (China only) documents.
        case national

        func write(_ number: PhoneNumber) -> String {
            switch self {
            case .dashed: return number.dashedE164
            case .e164: return number.e164
            case .national: return number.nationalNumber
            }
        }
    }

    static var pathSettings: [(String, WritableKeyPath<Paths, String>, String)] {
        [
            ("area_codes_path", \.areaCodes, IDaaSWire.areaCodesPath),
            ("captcha_path", \.captcha, IDaaSWire.captchaPath),
            ("captcha_verify_path", \.captchaVerify, IDaaSWire.captchaVerifyPath),
            ("sms_send_path", \.smsSend, IDaaSWire.smsSendPath),
            ("sms_login_path", \.smsLogin, IDaaSWire.smsLoginPath),
            ("refresh_path", \.refresh, IDaaSWire.refreshPath),
            ("jwks_path", \.jwks, IDaaSWire.jwksPath),
        ]
    }

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
        func printable(_ max: Int) -> @Sendable (String) -> Bool { { isPrintable($0, max: max) } }
        let seconds = "must be a whole number of seconds from 0 to 86400"
        var specs: [SettingSpec] = [
            .url("base_url", "The tenant's IDaaS domain, `https://{tenant}.bccastle.com`.", required: true),
            .text(
                "client_id", "The application's ClientId, sent as X-client-id; the ID tokens' `aud`.",
                check: printable(200), reason: "must be printable ASCII, at most 200 characters"),
        ]
        specs += pathSettings.map { name, _, value in
            SettingSpec.text(
                name, "Path of the call; default \(value).", required: false,
                check: { $0.hasPrefix("/") && isPrintable($0, max: 300) }, reason: "must be a path starting with /")
        }
        specs += headerSettings.map { name, _, value in
            SettingSpec.text(
                name, "Header name; default \(value).", required: false, check: isToken,
                reason: "must be an HTTP header name")
        }
        return specs
            + [
                .text(
                    "sms_type", "`type` of the SMS send; default LOGIN_SMS.", required: false, check: isToken,
                    reason: "must be letters, digits, - or _"),
                .text(
                    "mobile_format",
                    "How numbers are written: dashed (+86-138…, default), e164 (+86138…) or national (138…).",
                    required: false, check: { MobileFormat(rawValue: $0) != nil },
                    reason: "must be one of dashed, e164, national"),
                .text(
                    "default_os", "X-operating-sys-version when the client's user agent names no OS.", required: false,
                    check: printable(100), reason: "must be printable ASCII"),
                .text(
                    "default_agent", "X-agent when the client context has no user agent.", required: false,
                    check: printable(300), reason: "must be printable ASCII"),
                .choice("language", "X-L: zh or en (default en).", ["zh", "en"]),
                .text(
                    "sms_language", "The language of the tenant's login SMS (default zh).", required: false,
                    check: isLanguageTag, reason: "must be a language tag such as zh or en"),
                .integer(
                    "area_codes_cache_seconds", "How long the tenant's area codes are cached (default 3600).",
                    in: 0...86_400, reason: seconds),
                .choice("area_codes_preload", "Read the area codes at startup (default true).", ["true", "false"]),
                .integer(
                    "jwks_cache_seconds", "How long the tenant's signing keys are cached (default 3600).",
                    in: 0...86_400, reason: seconds),
                .text(
                    "id_token_issuer", "The `iss` ID tokens must carry; unchecked when unset.", required: false,
                    check: printable(300), reason: "must be printable ASCII"),
                .text(
                    "default_regions",
                    "Regions declared until the tenant's area codes are read (default CN,HK,MO,TW).", required: false,
                    check: { regions($0) != nil }, reason: "must be ISO 3166 alpha-2 codes separated by commas"),
                .integer(
                    "challenge_seconds", "How long the app has to solve the slider (default 120).", in: 0...86_400,
                    reason: seconds),
            ]
    }

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        try settings.validate()
        baseURL = settings.url("base_url", default: "")
        clientID = settings["client_id"] ?? ""
        var paths = Paths()
        for (name, key, _) in Self.pathSettings { if let path = settings[name] { paths[keyPath: key] = path } }
        self.paths = paths
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

    /// `zh`, `en`, `zh-Hans`: a 2-3 letter language with optional subtags.
    static func isLanguageTag(_ value: String) -> Bool {
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return false }
        return parts.dropFirst().allSatisfy { part in
            (1...8).contains(part.count) && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }

    static func regions(_ value: String) -> Set<String>? {
        let codes = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }
        guard !codes.isEmpty,
            codes.allSatisfy({ $0.count == 2 && $0.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) } })
        else { return nil }
        return Set(codes)
    }

    static func isPrintable(_ value: String, max: Int) -> Bool {
        value.count <= max && value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
    }

    static func isToken(_ value: String) -> Bool {
        (1...64).contains(value.count)
            && value.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                    || $0 == "_"
            }
    }
}
