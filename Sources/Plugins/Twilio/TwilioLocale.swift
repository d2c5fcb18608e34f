import GatewayCore

/// The `Locale` of a start: the first of the caller's languages Verify supports, else none (Twilio answers an
/// unsupported `Locale` with an error and otherwise derives the language from the destination's country).
enum TwilioLocale {
    /// The tags Verify accepts as `Locale`, as Twilio spells them: https://twilio.com/docs/verify/supported-languages
    /// ("Verify Default template"; `en-GB` and `zh-CN` from https://twilio.com/docs/authy/supported-languages).
    static let supported: [String] = [
        "af", "ar", "ca", "zh", "zh-CN", "zh-HK", "hr", "cs", "da", "nl", "en", "en-GB", "et", "fi", "fr", "de",
        "el", "he", "hi", "hu", "id", "it", "ja", "kn", "ko", "lt", "ms", "mr", "nb", "pl", "pt-BR", "pt", "ro",
        "ru", "sk", "es", "sv", "tl", "te", "th", "tr", "uk", "vi",
    ]

    static func choose(from preferences: [String]) -> String? { LanguageTags.firstMatch(preferences, in: supported) }
}
