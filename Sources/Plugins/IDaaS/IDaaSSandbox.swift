/// The fixed, public values of the IDaaS sandbox (``IDaaSEmulator``): test values, documented on purpose so
/// that a newcomer can point `curl` or a script at the sandbox. They never work against a real tenant.
public enum IDaaSSandbox {
    /// The application ClientId the emulator accepts as `X-client-id`; the `aud` of its ID tokens.
    public static let clientID = "sandbox-idaas-client-0001"
    /// The `iss` of the emulator's ID tokens.
    public static let issuer = "https://sandbox.idaas.invalid"
    /// Numbers whose right code answers a login `status` other than `SUCCESS` (docs/vendors/idaas.md §2.4), so every
    /// outcome of a check can be tried.
    public static let statuses: [String: String] = [
        "+8613900000001": "MFA_AUTH",
        "+8613900000002": "PASSWORD_EXPIRED",
        "+8613900000003": "ACCESS_DENIED",
        "+8613900000004": "PASSWORD_WARN",
    ]
    /// A number whose SMS the emulator fails to send (`IDAAS.SDK.CAPTCHA.0006`).
    public static let undeliverable = "+8613900000009"

    /// The tenant's preferred area code (docs/vendors/idaas.md §2.6: `preferredAreaCode`, a country code as in the
    /// documented example).
    static let preferredAreaCode = "CN"

    /// The tenant's area codes (docs/vendors/idaas.md §2.6): Greater China as the documented example, plus Singapore.
    static let areaCodes: [IDaaSWire.AreaCode] = [
        .init(
            areaCode: "86", displayMapping: ["zh-CN": "中国大陆", "zh-TW": "中國大陸", "en": "China"], countryCode: "CN",
            mobileRegex: #"^(\+86){0,1}\-?1\d{10}$"#, areaCodeSuffixes: []),
        .init(
            areaCode: "852", displayMapping: ["zh-CN": "中国香港", "zh-TW": "中國香港", "en": "Hong Kong"],
            countryCode: "HK", mobileRegex: #"^(\+852){1}\-?[4-9]\d{7}$"#, areaCodeSuffixes: []),
        .init(
            areaCode: "853", displayMapping: ["zh-CN": "中国澳门", "zh-TW": "中國澳門", "en": "Macao"],
            countryCode: "MO", mobileRegex: #"^(\+853){1}\-?6\d{7}$"#, areaCodeSuffixes: []),
        .init(
            areaCode: "886", displayMapping: ["zh-CN": "中国台湾", "zh-TW": "中國臺灣", "en": "Taiwan"],
            countryCode: "TW", mobileRegex: #"^(\+886){1}\-?0?9\d{8}$"#, areaCodeSuffixes: []),
        .init(
            areaCode: "65", displayMapping: ["zh-CN": "新加坡", "zh-TW": "新加坡", "en": "Singapore"],
            countryCode: "SG", mobileRegex: #"^(\+65){1}\-?[89]\d{7}$"#, areaCodeSuffixes: []),
    ]
}
