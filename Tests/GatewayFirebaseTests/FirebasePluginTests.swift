import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayFirebase

@Suite("Firebase plugin and settings")
struct FirebasePluginTests {
    static let valid: [String: String] = ["api_key": "AIzaSyExample", "project_id": "my-project-123"]

    static func context(_ settings: [String: String]) -> ProviderContext {
        ProviderContext(
            providerID: "fb", settings: settings, transport: StubTransport.json("{}"), clock: ManualClock(),
            logger: .quiet)
    }

    static func problems(_ settings: [String: String]) -> [String] {
        do {
            _ = try FirebasePlugin.plugin.makeProvider(context(settings))
            return []
        } catch {
            return error.problems
        }
    }

    @Test("the plugin is `firebase`, takes a secret API key and a project, and declares Firebase's capabilities")
    func identity() throws {
        let plugin = FirebasePlugin.plugin
        #expect(plugin.id == "firebase")
        #expect(
            plugin.settings.map(\.name)
                == ["api_key", "project_id", "base_url", "test_numbers", "resend_after_seconds", "ios_bundle_id"])
        #expect(plugin.settings.filter(\.isSecret).map(\.name) == ["api_key"])
        #expect(plugin.settings.filter(\.isRequired).map(\.name) == ["api_key", "project_id"])

        let provider = try plugin.makeProvider(Self.context(Self.valid))
        #expect(provider.id == "fb")
        let capabilities = provider.capabilities
        #expect(capabilities.channels == [.sms])
        #expect(capabilities.requiresAppVerification)
        #expect(
            capabilities.appVerificationKinds == [.recaptcha, .recaptchaEnterprise, .iosReceipt, .playIntegrity])
        #expect(capabilities.multiFactorKinds == [.signIn, .enroll])
        #expect(capabilities.issuesTokens)
        #expect(!capabilities.resendKeepsCode)
        #expect(provider.operations == [.resend])
        #expect(!capabilities.resendCanChangeChannel)
    }

    @Test("sandbox settings point at the emulator's production-host prefix and are themselves valid")
    func sandboxSettings() throws {
        for base in ["http://127.0.0.1:8080/sandbox/firebase", "http://127.0.0.1:8080/sandbox/firebase/"] {
            let settings = FirebasePlugin.plugin.sandboxSettings(try #require(URL(string: base)))
            #expect(settings["base_url"] == "http://127.0.0.1:8080/sandbox/firebase/identitytoolkit.googleapis.com")
            #expect(settings["api_key"] == FirebaseSandbox.apiKey)
            #expect(settings["project_id"] == FirebaseSandbox.projectID)
            #expect(settings["test_numbers"] == "+16505550100=123456")
            #expect(FirebasePlugin.plugin.problems(in: settings, providerID: "firebase").isEmpty)
            #expect(Self.problems(settings).isEmpty)
        }
    }

    @Test("missing settings are all reported at once")
    func missingSettings() {
        let problems = Self.problems([:])
        #expect(problems == ["provider fb: missing setting `api_key`", "provider fb: missing setting `project_id`"])
    }

    @Test(
        "bad values are reported with the setting's name",
        arguments: [
            ("project_id", "My_Project"), ("project_id", "short"), ("project_id", "ends-with-"),
            ("base_url", "ftp://example.com"), ("base_url", "not a url"), ("api_key", "has space"),
            ("resend_after_seconds", "abc"), ("resend_after_seconds", "-1"), ("resend_after_seconds", "3601"),
            ("ios_bundle_id", "com.example/app"), ("test_numbers", "+15555550100"),
        ])
    func badValues(_ name: String, _ value: String) {
        var settings = Self.valid
        settings[name] = value
        let problems = Self.problems(settings)
        #expect(problems.count == 1)
        #expect(problems.first?.contains("`\(name)`") == true)
    }

    @Test(
        "test numbers parse into E.164 with 6-digit codes",
        arguments: [
            ("+15555550100=123456", ["+15555550100": "123456"]),
            (
                " +1 555 555 0100 = 123456 , +447700900123=000001",
                ["+15555550100": "123456", "+447700900123": "000001"]
            ),
            ("", [:]),
        ] as [(String, [String: String])])
    func testNumbersParse(_ text: String, _ expected: [String: String]) throws {
        #expect(try FirebaseTestNumbers(parsing: text).codes == expected)
    }

    @Test(
        "malformed test numbers are refused, naming the entry but never its code",
        arguments: [
            ("+15555550100=12345", "entry 1 must have a code of exactly 6 digits"),
            ("+15555550100=12345a", "entry 1 must have a code of exactly 6 digits"),
            ("+15555550100=1234567", "entry 1 must have a code of exactly 6 digits"),
            ("15555550100=123456", "entry 1 must write its number in E.164, starting with +"),
            ("+15555550100=123456,+1 555 555 0100=654321", "entry 2 repeats a number"),
            ("+1555=123456", "entry 1 has a number that is not E.164"),
            ("+15555550100", "entry 1 is not `+number=code`"),
            ("+15555550100=123456,", "entry 2 is not `+number=code`"),
        ])
    func testNumbersRefused(_ text: String, _ problem: String) {
        let reason = FirebaseTestNumbers.problem(in: text)
        #expect(reason == problem)
        #expect(reason?.contains("123456") == false)
    }

    @Test("at most 10 test numbers are allowed, as in Firebase")
    func testNumberLimit() {
        let ten = (0..<10).map { "+1555555010\($0)=12345\($0)" }
        #expect(FirebaseTestNumbers.problem(in: ten.joined(separator: ",")) == nil)
        let eleven = ten + ["+15555550200=999999"]
        #expect(
            FirebaseTestNumbers.problem(in: eleven.joined(separator: ","))
                == "lists 11 numbers; Firebase allows at most 10")
    }
}
