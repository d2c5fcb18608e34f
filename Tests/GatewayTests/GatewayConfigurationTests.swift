import ArgumentParser
import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import gateway

@Suite("The configuration file")
struct GatewayConfigurationTests {
    func load(_ text: String, ext: String = "yaml", environment: [String: String] = [:]) throws -> GatewayConfiguration
    {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gw-\(UUID().uuidString).\(ext)")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return try GatewayConfiguration.load(file: file, plugins: InstalledPlugins.all, environment: environment)
    }

    func problems(_ text: String, ext: String = "yaml", environment: [String: String] = [:]) -> [String] {
        do {
            _ = try load(text, ext: ext, environment: environment)
            return []
        } catch let error as ConfigurationError {
            return error.problems
        } catch {
            return ["\(error)"]
        }
    }

    static let valid = """
        providers:
          - id: twilio-us
            plugin: twilio
            settings:
              account_sid: AC00000000000000000000000000000000
              service_sid: VA00000000000000000000000000000000
              auth_token_env: TWILIO_AUTH_TOKEN
        routing:
          default: [twilio-us]
        api_keys:
          - {name: backend, key_env: GATEWAY_API_KEY, scopes: [verify, admin], countries: [gb, fr], starts_per_hour: 500}
        countries: {deny: [KP]}
        pumping_guard: {min_starts: 50, conversion_floor: 0.25}
        policy: {code_validity_seconds: 300, max_attempts: 3, allow_unknown_numbers: [gb, US], check_lease_seconds: 20}
        public_base_url: https://verify.example.com/
        rate_limits:
          starts_per_destination: {limit: 5, window_seconds: 3600}
          starts_per_prefix: {limit: 100, window_seconds: 600, digits: 7}
          checks_per_api_key: {limit: 1000, window_seconds: 60}
          trusted_proxy_header: X-Forwarded-For
        test_numbers: {"+15005550006": "424242"}
        """

    @Test("a valid file loads, with secrets from the environment")
    func valid() throws {
        let config = try load(
            Self.valid,
            environment: ["TWILIO_AUTH_TOKEN": "secret-token", "GATEWAY_API_KEY": "sk_live_0123456789abcdef"])
        #expect(config.providers.first?.settings["auth_token"] == "secret-token")
        #expect(config.providers.first?.id == "twilio-us")
        #expect(config.apiKeys.first?.scopes == [.verify, .admin])
        #expect(config.apiKeys.first?.countries == ["GB", "FR"])
        #expect(config.apiKeys.first?.startsPerHour == 500)
        #expect(config.policy.countries == CountryPermissions(deny: ["KP"]))
        #expect(config.policy.pumpingGuard == PumpingGuard(minStarts: 50, conversionFloor: 0.25))
        #expect(config.apiKeys.first?.hash == APIKeyring.hash("sk_live_0123456789abcdef"))
        #expect(config.policy.codeValidity == 300 && config.policy.maxAttempts == 3)
        #expect(config.policy.testNumbers == ["+15005550006": "424242"])
        #expect(config.policy.allowUnknownNumbers == ["GB", "US"])
        #expect(config.policy.checkLease == 20)
        #expect(
            problems("sandbox: true\npolicy: {check_lease_seconds: 5}\n")
                == ["policy.check_lease_seconds must be a whole number from 15 to 300"])
        #expect(config.policy.rateLimits.startsPerDestination == RateLimit(limit: 5, window: 3600))
        #expect(config.policy.rateLimits.startsPerPrefix == RateLimit(limit: 100, window: 600))
        #expect(config.policy.rateLimits.prefixDigits == 7)
        #expect(config.policy.rateLimits.checksPerAPIKey == RateLimit(limit: 1000, window: 60))
        #expect(config.policy.rateLimits.startsPerIP == nil)
        #expect(config.trustedProxyHeader == "X-Forwarded-For")
        #expect(config.publicBaseURL?.absoluteString == "https://verify.example.com")
        #expect(config.routing?.defaultOrder == ["twilio-us"])
        #expect(!config.sandbox)
    }

    @Test("every problem is listed at once: missing secrets, secrets in clear, unknown keys, bad values")
    func problemsAtOnce() {
        let found = problems(
            """
            colour: blue
            providers:
              - plugin: twilio
                settings: {account_sid: AC00000000000000000000000000000000, auth_token: in-clear}
            api_keys:
              - {name: backend, key: sk_in_clear}
            policy: {max_attempts: 0, allow_unknown_numbers: [Atlantis]}
            public_base_url: "ftp://example.com?x=1"
            rate_limits: {starts_per_ip: {limit: 0, window_seconds: 60}, per_moon: {}}
            countries: {allow: [Narnia]}
            pumping_guard: {conversion_floor: 2, tides: 1}
            routing: {default: twilio}
            """)
        let text = found.joined(separator: "\n")
        for expected in [
            "unknown top-level key `colour`", "`auth_token` is a secret", "api_keys[0]: unknown key `key`",
            "policy.max_attempts", "routing.default must be a list", "policy.allow_unknown_numbers",
            "`public_base_url` must be an http(s) URL", "rate_limits.starts_per_ip must be",
            "rate_limits: unknown key `per_moon`", "countries.allow must be a list of region codes",
            "pumping_guard.conversion_floor must be a number from 0 to 1", "pumping_guard: unknown key `tides`",
        ] {
            #expect(text.contains(expected), "missing: \(expected)\n\(text)")
        }
        #expect(found.count >= 5)
    }

    @Test("JSON works as well as YAML, and a file that is neither is one clear problem")
    func formats() {
        #expect(problems(#"{"sandbox": true}"#, ext: "json").isEmpty)
        let broken = problems("{sandbox: [", ext: "json")
        #expect(broken.count == 1 && broken[0].contains("is not valid JSON"))
        let notMapping = problems("- a\n- b\n")
        #expect(notMapping == ["the configuration must be a mapping at the top level"])
    }

    @Test("a missing environment variable names the variable, not a value")
    func missingEnvironment() {
        let found = problems(Self.valid)
        #expect(found.contains { $0.contains("TWILIO_AUTH_TOKEN") })
        #expect(found.contains { $0.contains("GATEWAY_API_KEY") })
    }

    @Test("gateway check-config exits 78 on a bad file and 0 on a good one")
    func checkConfigCommand() async throws {
        let scratch = TemporaryDirectory("gateway-check-config")
        defer { withExtendedLifetime(scratch) {} }
        let directory = scratch.url
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let good = directory.appendingPathComponent("good.yaml")
        try "sandbox: true\nrouting: {default: [firebase, twilio]}\n".write(to: good, atomically: true, encoding: .utf8)
        let passed = await CommandOutput.collecting { try await CheckConfig.parse([good.path]).run() }
        #expect(passed.error == nil)
        let installed = InstalledPlugins.all.map(\.id)
        #expect(
            passed.lines.joined().hasSuffix(
                ": OK (\(installed.count) provider(s): \(installed.joined(separator: ", ")))"))
        let bad = directory.appendingPathComponent("bad.yaml")
        try "sandbox: true\nrouting: {default: [nexmo]}\n".write(to: bad, atomically: true, encoding: .utf8)
        let failed = await CommandOutput.collecting { try await CheckConfig.parse([bad.path]).run() }
        #expect((failed.error as? ExitCode)?.rawValue == 78)
        #expect(failed.lines.joined().contains("bad.yaml:2:21: routing.default: unknown provider `nexmo`"))
    }
}
