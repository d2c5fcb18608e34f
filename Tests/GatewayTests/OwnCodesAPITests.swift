import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// The gateway's own codes over the API: a sandbox route to `twilio_messaging` sends a message that ends with
/// the origin-bound line, the check approves, a resend carries the same code, and neither the store's file nor
/// the gateway's log holds the code outside the sandbox outbox.
@Suite("Own codes over the API")
struct OwnCodesAPITests {
    static let config = """
        sandbox: true
        messages:
          app: Acme
          origin_bound: {host: example.com}
          templates:
            pt-BR: "Seu código {app}: {code}"
        routing:
          default: [twilio_messaging]
        """

    func withGateway(
        _ config: String = Self.config,
        _ body: @Sendable (any TestClientProtocol, GatewayRuntime, GatewayHarness) async throws -> Void
    ) async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(harness.options(config: config))
        try await app.test(.router) { client in try await body(client, runtime, harness) }
    }

    static func lastMessage(_ runtime: GatewayRuntime, to number: String) throws -> SandboxOutbox.Message {
        try #require(runtime.sandbox?.outbox.all.last { $0.to == number })
    }

    @Test("a start sends an origin-bound message, the code approves, a resend carries the same code")
    func startCheckResend() async throws {
        try await withGateway { client, runtime, harness in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550100"}"#)
            #expect(start.status == .created)
            #expect(start.body["provider"] as? String == "twilio_messaging")
            let id = try #require(start.body["id"] as? String)
            let message = try Self.lastMessage(runtime, to: "+14155550100")
            let code = try #require(message.code)
            #expect(message.text == "Your Acme code is \(code). It expires in 10 minutes.\n\n@example.com #\(code)")
            let resent = try await client.call(.post, "/v1/verifications/\(id)/resend", json: "{}")
            #expect(resent.status == .ok && resent.body["sends"] as? Int == 2)
            #expect(try Self.lastMessage(runtime, to: "+14155550100").code == code)
            let wrong = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code == "000000" ? "111111" : "000000")"}"#
            )
            #expect(wrong.status == .unprocessableContent && wrong.body.errorCode == "incorrect_code")
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.status == .ok && check.body["status"] as? String == "approved")

            // The store's file holds the seed and the MAC, never the code; the log has it only in the
            // sandbox outbox's own line (the emulated phone's).
            for name in (try FileManager.default.contentsOfDirectory(atPath: harness.dataDirectory.path))
            where name.hasPrefix("gateway.sqlite") {
                let bytes = try Data(contentsOf: harness.dataDirectory.appendingPathComponent(name))
                #expect(bytes.range(of: Data(code.utf8)) == nil, "\(name) holds the code")
            }
            let lines = harness.logs.lines(atLeast: .trace).filter { !$0.hasPrefix("sandbox message sent") }
            #expect(!lines.contains { $0.contains(code) })
        }
    }

    @Test("a resend through Vonage SMS carries the same code, and the timeline shows both sends")
    func resendThroughAnotherVendor() async throws {
        try await withGateway { client, runtime, _ in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550102", "provider": "twilio_messaging"}"#)
            let id = try #require(start.body["id"] as? String)
            let code = try #require(try Self.lastMessage(runtime, to: "+14155550102").code)
            let resent = try await client.call(
                .post, "/v1/verifications/\(id)/resend", json: #"{"provider": "vonage_sms"}"#)
            #expect(resent.status == .ok)
            #expect(resent.body["provider"] as? String == "vonage_sms")
            let second = try Self.lastMessage(runtime, to: "+14155550102")
            #expect(second.provider == "vonage_sms" && second.code == code)
            // Twilio Verify makes its own codes: this one cannot go there.
            let toVerify = try await client.call(
                .post, "/v1/verifications/\(id)/resend", json: #"{"provider": "twilio"}"#)
            #expect(toVerify.status == .badRequest && toVerify.body.errorCode == "invalid_request")
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.body["status"] as? String == "approved")
            let read = try await client.call(.get, "/v1/verifications/\(id)?include=timeline")
            let timeline = try #require(read.body["timeline"] as? [[String: Any]])
            let calls = timeline.filter { $0["kind"] as? String == "provider_call" }.compactMap {
                $0["detail"] as? [String: Any]
            }
            #expect(
                calls.map { "\($0["provider"] ?? "-") \($0["operation"] ?? "-")" }.prefix(2) == [
                    "twilio_messaging start", "vonage_sms resend",
                ])
        }
    }

    @Test("both sends' signed receipts reach the timeline and /metrics; a forged one is 401 and changes nothing")
    func receipts() async throws {
        try await withGateway { client, runtime, _ in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550104", "provider": "twilio_messaging"}"#)
            let id = try #require(start.body["id"] as? String)
            let resent = try await client.call(
                .post, "/v1/verifications/\(id)/resend", json: #"{"provider": "vonage_sms"}"#)
            #expect(resent.status == .ok)
            // The emulators post their receipts after answering the sends: wait for them, a busy machine's while.
            var deliveries: [[String: String]] = []
            for _ in 0..<600 {
                let read = try await client.call(.get, "/v1/verifications/\(id)?include=timeline")
                let timeline = try #require(read.body["timeline"] as? [[String: Any]])
                deliveries = timeline.filter { $0["kind"] as? String == "delivery" }.compactMap {
                    $0["detail"] as? [String: String]
                }
                if deliveries.count >= 3 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(
                Set(deliveries.map { "\($0["provider"] ?? "-") \($0["status"] ?? "-")" }) == [
                    "twilio_messaging sent", "twilio_messaging delivered", "vonage_sms delivered",
                ])
            #expect(deliveries.count == 3)
            let state = try await runtime.service.get(id: id).providerState.decode(OwnCodeState.self)
            #expect(Set(deliveries.compactMap { $0["message_id"] }) == Set(state.sends.map(\.messageID)))

            let forged = try await client.execute(
                uri: "/callbacks/twilio_messaging/\(id)", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded", .init("X-Twilio-Signature")!: "Zm9yZ2Vk"],
                body: ByteBuffer(
                    string: "MessageSid=\(state.sends[0].messageID)&MessageStatus=undelivered&ErrorCode=30003")
            ) { $0 }
            #expect(forged.status == .unauthorized)
            let unsigned = try await client.execute(
                uri: "/callbacks/vonage_sms", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"messageId": "X", "status": "failed", "client-ref": "\#(id)"}"#)
            ) { $0 }
            #expect(unsigned.status == .unauthorized)
            let events = try await runtime.service.events(id: id).filter { $0.kind == .delivery }
            #expect(events.count == 3)

            let text = try await client.execute(
                uri: "/metrics", method: .get, headers: [.authorization: "Bearer \(GatewayHarness.apiKey)"]
            ) { String(buffer: $0.body) }
            let samples = try PrometheusSample.parse(text)
            let labels = ["country": "US", "code": "none"]
            #expect(
                samples.value(
                    "gateway_deliveries_total",
                    labels.merging(["provider": "twilio_messaging", "status": "delivered"]) { $1 }) == 1)
            #expect(
                samples.value(
                    "gateway_deliveries_total",
                    labels.merging(["provider": "vonage_sms", "status": "delivered"]) { $1 })
                    == 1)
        }
    }

    @Test("a Verify vendor's verification cannot be resent through a messaging provider")
    func verifyCodesStay() async throws {
        try await withGateway { client, _, _ in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550103", "provider": "twilio"}"#)
            let id = try #require(start.body["id"] as? String)
            let resent = try await client.call(
                .post, "/v1/verifications/\(id)/resend", json: #"{"provider": "vonage_sms"}"#)
            #expect(resent.status == .badRequest && resent.body.errorCode == "invalid_request")
            let unknown = try await client.call(
                .post, "/v1/verifications/\(id)/resend", json: #"{"provider": "nowhere"}"#)
            #expect(unknown.status == .badRequest && unknown.body.errorCode == "invalid_request")
        }
    }

    @Test("a configured template in the start's locale is the message")
    func configuredTemplate() async throws {
        try await withGateway { client, runtime, _ in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550101", "locales": ["pt-BR"]}"#)
            #expect(start.body["content_language"] as? String == "pt-BR")
            let message = try Self.lastMessage(runtime, to: "+14155550101")
            #expect(
                message.text == "Seu código Acme: \(try #require(message.code))\n\n@example.com #\(message.code ?? "")")
        }
    }

    @Test("the admin API lists the messaging provider with SMS and resend only")
    func listed() async throws {
        try await withGateway { client, _, _ in
            let answer = try await client.call(.get, "/v1/admin/providers")
            let providers = try #require(answer.body["providers"] as? [[String: Any]])
            let messaging = try #require(providers.first { $0["id"] as? String == "twilio_messaging" })
            #expect(messaging["channels"] as? [String] == ["sms"])
            #expect(messaging["operations"] as? [String] == ["resend", "callbacks"])
        }
    }
}

@Suite("Own codes in the configuration")
struct OwnCodesConfigurationTests {
    static let environment = [
        "GATEWAY_API_KEY": "sk_live_0123456789abcdef", "TWILIO_AUTH_TOKEN": "0123456789abcdef0123456789abcdef",
        "OWN_CODE_SECRET": String(repeating: "s", count: 32),
    ]

    static let provider = """
        providers:
          - id: sms-own
            plugin: twilio_messaging
            settings: {account_sid: AC00000000000000000000000000000000, auth_token_env: TWILIO_AUTH_TOKEN}
            senders: {default: "+14155550100", GB: Acme}
        api_keys:
          - {name: backend, key_env: GATEWAY_API_KEY}
        """

    @Test("a complete configuration builds a messaging provider with its key, templates and senders")
    func complete() throws {
        let (check, _) = try ConfigReaderTests.check(
            Self.provider + """

                own_codes: {secret_env: OWN_CODE_SECRET, length: 8, alphabet: alphanumeric, new_code_on_resend: true}
                messages: {app: Acme, origin_bound: {host: example.com}}
                """, environment: Self.environment)
        #expect(check.problems == [])
        let configuration = check.reading.configuration
        let settings = try #require(
            configuration.ownCodeSettings(providerID: "sms-own", plugin: TwilioMessagingPluginForTests.plugin))
        #expect(settings.format == OwnCodeFormat(length: 8, alphabet: .alphanumeric))
        #expect(settings.newCodeOnResend)
        #expect(settings.senders.sender(for: "GB") == .alphanumeric("Acme"))
        #expect(settings.senders.excludedRegions == [])
    }

    @Test("what a messaging provider lacks, and every bad part, is a problem where it is")
    func problems() throws {
        let (missing, missingFile) = try ConfigReaderTests.check(Self.provider, environment: Self.environment)
        #expect(missing.error(file: missingFile)?.problems.contains { $0.contains("needs `own_codes") } == true)

        let (check, file) = try ConfigReaderTests.check(
            """
            providers:
              - id: sms-own
                plugin: twilio_messaging
                settings: {account_sid: AC00000000000000000000000000000000, auth_token_env: TWILIO_AUTH_TOKEN}
                senders: {default: Acme, US: Acme, XX: "+14155550100"}
              - id: verify
                plugin: twilio
                settings: {account_sid: AC00000000000000000000000000000000, service_sid: VA00000000000000000000000000000000, auth_token_env: TWILIO_AUTH_TOKEN}
                senders: {default: "+14155550100"}
            api_keys:
              - {name: backend, key_env: GATEWAY_API_KEY}
            own_codes: {secret_env: SHORT_SECRET, length: 12}
            messages:
              app: Acme
              origin_bound: {host: "https://example.com"}
              templates:
                en: "Hello {name}"
            """, environment: Self.environment.merging(["SHORT_SECRET": "short"]) { _, new in new })
        let problems = try #require(check.error(file: file)?.problems)
        let expected = [
            ":5:40: provider sms-own: senders.XX is neither `default` nor a region code such as GB",
            ":5:14: provider sms-own: senders: US refuses alphanumeric sender IDs",
            ":9:14: provider verify: `senders` is for providers of messaging plugins",
            ":12:25: own_codes: environment variable SHORT_SECRET is not set or shorter than 32 bytes",
            ":12:47: own_codes: `length` must be a whole number from 4 to 10",
            ":15:17: messages: origin_bound host `https://example.com` is not a lower-case domain name",
            ":17:9: messages.templates.en: no `{code}` placeholder",
            ":17:9: messages.templates.en: unknown placeholder `{name}`",
        ]
        for part in expected {
            #expect(problems.contains { $0.contains(part) }, "no problem like \(part) in \(problems)")
        }
    }

    @Test("a template over max_segments is a problem of check-config")
    func overlong() throws {
        let (check, file) = try ConfigReaderTests.check(
            Self.provider + """

                own_codes: {secret_env: OWN_CODE_SECRET}
                messages:
                  app: Acme
                  android_app_hash: FA+9qCX9VSu
                  templates:
                    en: "\(String(repeating: "This is a long message. ", count: 7)){code}"
                """, environment: Self.environment)
        let problems = try #require(check.error(file: file)?.problems)
        #expect(problems.contains { $0.contains("messages: the `en` message takes 2 segments") }, "\(problems)")
    }
}

/// The messaging plugin as the configuration tests name it.
enum TwilioMessagingPluginForTests {
    static var plugin: GatewayPlugin { InstalledPlugins.all.first { $0.id == "twilio_messaging" }! }
}
