/// The text of a code message in the sandbox, in the language asked for, so an emulator sends the
/// language the verification reports (docs/design.md §7). It covers every language a plugin may ask a vendor
/// for (the base languages of Twilio's supported locales, and Chinese in both scripts); anything else is
/// written in English, and the emulator records which language it used.
public enum SandboxMessages {
    /// The phrase per language tag, with `{code}` where the code goes.
    static let phrases: [String: String] = [
        "af": "Jou verifikasiekode is: {code}",
        "ar": "رمز التحقق الخاص بك هو: {code}",
        "ca": "El teu codi de verificació és: {code}",
        "cs": "Váš ověřovací kód je: {code}",
        "da": "Din bekræftelseskode er: {code}",
        "de": "Ihr Bestätigungscode lautet: {code}",
        "el": "Ο κωδικός επαλήθευσής σας είναι: {code}",
        "en": "Your verification code is: {code}",
        "es": "Tu código de verificación es: {code}",
        "et": "Teie kinnituskood on: {code}",
        "fi": "Vahvistuskoodisi on: {code}",
        "fr": "Votre code de vérification est : {code}",
        "he": "קוד האימות שלך הוא: {code}",
        "hi": "आपका सत्यापन कोड है: {code}",
        "hr": "Vaš kod za potvrdu je: {code}",
        "hu": "Az ellenőrző kódod: {code}",
        "id": "Kode verifikasi Anda adalah: {code}",
        "it": "Il tuo codice di verifica è: {code}",
        "ja": "認証コードは {code} です",
        "kn": "ನಿಮ್ಮ ಪರಿಶೀಲನಾ ಕೋಡ್: {code}",
        "ko": "인증 코드는 {code}입니다",
        "lt": "Jūsų patvirtinimo kodas: {code}",
        "mr": "तुमचा पडताळणी कोड आहे: {code}",
        "ms": "Kod pengesahan anda ialah: {code}",
        "nb": "Bekreftelseskoden din er: {code}",
        "nl": "Je verificatiecode is: {code}",
        "pl": "Twój kod weryfikacyjny to: {code}",
        "pt": "O seu código de verificação é: {code}",
        "pt-br": "Seu código de verificação é: {code}",
        "ro": "Codul tău de verificare este: {code}",
        "ru": "Ваш код подтверждения: {code}",
        "sk": "Váš overovací kód je: {code}",
        "sv": "Din verifieringskod är: {code}",
        "te": "మీ ధృవీకరణ కోడ్: {code}",
        "th": "รหัสยืนยันของคุณคือ: {code}",
        "tl": "Ang iyong verification code ay: {code}",
        "tr": "Doğrulama kodunuz: {code}",
        "uk": "Ваш код підтвердження: {code}",
        "vi": "Mã xác minh của bạn là: {code}",
        "zh": "您的验证码是：{code}",
        "zh-hk": "您的驗證碼是：{code}",
        "zh-tw": "您的驗證碼是：{code}",
    ]

    /// The languages the sandbox writes, as lowercase tags.
    public static var languages: Set<String> { Set(phrases.keys) }

    /// The message for `code` in `language` (an IETF tag such as `es-ES` or `pt-BR`): the exact tag when
    /// the table has it, else its base language, else English. Returns the text and the tag it used.
    public static func verificationCode(_ code: String, language: String?) -> (text: String, language: String) {
        // Tags arrive as `en`, `es-ES`, `pt_BR`: lowercased with `-` by bytes, not by Foundation's string
        // search, which showed in a start's profile (BENCHMARKS.md).
        var tag = "en"
        if let language {
            var bytes = Array(language.utf8)
            for index in bytes.indices {
                if bytes[index] == UInt8(ascii: "_") {
                    bytes[index] = UInt8(ascii: "-")
                } else if (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[index]) {
                    bytes[index] += 32
                }
            }
            tag = String(decoding: bytes, as: UTF8.self)
        }
        let base = tag.split(separator: "-").first.map(String.init) ?? "en"
        let used = split[tag] != nil ? tag : split[base] != nil ? base : "en"
        let (before, after) = split[used] ?? ("Your verification code is: ", "")
        return (before + code + after, used)
    }

    /// Each phrase split around `{code}`, once.
    private static let split: [String: (String, String)] = phrases.mapValues { phrase in
        guard let range = phrase.range(of: "{code}") else { return (phrase, "") }
        return (String(phrase[..<range.lowerBound]), String(phrase[range.upperBound...]))
    }
}
