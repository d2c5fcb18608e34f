import Foundation

/// Chooses the `Locale` of a start from the caller's ordered language preferences.
///
/// Twilio answers an unsupported `Locale` with an error (404 per its docs), so the provider only ever
/// sends a tag from ``supported`` and otherwise omits the parameter, letting Twilio derive the language
/// from the destination's country code.
enum TwilioLocale {
    /// The language tags Verify accepts as `Locale`, spelled as Twilio spells them.
    ///
    /// Source: https://twilio.com/docs/verify/supported-languages (the "Verify Default template"
    /// table: `en` is American English; `pt`, `pt-BR`, `zh-HK` and others are listed by tag). The
    /// stored copy of that page available while writing this only exposed its introduction, so the
    /// table itself was confirmed from a public copy that cites the page's `#verify-default-template`
    /// anchor, and `en-GB` / `zh-CN` from Twilio's sibling page
    /// https://twilio.com/docs/authy/supported-languages, which uses the same tag set for the same
    /// templates. Re-check against the page when Twilio adds languages.
    static let supported: [String] = [
        "af", "ar", "ca", "zh", "zh-CN", "zh-HK", "hr", "cs", "da", "nl", "en", "en-GB", "et", "fi", "fr", "de",
        "el", "he", "hi", "hu", "id", "it", "ja", "kn", "ko", "lt", "ms", "mr", "nb", "pl", "pt-BR", "pt", "ro",
        "ru", "sk", "es", "sv", "tl", "te", "th", "tr", "uk", "vi",
    ]

    /// Lower-cased tag to Twilio's spelling.
    private static let byLowercasedTag: [String: String] = Dictionary(
        uniqueKeysWithValues: supported.map { ($0.lowercased(), $0) })

    /// The first preference Twilio supports: the exact tag (`pt-BR`), else its language subtag (`es` for
    /// `es-MX`). Comparison ignores case and accepts `_` for `-`. `nil` when nothing matches.
    static func choose(from preferences: [String]) -> String? {
        for preference in preferences {
            let tag = preference.trimmingCharacters(in: .whitespaces)
                .replacingOccurrences(of: "_", with: "-").lowercased()
            guard !tag.isEmpty else { continue }
            if let exact = byLowercasedTag[tag] { return exact }
            if let language = tag.split(separator: "-").first, let match = byLowercasedTag[String(language)] {
                return match
            }
        }
        return nil
    }
}
