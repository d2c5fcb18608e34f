/// The messages the gateway sends its own codes in: a template per locale, the app's name, autofill, and the
/// most segments a rendering may take.
public struct MessageCatalog: Sendable {
    /// The templates shipped with the gateway, by language tag; each renders in one segment with a six-digit code,
    /// an app name of up to 12 characters and an origin-bound line for a host of up to 16 characters.
    public static let shippedTemplates: [String: String] = [
        "en": "Your {app} code is {code}. It expires in {minutes} minutes.",
        "es": "{app}: tu clave de acceso es {code}. Vence en {minutes} min.",
        "fr": "Votre code {app} : {code}. Valable {minutes} min.",
        "de": "Ihr {app}-Code lautet {code}. Gültig für {minutes} Min.",
        "pt": "Use {code} para confirmar no {app}. Vale por {minutes} min.",
        "it": "Il tuo codice {app} è {code}. Scade tra {minutes} min.",
        "nl": "Je {app}-code is {code}. Geldig voor {minutes} min.",
        "zh": "{app}验证码：{code}，{minutes}分钟内有效。",
        "ja": "{app}の認証コード：{code}（{minutes}分間有効）",
        "ar": "رمز {app}: {code}. صالح {minutes} دقائق.",
        "hi": "{app} कोड: {code}. {minutes} मिनट तक मान्य।",
        "id": "Kode {app} Anda: {code}. Berlaku {minutes} menit.",
        "tr": "{app} kodu: {code}. {minutes} dk geçerli.",
    ]

    /// The language a start gets when none of its locales has a template.
    public static let fallbackLocale = "en"

    /// Templates by language tag (`en`, `pt-BR`); the shipped ones unless the configuration replaces them.
    public var templates: [String: MessageTemplate]
    /// What `{app}` stands for.
    public var app: String
    /// The autofill lines added to every message.
    public var autofill: MessageAutofill
    /// The most segments one rendering may take: by default 1 with an Android app hash (SMS Retriever reads
    /// 140 bytes), else 2.
    public var maxSegments: Int

    /// A catalog of the shipped templates with `overrides` laid over them (a configured locale replaces the
    /// shipped one).
    public init(
        app: String, overrides: [String: MessageTemplate] = [:], autofill: MessageAutofill = .none,
        maxSegments: Int? = nil
    ) {
        var templates = Self.shipped
        for (locale, template) in overrides { templates[locale] = template }
        self.templates = templates
        self.app = app
        self.autofill = autofill
        self.maxSegments = maxSegments ?? (autofill.androidAppHash == nil ? 2 : 1)
    }

    private static let shipped: [String: MessageTemplate] = shippedTemplates.compactMapValues {
        try? MessageTemplate($0)
    }

    /// The locale of `locales` (most preferred first) with a template, else ``fallbackLocale``, else the first
    /// configured locale in order.
    public func locale(for locales: [String]) -> String {
        let available = templates.keys.sorted()
        return LanguageTags.firstMatch(locales, in: available)
            ?? (templates[Self.fallbackLocale] != nil ? Self.fallbackLocale : available.first ?? Self.fallbackLocale)
    }

    /// The message for `code` in the best of `locales`, with autofill, and what it costs on the air.
    public func render(code: String, locales: [String], minutes: Int) -> RenderedMessage {
        let locale = locale(for: locales)
        let body = templates[locale]?.render(code: code, app: app, minutes: minutes) ?? code
        let text = autofill.apply(to: body, code: code)
        return RenderedMessage(text: text, locale: locale, measurement: SMSMeasurement(measuring: text))
    }

    /// The segments of a start's message in the default language (``locale(for:)`` of no locales) with the
    /// longest code of `format`: what adaptive routing prices a start at.
    public func segments(format: OwnCodeFormat, minutes: Int) -> Int {
        render(code: Self.widest(format), locales: [], minutes: minutes).measurement.segments
    }

    /// The code of `format` that takes the most room: its length of the alphabet's last character.
    static func widest(_ format: OwnCodeFormat) -> String {
        String(repeating: format.alphabet.characters.last ?? "9", count: format.length)
    }

    /// Every locale whose rendering with the longest code of `format` takes more than ``maxSegments``, as one
    /// sentence each, sorted by locale.
    public func problems(format: OwnCodeFormat, minutes: Int) -> [String] {
        let widest = Self.widest(format)
        return templates.keys.sorted().compactMap { locale in
            let measurement = render(code: widest, locales: [locale], minutes: minutes).measurement
            guard measurement.segments > maxSegments else { return nil }
            return "the `\(locale)` message takes \(measurement.segments) segments "
                + "(\(measurement.units) \(measurement.encoding == .gsm7 ? "GSM-7 septets" : "UCS-2 units")), "
                + "more than max_segments \(maxSegments)"
        }
    }
}

/// One message ready to send.
public struct RenderedMessage: Sendable, Hashable {
    /// The text as it goes to the vendor.
    public var text: String
    /// The template's language tag.
    public var locale: String
    /// Its encoding, length and segments.
    public var measurement: SMSMeasurement
}
