import GatewayCore
import Testing

@Suite struct MessageTemplateTests {
    @Test func rendersPlaceholders() throws {
        let template = try MessageTemplate("{app}: {code} ({minutes} min)")
        #expect(template.render(code: "123456", app: "Acme", minutes: 10) == "Acme: 123456 (10 min)")
    }

    @Test func rendersRepeatsAndEdgesAndNeverRendersAValueAgain() throws {
        let template = try MessageTemplate("{code} is your code; {code} again, for {minutes}m. — {app}")
        #expect(
            template.render(code: "12 34", app: "Acme {code}", minutes: 5)
                == "12 34 is your code; 12 34 again, for 5m. — Acme {code}")
        #expect(try MessageTemplate("{code}").render(code: "9", app: "", minutes: 1) == "9")
    }

    @Test func refusesWhatCannotRender() {
        #expect(throws: MessageTemplateError(problems: ["no `{code}` placeholder"])) { try MessageTemplate("Hi {app}") }
        #expect(
            throws: MessageTemplateError(problems: ["unknown placeholder `{name}` (known: {code}, {app}, {minutes})"])
        ) {
            try MessageTemplate("{name}: {code}")
        }
        #expect(throws: MessageTemplateError(problems: ["a `}` that is not part of a placeholder"])) {
            try MessageTemplate("{code} }")
        }
        #expect(throws: MessageTemplateError(problems: ["the template is empty"])) { try MessageTemplate("  ") }
    }
}

@Suite struct MessageAutofillTests {
    @Test func originBoundLineIsLast() throws {
        let autofill = try MessageAutofill(originBoundHost: "example.com")
        let text = autofill.apply(to: "Your code is 123456.", code: "123456")
        #expect(text == "Your code is 123456.\n\n@example.com #123456")
    }

    @Test func appHashComesBeforeTheOriginBoundLine() throws {
        let both = try MessageAutofill(originBoundHost: "example.com", androidAppHash: "FA+9qCX9VSu")
        #expect(both.apply(to: "Code 123456", code: "123456") == "Code 123456\n\nFA+9qCX9VSu\n@example.com #123456")
        let hashOnly = try MessageAutofill(androidAppHash: "FA+9qCX9VSu")
        #expect(hashOnly.apply(to: "Code 123456", code: "123456") == "Code 123456\n\nFA+9qCX9VSu")
        #expect(MessageAutofill.none.apply(to: "Code 123456", code: "123456") == "Code 123456")
    }

    @Test(arguments: [
        "https://example.com", "example.com:443", "Example.com", "localhost", "exa_mple.com", "example.com.",
        "-example.com", "example.com/login", "192.168.0.1", "",
    ])
    func refusesBadHosts(_ host: String) {
        #expect(throws: MessageTemplateError.self) { try MessageAutofill(originBoundHost: host) }
    }

    @Test(arguments: ["FA+9qCX9VS", "FA+9qCX9VSuu", "FA+9qCX9VS-", "FA+9qCX9VS="])
    func refusesBadAppHashes(_ hash: String) {
        #expect(throws: MessageTemplateError.self) { try MessageAutofill(androidAppHash: hash) }
    }

    @Test func acceptsGoodHostsAndHashes() throws {
        _ = try MessageAutofill(originBoundHost: "login.example.co.uk", androidAppHash: "Ab0+/9zZq1x")
        _ = try MessageAutofill(originBoundHost: "xn--bcher-kva.example")
    }
}

@Suite struct MessageCatalogTests {
    /// Every shipped template, with a six-digit code, a 12-character app name and a 16-character origin-bound
    /// host, takes one segment.
    @Test(arguments: MessageCatalog.shippedTemplates.keys.sorted())
    func shippedTemplatesFitOneSegment(_ locale: String) throws {
        let catalog = MessageCatalog(
            app: "Acme Example", autofill: try MessageAutofill(originBoundHost: "auth.example.com"))
        let message = catalog.render(code: "123456", locales: [locale], minutes: 10)
        #expect(message.locale == locale)
        #expect(message.measurement.segments == 1, "\(locale): \(message.measurement)")
        #expect(message.text.hasSuffix("\n@auth.example.com #123456"))
        #expect(message.text.contains("Acme Example"))
    }

    @Test func shipsThirteenLanguages() {
        #expect(
            Set(MessageCatalog.shippedTemplates.keys) == [
                "en", "es", "fr", "de", "pt", "it", "nl", "zh", "ja", "ar", "hi", "id", "tr",
            ])
        #expect(MessageCatalog(app: "Acme").problems(format: .init(length: 10), minutes: 10) == [])
    }

    @Test func localesPickATemplate() throws {
        let catalog = MessageCatalog(app: "Acme", overrides: ["pt-BR": try MessageTemplate("Seu código {code}")])
        #expect(catalog.locale(for: ["pt-BR", "en"]) == "pt-BR")
        #expect(catalog.locale(for: ["pt-PT"]) == "pt")
        #expect(catalog.locale(for: ["es-MX"]) == "es")
        #expect(catalog.locale(for: ["xx", "sw"]) == "en")
        #expect(catalog.locale(for: []) == "en")
        #expect(catalog.render(code: "123456", locales: ["pt-BR"], minutes: 5).text == "Seu código 123456")
    }

    @Test func overlongRenderingsAreProblems() throws {
        let long = try MessageTemplate(String(repeating: "Your code for Acme is here. ", count: 6) + "{code}")
        let catalog = MessageCatalog(
            app: "Acme", overrides: ["en": long], autofill: try MessageAutofill(androidAppHash: "FA+9qCX9VSu"))
        #expect(catalog.maxSegments == 1)
        #expect(
            catalog.problems(format: .standard, minutes: 10) == [
                "the `en` message takes 2 segments (187 GSM-7 septets), more than max_segments 1"
            ])
        #expect(MessageCatalog(app: "Acme", overrides: ["en": long]).maxSegments == 2)
    }
}

@Suite struct SenderTableTests {
    @Test func parsesEachKindOfSender() throws {
        #expect(try SenderAddress(parsing: "+14155550100") == .number("+14155550100"))
        #expect(try SenderAddress(parsing: "72345") == .shortCode("72345"))
        #expect(try SenderAddress(parsing: "Acme Inc") == .alphanumeric("Acme Inc"))
        let service = "MG" + String(repeating: "0a", count: 16)
        #expect(try SenderAddress(parsing: service) == .messagingService(service))
    }

    @Test(arguments: ["+0123456789", "+12", "Acme Example Corp", "12", "123456789", "Acme!", "", " Acme"])
    func refusesMalformedSenders(_ text: String) {
        #expect(throws: MessageTemplateError.self) { try SenderAddress(parsing: text) }
    }

    @Test func alphanumericSendersAreRefusedWhereCarriersRefuseThem() throws {
        #expect(throws: MessageTemplateError.self) {
            try SenderTable(fallback: nil, byCountry: ["US": .alphanumeric("Acme")])
        }
        let table = try SenderTable(
            fallback: .alphanumeric("Acme"), byCountry: ["US": .number("+14155550100"), "DE": .alphanumeric("AcmeDE")])
        #expect(table.sender(for: "US") == .number("+14155550100"))
        #expect(table.sender(for: "CA") == nil)
        #expect(table.sender(for: "FR") == .alphanumeric("Acme"))
        #expect(table.sender(for: "DE") == .alphanumeric("AcmeDE"))
        #expect(table.excludedRegions == ["CA"])
        #expect(table.servedRegions == nil)
        let onlyGB = try SenderTable(fallback: nil, byCountry: ["GB": .alphanumeric("Acme")])
        #expect(onlyGB.servedRegions == ["GB"])
        #expect(throws: MessageTemplateError.self) { try SenderTable(fallback: nil) }
    }
}
