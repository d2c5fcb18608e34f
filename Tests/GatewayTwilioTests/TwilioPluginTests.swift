import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayTwilio

@Suite("Twilio plugin")
struct TwilioPluginTests {
    let plugin = TwilioPlugin.plugin
    static let url = URL(string: "http://127.0.0.1:8080/sandbox/twilio")

    @Test(
        "the plugin is `twilio` with its five settings, the auth token secret, base_url and the push lifetime optional")
    func identity() {
        #expect(plugin.id == "twilio")
        #expect(
            plugin.settings.map(\.name) == [
                "account_sid", "auth_token", "service_sid", "base_url", "push_challenge_seconds",
            ])
        #expect(plugin.settings.filter(\.isSecret).map(\.name) == ["auth_token"])
        #expect(plugin.settings.filter { !$0.isRequired }.map(\.name) == ["base_url", "push_challenge_seconds"])
    }

    @Test("the sandbox constants have Twilio's SID shapes")
    func sandboxConstants() {
        #expect(TwilioConfiguration.matches(TwilioSandbox.accountSID, prefixes: ["AC"]))
        #expect(TwilioConfiguration.matches(TwilioSandbox.serviceSID, prefixes: ["VA"]))
        #expect(!TwilioSandbox.authToken.isEmpty)
    }

    @Test(
        "a SID is its prefix and exactly 32 hex digits, in either case; nothing else passes",
        arguments: [
            ("VE" + String(repeating: "0a", count: 16), true), ("VE" + String(repeating: "F9", count: 16), true),
            ("VE" + String(repeating: "0", count: 31), false), ("VE" + String(repeating: "0", count: 33), false),
            ("VA" + String(repeating: "0", count: 32), false), ("VE" + String(repeating: "0", count: 31) + "g", false),
            ("VE" + String(repeating: "0", count: 30) + "é", false), ("ve" + String(repeating: "0", count: 32), false),
            ("VE" + String(repeating: "0", count: 31) + "\u{0661}", false), ("", false),
        ])
    func sidShape(_ value: String, _ expected: Bool) {
        #expect(TwilioConfiguration.matches(value, prefixes: ["VE"]) == expected)
    }

    @Test("sandbox settings are the sandbox constants plus the given base URL, and they validate")
    func sandboxSettings() throws {
        let url = try #require(Self.url)
        let settings = plugin.sandboxSettings(url)
        #expect(
            settings == [
                "account_sid": TwilioSandbox.accountSID, "auth_token": TwilioSandbox.authToken,
                "service_sid": TwilioSandbox.serviceSID, "base_url": url.absoluteString,
            ])
        #expect(plugin.problems(in: settings, providerID: "twilio").isEmpty)
        let provider = try plugin.makeProvider(
            ProviderContext(
                providerID: "twilio", settings: settings, transport: StubTransport.failing(.timeout),
                clock: SystemClock(), logger: .quiet))
        #expect(provider.id == "twilio")
        #expect(provider.capabilities == TwilioProvider.declaredCapabilities)
    }

    @Test("every bad setting is reported at once")
    func problems() {
        let settings = [
            "account_sid": "AC123", "service_sid": "VA" + String(repeating: "g", count: 32), "base_url": "ftp://x",
        ]
        let problems = plugin.problems(in: settings, providerID: "tw")
        #expect(problems.count == 4, "\(problems)")
        #expect(problems.contains { $0.contains("`account_sid`") })
        #expect(problems.contains { $0.contains("missing setting `auth_token`") })
        #expect(problems.contains { $0.contains("`service_sid`") })
        #expect(problems.contains { $0.contains("`base_url`") })
    }

    @Test("makeProvider refuses bad settings with every problem listed")
    func makeProviderRefuses() {
        let context = ProviderContext(
            providerID: "tw", settings: ["account_sid": "XX", "base_url": "not a url"],
            transport: StubTransport.failing(.timeout), clock: SystemClock(), logger: .quiet)
        do {
            _ = try plugin.makeProvider(context)
            Issue.record("expected a configuration error")
        } catch {
            #expect(error.problems.count == 4, "\(error.problems)")
        }
    }

    @Test(
        "account and API key SIDs are accepted; other shapes are not",
        arguments: [
            ("AC" + String(repeating: "a", count: 32), true), ("SK" + String(repeating: "F", count: 32), true),
            ("AC" + String(repeating: "a", count: 31), false), ("XX" + String(repeating: "a", count: 32), false),
            ("AC" + String(repeating: "ａ", count: 32), false),
        ])
    func accountSIDShapes(value: String, valid: Bool) throws {
        let spec = try #require(plugin.settings.first { $0.name == "account_sid" })
        #expect((spec.validate?(value) == nil) == valid)
    }

    @Test("base_url defaults to Twilio and loses a trailing slash")
    func baseURL() throws {
        var settings = plugin.sandboxSettings(try #require(Self.url))
        settings["base_url"] = nil
        #expect(try TwilioConfiguration(settings: settings, providerID: "t").baseURL == "https://verify.twilio.com")
        settings["base_url"] = "https://verify.dublin.ie1.twilio.com/"
        #expect(
            try TwilioConfiguration(settings: settings, providerID: "t").baseURL
                == "https://verify.dublin.ie1.twilio.com")
    }

    @Test("the plugin builds a Twilio emulator from the emulator context")
    func emulator() async throws {
        let outbox = SandboxOutbox()
        let emulator = plugin.makeEmulator(EmulatorContext(clock: ManualClock(), outbox: outbox, logger: .quiet))
        #expect(emulator is TwilioEmulator)
        let url = try #require(Self.url)
        let provider = try plugin.makeProvider(
            ProviderContext(
                providerID: "twilio", settings: plugin.sandboxSettings(url),
                transport: InProcessTransport(emulator: emulator, pathPrefix: "/sandbox/twilio"), clock: SystemClock(),
                logger: .quiet))
        _ = try await provider.start(try TwilioHarness.smsStart())
        #expect(outbox.all.count == 1)
    }
}
