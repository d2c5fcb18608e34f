import Foundation
import Testing

@testable import GatewayCore

@Suite("SandboxMessages")
struct SandboxMessagesTests {
    @Test(
        "the exact tag, else its base language, else English; case and underscores do not matter",
        arguments: [
            ("pt_BR", "pt-br", "Seu código de verificação é: 123456"),
            ("PT-br", "pt-br", "Seu código de verificação é: 123456"),
            ("es-ES", "es", "Tu código de verificación es: 123456"),
            ("zh-HK", "zh-hk", "您的驗證碼是：123456"),
            ("ja", "ja", "認証コードは 123456 です"),
            ("xx-YY", "en", "Your verification code is: 123456"),
            ("", "en", "Your verification code is: 123456"),
            ("É", "en", "Your verification code is: 123456"),
        ])
    func chooses(_ asked: String, _ used: String, _ text: String) {
        let message = SandboxMessages.verificationCode("123456", language: asked)
        #expect(message.language == used)
        #expect(message.text == text)
    }

    @Test("no language is English")
    func none() {
        #expect(SandboxMessages.verificationCode("0042", language: nil) == ("Your verification code is: 0042", "en"))
    }

    @Test("every phrase carries the code exactly once, where its {code} was")
    func everyPhrase() {
        for (tag, phrase) in SandboxMessages.phrases {
            let message = SandboxMessages.verificationCode("987654", language: tag)
            #expect(message.language == tag)
            #expect(message.text == phrase.replacingOccurrences(of: "{code}", with: "987654"))
        }
    }
}
