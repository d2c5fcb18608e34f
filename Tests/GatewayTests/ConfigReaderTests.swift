import ArgumentParser
import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import gateway

/// The configuration reader: every problem at once, each with the line and column it is at, as
/// `gateway check-config` prints them.
@Suite("Configuration problems, each where it is")
struct ConfigReaderTests {
    /// Writes `text` to a file of its own and runs the whole check on it, as check-config does.
    static func check(
        _ text: String, ext: String = "yaml", environment: [String: String] = [:]
    ) throws -> (ConfigurationCheck, file: String) {
        let scratch = TemporaryDirectory("gateway-config-reader")
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let file = scratch.url.appendingPathComponent("gateway.\(ext)")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let check = ConfigurationCheck(file: file, plugins: InstalledPlugins.all, environment: environment)
        return withExtendedLifetime(scratch) { (check, file.path) }
    }

    static let environment = [
        "TWILIO_AUTH_TOKEN": "0123456789abcdef0123456789abcdef", "GATEWAY_API_KEY": "sk_live_0123456789abcdef",
        "APP_WEBHOOK_SECRET": "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
    ]

    @Test("five independent mistakes in five sections are five problems, each on its own line")
    func fiveMistakes() throws {
        let (check, file) = try Self.check(
            """
            providers:
              - id: sms-main
                plugin: twillio
                settings:
                  account_sid: AC00000000000000000000000000000000
                  service_sid: VA00000000000000000000000000000000
                  auth_token_env: TWILIO_AUTH_TOKEN
            routing:
              default: [sms-main]
              routes:
                - name: uk
                  match: {countries: [GB, XX]}
                  providers: [sms-main]
            api_keys:
              - {name: backend, key_env: GATEWAY_API_KEY}
            policy: {max_attempts: 0}
            rate_limits:
              starts_per_ip: {limit: 10, window_seconds: 60}
              per_moon: {limit: 1, window_seconds: 1}
            webhooks:
              endpoints:
                - name: app
                  url: ftp://app.example.com/hooks
                  secret_env: APP_WEBHOOK_SECRET
            """, environment: Self.environment)
        let problems = check.problems.byPosition()
        #expect(problems.map(\.position?.line) == [3, 12, 16, 19, 23], "\(problems)")
        let messages = problems.map(\.message)
        #expect(messages[0].contains("unknown plugin `twillio`"))
        #expect(messages[1] == "route `uk`: `XX` is not a region code")
        #expect(messages[2] == "policy.max_attempts must be a whole number from 1 to 20")
        #expect(messages[3] == "rate_limits: unknown key `per_moon`")
        #expect(messages[4] == "webhooks.endpoints[0].url must be an http(s) URL")
        // As check-config prints them: FILE:LINE:COLUMN, then the count.
        let report = CheckConfig.report(check, file: file)
        #expect(report.failed)
        #expect(report.lines.first == "\(file):3:13: \(messages[0])")
        #expect(report.lines[1] == "\(file):12:31: route `uk`: `XX` is not a region code")
        #expect(report.lines.last == "\(file): 5 problems")
    }

    @Test("a webhook's missing name does not hide its bad url; a list goes on after a bad entry")
    func siblings() throws {
        let (check, _) = try Self.check(
            """
            sandbox: true
            webhooks:
              endpoints:
                - url: ftp://x/h
                  secret_env: APP_WEBHOOK_SECRET
                - {name: b, url: 'https://y/h', secret_env: MISSING}
              max_attempts: 0
            api_keys:
              - {name: one, key_sha256: nothex}
              - {name: two, key_env: GATEWAY_API_KEY, scopes: [verify, superuser]}
            """, environment: Self.environment)
        let found = check.problems.byPosition().map { "\($0.position?.line ?? 0) \($0.message)" }
        #expect(
            found == [
                "4 webhooks.endpoints[0].name must be a non-empty string of at most 64 characters",
                "4 webhooks.endpoints[0].url must be an http(s) URL",
                "6 webhooks.endpoints[1]: environment variable MISSING must hold a Standard Webhooks secret: whsec_ and 24 "
                    + "to 64 random bytes in Base64 (or set signing: legacy to keep the X-Gateway-Signature scheme)",
                "7 webhooks.max_attempts must be a whole number from 1 to 50",
                "9 api key one: key_sha256 must be 64 hex digits",
                "10 api key two: unknown scope `superuser` (verify, admin, read)",
            ])
    }

    @Test("a JSON syntax error is one problem, at its line and column")
    func jsonSyntax() throws {
        let (check, _) = try Self.check("{\"sandbox\": true,\n  \"policy\": {\"max_attempts\": 3,,}}\n", ext: "json")
        #expect(check.problems.count == 1)
        #expect(check.problems.first?.position == SourcePosition(line: 2, column: 32))
        #expect(
            check.problems.first?.message.hasPrefix("the file is not valid JSON: expected a key in double quotes")
                == true)
        for (text, line, column) in [
            ("{\"a\": 01}", 1, 7), ("{\"a\": [1, 2,]}", 1, 13), ("{\"a\": \"é\" \"b\"}", 1, 11),
            ("{\"a\": \"x\n\"}", 1, 9), ("{\"a\": tru}", 1, 7), ("{}\n[]", 2, 1), ("{\"a\": \"\\q\"}", 1, 8),
        ] as [(String, Int, Int)] {
            let (bad, _) = try Self.check(text, ext: "json")
            #expect(
                bad.problems.map(\.position) == [SourcePosition(line: line, column: column)], "\(text): \(bad.problems)"
            )
        }
    }

    @Test("a YAML syntax error is one problem, at its line")
    func yamlSyntax() throws {
        let (check, _) = try Self.check("sandbox: true\npolicy: {max_attempts: 3\nrouting: {}\n")
        #expect(check.problems.count == 1)
        #expect(check.problems.first?.message.hasPrefix("the file is not valid YAML") == true)
        #expect(check.problems.first?.position?.line == 3)
    }

    @Test("a key given twice is a problem where it repeats, in JSON and in YAML, with the file's other problems")
    func repeatedKeys() throws {
        let (json, _) = try Self.check(
            "{\"sandbox\": true,\n \"policy\": {\"max_attempts\": 3},\n \"policy\": {\"max_sends\": 2},\n \"colour\": 1}",
            ext: "json")
        #expect(
            json.problems.map(\.description) == [
                "3:2: the key `policy` is given twice in one mapping (first on line 2); give it once",
                "4:2: unknown top-level key `colour`",
            ])
        let (yaml, _) = try Self.check("sandbox: true\npolicy:\n  max_attempts: 3\n  max_attempts: 4\n")
        #expect(
            yaml.problems.map(\.description) == [
                "4:3: the key `max_attempts` is given twice in one mapping (first on line 3); give it once"
            ])
        #expect(yaml.reading.configuration.policy.maxAttempts == 3)
    }

    @Test("JSON values are read as JSON: escapes, numbers, nesting, columns in characters")
    func jsonValues() throws {
        let text =
            #"{"ünïcode": "a\"b\\c\u00e9\ud83d\ude00\n", "n": [-0.5, 1e3, 0, 2E-2], "deep": {"x": [true, false, null]}}"#
        let (root, repeated) = try ConfigJSONParser.parse(text)
        #expect(repeated.isEmpty)
        #expect(root.member("ünïcode")?.value.string == "a\"b\\cé😀\n")
        #expect(root.member("n")?.value.items?.compactMap(\.number) == [-0.5, 1000, 0, 0.02])
        #expect(
            root.member("deep")?.value.member("x")?.value.items?.map(\.kindName) == [
                "true or false", "true or false", "nothing",
            ])
        // Columns count characters: `"n"` is the 44th character of the line (its 46th byte).
        #expect(root.member("n")?.keyPosition == SourcePosition(line: 1, column: 44))
        #expect(throws: ConfigJSONParser.SyntaxError.self) {
            try ConfigJSONParser.parse(String(repeating: "[", count: 100) + String(repeating: "]", count: 100))
        }
    }

    @Test("a misspelt plugin and a routing mistake both show; listed API keys are not `no API key`")
    func noHiddenProblems() throws {
        let (check, _) = try Self.check(
            """
            providers:
              - {id: main, plugin: twilo, settings: {account_sid: x}}
            routing: {default: [main, nobody]}
            api_keys:
              - {name: backend, key_env: NOT_SET}
            """)
        let messages = check.problems.map(\.message)
        #expect(messages.contains { $0.contains("unknown plugin `twilo`") }, "\(messages)")
        #expect(messages.contains("routing.default: unknown provider `nobody`"), "\(messages)")
        #expect(messages.contains { $0.contains("NOT_SET is not set") }, "\(messages)")
        #expect(!messages.contains { $0.contains("no API key is configured") }, "\(messages)")
        #expect(messages.count == 3, "\(messages)")
    }

    @Test("an unset signing key variable is a note (the data directory's key is used), a problem with a shared store")
    func signingKeyNote() throws {
        let base = "sandbox: true\ntoken: {signing_key_env: GATEWAY_TOKEN_SIGNING_KEY}\n"
        let (single, file) = try Self.check(base)
        #expect(single.problems.isEmpty)
        #expect(single.notes.map(\.position?.line) == [2])
        let report = CheckConfig.report(single, file: file)
        #expect(!report.failed, "\(report.lines)")
        #expect(
            report.lines.first?.hasPrefix("\(file):2:26: note: token: environment variable GATEWAY_TOKEN_SIGNING_KEY")
                == true,
            "\(report.lines)")
        let (shared, _) = try Self.check(base + "store: postgres://gw@127.0.0.1:5432/gw\n")
        #expect(shared.problems.map(\.position?.line) == [2])
        #expect(shared.problems.first?.message.contains("a shared store needs") == true)
    }

    @Test("startup refuses a bad file with the same problems, each FILE:LINE:COLUMN")
    func startupLocates() async throws {
        var options = GatewayHarness().options()
        let scratch = TemporaryDirectory("gateway-config-startup")
        defer { withExtendedLifetime(scratch) {} }
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let file = scratch.url.appendingPathComponent("bad.yaml")
        try "sandbox: true\npolicy: {max_sends: 99}\nproviders:\n  - {plugin: nope}\n".write(
            to: file, atomically: true, encoding: .utf8)
        options.configFile = file
        let error = await #expect(throws: ConfigurationError.self) { _ = try await buildApplication(options) }
        #expect(
            error?.problems == [
                "\(file.relativePath):2:21: policy.max_sends must be a whole number from 1 to 20",
                // The installed plugins as the message lists them, so adding a vendor does not change this test.
                "\(file.relativePath):4:14: provider nope: unknown plugin `nope` (installed: "
                    + InstalledPlugins.all.map(\.id).sorted().joined(separator: ", ") + ")",
            ])
    }

    @Test("the tour's configuration passes check-config, and both of its examples print what the tour shows")
    func tourExamples() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let tour = try String(contentsOf: root.appendingPathComponent("docs/tour.md"), encoding: .utf8)
        let section = try #require(tour.components(separatedBy: "\n## Real vendors\n").last)
            .components(separatedBy: "\n## ")[0]
        func blocks(_ fence: String) -> [String] {
            section.components(separatedBy: "```\(fence)\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        }
        let (yaml, console) = (blocks("yaml"), blocks("console"))
        try #require(yaml.count == 2 && console.count == 2)
        let environment = [
            "TWILIO_AUTH_TOKEN": "0123456789abcdef0123456789abcdef", "FIREBASE_WEB_API_KEY": "AIzaSyA-example-key",
            "SINCH_APPLICATION_SECRET": "c2FuZGJveC1hcHBsaWNhdGlvbi1zZWNyZXQ=",
            "GATEWAY_API_KEY": "sk_live_0123456789abcdef",
        ]
        for (name, text, shown) in [("gateway.yaml", yaml[0], console[0]), ("broken.yaml", yaml[1], console[1])] {
            let (check, _) = try Self.check(text, environment: environment)
            let printed = CheckConfig.report(check, file: name).lines
            // The console block: the command line, then what it printed.
            #expect(printed == shown.split(separator: "\n").dropFirst().map(String.init), "\(name)")
        }
    }
}

@Suite("Adaptive routes in the configuration")
struct AdaptiveConfigTests {
    @Test("an adaptive route reads into its settings; `24h`, `90s` and seconds are windows")
    func reads() throws {
        let (check, _) = try ConfigReaderTests.check(
            """
            sandbox: true
            routing:
              routes:
                - name: sms-adaptive
                  match: {channels: [sms]}
                  adaptive:
                    providers: [twilio, sinch, vonage]
                    objective: conversions_per_cost
                    per: [country]
                    min_share: 0.1
                    window: 24h
                  fallbacks: [twilio]
            """)
        #expect(check.problems.byPosition().isEmpty, "\(check.problems.byPosition())")
        let rule = try #require(check.reading.configuration.routing?.rules.first)
        #expect(
            rule.target
                == .adaptive(
                    AdaptivePolicy(
                        providers: ["twilio", "sinch", "vonage"], objective: .conversionsPerCost,
                        dimensions: [.country],
                        minShare: 0.1, window: 86_400)))
        #expect(rule.fallbacks == ["twilio"])
    }

    @Test("every mistake of an adaptive route is a problem at its line")
    func problems() throws {
        let (check, _) = try ConfigReaderTests.check(
            """
            sandbox: true
            routing:
              routes:
                - name: a
                  match: {channels: [sms]}
                  adaptive:
                    providers: [twilio, nosuch]
                    objective: clicks
                    per: [country, carrier]
                    min_share: 0.6
                    window: soon
                    extra: 1
                - name: b
                  match: {channels: [voice]}
                  providers: [twilio]
                  adaptive: {providers: [twilio, sinch]}
            """)
        let problems = check.problems.byPosition()
        let messages = problems.map(\.message).joined(separator: "\n")
        for expected in [
            "unknown provider `nosuch`",
            "`adaptive.objective` must be conversions, conversions_per_cost, deliveries or deliveries_per_cost",
            "`carrier` is not one of country, channel", "`adaptive.window` must be a duration", "unknown key `extra`",
            "route `b`: give one of `providers`, `experiment` or `adaptive`, not 2",
            "`min_share` must be at least 0 and below 1/2",
        ] {
            #expect(messages.contains(expected), "\(expected) in:\n\(messages)")
        }
        #expect(problems.allSatisfy { $0.position != nil }, "\(problems)")
    }
}
