import GatewayCore

/// The emulator's language negotiation (docs/vendors/sinch.md §2.3): a table of the template languages it has per
/// country, the start's `Accept-Language` matched against it, and `en-US` when nothing matches (Sinch's
/// documented fallback). The United States list holds only `en-US`, as carrier rules for short codes
/// override the language asked for there: the answer's `Content-Language` then differs from the request,
/// as it can at Sinch.
enum SinchLanguages {
    static let fallback = "en-US"

    // swift-format-ignore
    static let byCountry: [String: [String]] = [
        "SE": ["sv-SE"], "NO": ["nb-NO"], "DK": ["da-DK"], "FI": ["fi-FI", "sv-FI"], "DE": ["de-DE"],
        "AT": ["de-AT", "de-DE"], "CH": ["de-CH", "fr-CH", "it-CH"], "FR": ["fr-FR"], "BE": ["nl-BE", "fr-BE"],
        "NL": ["nl-NL"], "ES": ["es-ES", "ca-ES"], "PT": ["pt-PT"], "BR": ["pt-BR"], "MX": ["es-MX"],
        "AR": ["es-AR"], "US": ["en-US"], "CA": ["en-CA", "fr-CA"], "GB": ["en-GB"], "IE": ["en-GB"],
        "IT": ["it-IT"], "PL": ["pl-PL"], "CZ": ["cs-CZ"], "RU": ["ru-RU"], "UA": ["uk-UA"], "TR": ["tr-TR"],
        "JP": ["ja-JP"], "KR": ["ko-KR"], "CN": ["zh-CN"], "HK": ["zh-HK", "en-GB"], "TW": ["zh-TW"],
        "IN": ["hi-IN", "en-IN"], "ID": ["id-ID"], "TH": ["th-TH"], "VN": ["vi-VN"], "AU": ["en-AU"],
    ]

    /// The languages a number in `country` can get: the country's templates, then `en-US`.
    static func available(in country: String?) -> [String] {
        let local = country.flatMap { byCountry[$0.uppercased()] } ?? []
        return local.contains(fallback) ? local : local + [fallback]
    }

    /// The first requested tag the country has, exactly or by its base language (`es` takes `es-ES` in
    /// Spain); `en-US` when none.
    static func negotiate(requested: [String], country: String?) -> String {
        LanguageTags.firstMatch(requested, in: available(in: country)) ?? fallback
    }
}
