import Foundation
import GatewayCore
import GatewayKitCrypto
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayTwilio

extension TwilioMessagingEmulator: ErrorSwitchedEmulator {}

/// A Twilio Programmable Messaging provider (an own-code provider over ``TwilioMessagingSender``) wired to a
/// ``TwilioMessagingEmulator`` in process.
enum TwilioMessagingRig {
    static let mount = "/sandbox/twilio_messaging"
    static let baseURL = "http://localhost:8080" + mount
    static let key = HMACOwnCodeKey(secret: Array("the own-code secret of the messaging tests, 32+ bytes".utf8))!

    static func make(
        requestTimeout: Duration = .seconds(10), settings: [String: String] = [:], senders: SenderTable? = nil
    ) throws -> MessagingRig {
        try MessagingRig(
            TwilioMessagingPlugin.plugin, mount: mount,
            ownCodes: OwnCodeSettings(
                key: key,
                catalog: MessageCatalog(app: "Acme", autofill: try MessageAutofill(originBoundHost: "example.com")),
                senders: try senders ?? SenderTable(fallback: .number("+15005550006"))),
            settings: settings, requestTimeout: requestTimeout, makeEmulator: { TwilioMessagingEmulator(context: $0) })
    }
}

@Suite("Twilio Programmable Messaging")
struct TwilioMessagingTests {
    static func start(_ to: String) throws(GatewayError) -> StartVerification {
        StartVerification(
            destination: .phone(try PhoneNumber(parsing: to)), channel: .sms, locales: ["en"],
            verificationID: "vf_0123456789abcdef0123456789abcdef")
    }

    static let subject: ProviderConformance = {
        var subject = ProviderConformance(
            name: "twilio_messaging",
            makeRig: { _ in try TwilioMessagingRig.make() },
            destination: ProviderConformance.phones("+1415555", digits: 4),
            // Every row of Twilio's one dictionary reaches the create: each maps as the table says.
            rows: TwilioErrorMapping.table.rows.filter { $0.source == "[MSG]" }
                + TwilioErrorMapping.table.rows.filter {
                    ["20003", "20429", "21211", "21408", "21610", "21612", "21614", "30450"].contains($0.code)
                },
            calls: [:], expiresAfter: 600, stateTable: "")
        subject.checksAreTheGateways = true
        subject.signatureHeaders = [TwilioPushCrypto.signatureHeader]
        subject.makeRigWithTimeout = { try TwilioMessagingRig.make(requestTimeout: $0) }
        return subject
    }()

    @Test("Twilio Programmable Messaging", arguments: ProviderConformance.Check.allCases)
    func conformance(_ check: ProviderConformance.Check) async throws {
        try await Self.subject.run(check)
    }

    @Test("The emulator's Message is written as its Encodable form writes it, and the sender's fast read agrees")
    func messageJSON() throws {
        var message = TwilioMessagingWire.Message()
        message.sid = "SM0123456789abcdef0123456789abcdef"
        message.accountSID = "AC0123456789abcdef0123456789abcdef"
        message.to = "+447400123456"
        message.body = "Your code is 123456"
        message.status = "queued"
        message.numSegments = "1"
        message.subresourceURIs = ["media": "/2010-04-01/Accounts/AC…/Messages/SM…/Media.json"]
        for candidate in [message, TwilioMessagingWire.Message()] {
            #expect(candidate.jsonValue == (try JSONValue(encoding: candidate)))
        }
        let body = Data(try #require(message.jsonValue.sortedJSON).utf8)
        let read = try #require(TwilioMessagingWire.Message(fastJSON: body))
        #expect(read.sid == message.sid && read.status == "queued" && read.numSegments == "1" && read.errorCode == nil)
        message.errorCode = 30007
        message.status = "failed"
        let failedBody = Data(try #require(message.jsonValue.sortedJSON).utf8)
        let failed = try #require(TwilioMessagingWire.Message(fastJSON: failedBody))
        #expect(failed.errorCode == 30007 && failed.status == "failed")
        // A field of another type is left to JSONDecoder, which refuses it as before.
        #expect(TwilioMessagingWire.Message(fastJSON: Data(#"{"sid": 7, "status": "queued"}"#.utf8)) == nil)
    }

    @Test func aStartPostsOneMessageWithTheCodeAndItsOriginBoundLine() async throws {
        let rig = try TwilioMessagingRig.make()
        let result = try await rig.provider.start(try Self.start("+14155550100"))
        let request = try #require(rig.recorder.requests.last)
        #expect(request.method == .post)
        #expect(request.url.path == Self.pathOfMessages)
        #expect(request.headerFields[.contentType] == "application/x-www-form-urlencoded")
        #expect(
            request.headerFields[.authorization]
                == VendorHTTPClient.basicAuthorization(TwilioSandbox.accountSID, TwilioSandbox.authToken))
        let form = try rig.form()
        #expect(form["To"] == "+14155550100")
        #expect(form["From"] == "+15005550006")
        #expect(form["MessagingServiceSid"] == nil)
        #expect(form["ValidityPeriod"] == "600")
        let message = try #require(rig.outbox.messages(to: "+14155550100").last)
        let code = try #require(message.code)
        #expect(form["Body"] == "Your Acme code is \(code). It expires in 10 minutes.\n\n@example.com #\(code)")
        #expect(message.provider == "twilio_messaging")
        let reference = try #require(result.reference)
        #expect(reference.hasPrefix("SM") && reference.count == 34)
        let state = try result.state.decode(OwnCodeState.self)
        #expect(state.sends.map(\.segments) == [1])
        #expect(state.sends.map(\.status) == [.queued])
    }

    static let pathOfMessages =
        TwilioMessagingRig.mount + "/2010-04-01/Accounts/\(TwilioSandbox.accountSID)/Messages.json"

    @Test func anAPIKeyAuthenticatesAndAMessagingServiceSends() async throws {
        let keySID = "SK" + String(repeating: "ab", count: 16)
        let service = "MG" + String(repeating: "cd", count: 16)
        let rig = try TwilioMessagingRig.make(
            settings: ["api_key_sid": keySID], senders: try SenderTable(fallback: .messagingService(service)))
        _ = try await rig.provider.start(try Self.start("+447400123456"))
        let form = try rig.form()
        #expect(form["MessagingServiceSid"] == service)
        #expect(form["From"] == nil)
        #expect(
            rig.recorder.requests.last?.headerFields[.authorization]
                == VendorHTTPClient.basicAuthorization(keySID, TwilioSandbox.authToken))
    }

    @Test func countriesGetTheirOwnSenders() async throws {
        let rig = try TwilioMessagingRig.make(
            senders: try SenderTable(fallback: .alphanumeric("Acme"), byCountry: ["US": .shortCode("72345")]))
        _ = try await rig.provider.start(try Self.start("+14155550100"))
        #expect(try rig.form()["From"] == "72345")
        _ = try await rig.provider.start(try Self.start("+447400123456"))
        #expect(try rig.form()["From"] == "Acme")
        #expect(rig.provider.capabilities.excludedRegions == ["CA"])
    }

    /// The concerns an OTP send meets, each as Twilio answers it, and what the gateway makes of it.
    @Test(
        arguments: [
            (21211, GatewayError.Code.invalidPhoneNumber), (21614, .unsupportedDestination),
            (21612, .unsupportedDestination), (30006, .unsupportedDestination), (30003, .deliveryFailed),
            (30004, .destinationBlocked), (30007, .providerRejected), (21408, .providerRejected),
            (21610, .destinationBlocked), (20429, .providerRateLimited), (14107, .providerRateLimited),
            (20005, .providerInsufficientFunds), (30002, .providerInsufficientFunds),
        ])
    func refusalsMapToTheTaxonomy(_ code: Int, _ expected: GatewayError.Code) async throws {
        let rig = try TwilioMessagingRig.make()
        let row = try #require(TwilioErrorMapping.row(for: code))
        rig.errors.arm(row)
        let error = await expectGatewayError(expected) { try await rig.provider.start(try Self.start("+14155550100")) }
        #expect(error?.vendor?.code == String(code))
        #expect(error?.sendMayHaveHappened == false)
        #expect(rig.outbox.messages(to: "+14155550100").isEmpty)
    }

    @Test func theEmulatorRefusesWhatTwilioRefuses() async throws {
        let emulator = TwilioMessagingEmulator(
            context: EmulatorContext(clock: ManualClock(), outbox: SandboxOutbox(), logger: .quiet))
        let authorization = VendorHTTPClient.basicAuthorization(TwilioSandbox.accountSID, TwilioSandbox.authToken)
        func post(
            _ form: [(String, String)], authorization: String? = authorization,
            account: String = TwilioSandbox.accountSID
        )
            async throws -> (Int, TwilioWire.ErrorEnvelope?)
        {
            var headers = HTTPFields()
            if let authorization { headers[.authorization] = authorization }
            let response = await emulator.handle(
                EmulatorRequest(
                    method: .post, path: "/2010-04-01/Accounts/\(account)/Messages.json", query: nil,
                    headerFields: headers, body: Data(FormEncoding.encode(form).utf8)))
            guard case .response(let answer) = response else { throw GatewayError.internal() }
            return (answer.status.code, try? JSONDecoder().decode(TwilioWire.ErrorEnvelope.self, from: answer.body))
        }
        let good = [("To", "+14155550100"), ("From", "+15005550006"), ("Body", "Code 123456")]
        #expect(try await post(good).0 == 201)
        #expect(try await post(good, authorization: nil).1?.code == 20003)
        #expect(try await post(good, account: "AC" + String(repeating: "0", count: 32)).1?.code == 20404)
        #expect(try await post([("To", "4155550100"), ("From", "+15005550006"), ("Body", "x")]).1?.code == 21211)
        #expect(try await post([("To", "+14155550100"), ("Body", "x")]).1?.code == 21604)
        #expect(try await post([("To", "+14155550100"), ("From", "+15005550006")]).1?.code == 21602)
        let long = String(repeating: "a", count: 1601)
        #expect(try await post([("To", "+14155550100"), ("From", "+15005550006"), ("Body", long)]).1?.code == 21617)
    }

    @Test func theOutboxReadsTheCodeOfAMessage() {
        #expect(SandboxOutbox.Message.code(in: "Your code is 123456.\n\n@example.com #123456") == "123456")
        #expect(SandboxOutbox.Message.code(in: "Kode Acme Anda: 4821. Berlaku 10 menit.") == "4821")
        #expect(SandboxOutbox.Message.code(in: "Hello\n\n@example.com #AB7Z") == "AB7Z")
        #expect(SandboxOutbox.Message.code(in: "No code here") == nil)
    }

    @Test func aMessagingProviderWithoutOwnCodeSettingsIsRefused() throws {
        let context = try TwilioMessagingPlugin.plugin.testContext(
            baseURL: TwilioMessagingRig.baseURL, settings: ["account_sid": "nope"],
            transport: RecordingTransport(
                InProcessTransport(
                    emulator: TwilioMessagingEmulator(
                        context: EmulatorContext(clock: ManualClock(), outbox: SandboxOutbox(), logger: .quiet)),
                    pathPrefix: TwilioMessagingRig.mount)),
            clock: ManualClock())
        #expect(TwilioMessagingPlugin.plugin.sendsOwnCodes)
        #expect(!TwilioPlugin.plugin.sendsOwnCodes)
        do {
            _ = try TwilioMessagingPlugin.plugin.makeProvider(context)
            Issue.record("built a messaging provider without own-code settings")
        } catch {
            #expect(error.problems.count == 2, "\(error.problems)")
            #expect(error.problems.contains { $0.contains("`account_sid`") })
            #expect(error.problems.last?.contains("own_codes") == true)
        }
    }
}

@Suite("Twilio's RFC 2822 dates")
struct TwilioDateTests {
    @Test("the emulator's dates are what a UTC RFC 2822 formatter writes, leap days and 1969 included")
    func rfc2822() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        var generator = SystemRandomNumberGenerator()
        let fixed: [TimeInterval] = [0, -1, -86_400 * 8 + 5, 951_782_400, 1_709_164_799, 1_900_000_000, 4_102_444_800]
        let drawn = (0..<500).map { _ in TimeInterval(Int.random(in: -2_000_000_000...5_000_000_000, using: &generator))
        }
        for seconds in fixed + drawn {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(TwilioMessagingWire.rfc2822(date) == formatter.string(from: date), "\(seconds)")
        }
    }
}
