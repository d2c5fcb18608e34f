import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayTwilio

@Suite("Twilio locale selection")
struct TwilioLocaleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var preferences: [String]
        var expected: String?
        var testDescription: String { "\(preferences) → \(expected ?? "omitted")" }
    }

    @Test(
        "the first supported preference wins: an exact tag, else its language",
        arguments: [
            Case(preferences: ["xx-YY", "pt-BR"], expected: "pt-BR"),
            Case(preferences: ["es-MX"], expected: "es"),
            Case(preferences: ["es-MX", "en-GB"], expected: "es"),
            Case(preferences: ["en-GB"], expected: "en-GB"),
            Case(preferences: ["en-US"], expected: "en"),
            Case(preferences: ["zh-HK"], expected: "zh-HK"),
            Case(preferences: ["zh-TW"], expected: "zh"),
            Case(preferences: ["pt-PT"], expected: "pt"),
            Case(preferences: ["PT_br"], expected: "pt-BR"),
            Case(preferences: [" fr-CA ", "de"], expected: "fr"),
            Case(preferences: ["xx", "yy-ZZ"], expected: nil),
            Case(preferences: ["", "sv-SE"], expected: "sv"),
            Case(preferences: [], expected: nil),
        ])
    func choose(_ testCase: Case) {
        #expect(TwilioLocale.choose(from: testCase.preferences) == testCase.expected)
    }

    @Test("every supported tag is chosen as itself")
    func everyTagChoosesItself() {
        for tag in TwilioLocale.supported { #expect(TwilioLocale.choose(from: [tag]) == tag) }
        #expect(Set(TwilioLocale.supported.map { $0.lowercased() }).count == TwilioLocale.supported.count)
    }

    @Test("the chosen Locale is sent to Twilio and reported as the content language")
    func sentAndReported() async throws {
        let harness = try TwilioHarness()
        let result = try await harness.provider.start(try TwilioHarness.smsStart(locales: ["xx-YY", "pt-BR"]))
        #expect(result.contentLanguage == "pt-BR")
        #expect(formFields(try #require(harness.recorder.requests.last).body)["Locale"] == "pt-BR")
    }

    @Test("without a supported preference the Locale parameter is omitted and no language is reported")
    func omitted() async throws {
        let harness = try TwilioHarness()
        let result = try await harness.provider.start(try TwilioHarness.smsStart(locales: ["xx-YY"]))
        #expect(result.contentLanguage == nil)
        #expect(formFields(try #require(harness.recorder.requests.last).body)["Locale"] == nil)
    }

    @Test("the sandbox writes every locale Twilio takes in that language, so the emulator sends what it reports")
    func sandboxCoversEveryLocale() {
        for locale in TwilioLocale.supported {
            let used = SandboxMessages.verificationCode("123456", language: locale).language
            let base = locale.lowercased().split(separator: "-").first.map(String.init)
            #expect(used == locale.lowercased() || used == base, "\(locale) is written in \(used)")
        }
    }
}
