import Foundation
import GatewayCore
import GatewayKitCrypto
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayVonage

extension VonageSMSEmulator: ErrorSwitchedEmulator {}

/// A Vonage SMS API provider (an own-code provider over ``VonageSMSSender``) wired to a ``VonageSMSEmulator`` in
/// process.
enum VonageSMSRig {
    static let mount = "/sandbox/vonage_sms"
    static let key = HMACOwnCodeKey(secret: Array("the own-code secret of the Vonage SMS tests, 32+ bytes".utf8))!

    static func make(
        requestTimeout: Duration = .seconds(10), app: String = "Acme", settings: [String: String] = [:]
    ) throws -> MessagingRig {
        try MessagingRig(
            VonageSMSPlugin.plugin, mount: mount,
            ownCodes: OwnCodeSettings(
                key: key, catalog: MessageCatalog(app: app),
                senders: try SenderTable(fallback: .alphanumeric("Acme"), byCountry: ["US": .number("+14155550199")])),
            settings: settings, requestTimeout: requestTimeout, makeEmulator: VonageSMSEmulator.init(context:))
    }
}

@Suite("Vonage SMS API")
struct VonageSMSTests {
    static func start(_ to: String, locales: [String] = ["en"]) throws(GatewayError) -> StartVerification {
        StartVerification(
            destination: .phone(try PhoneNumber(parsing: to)), channel: .sms, locales: locales,
            verificationID: "vf_0123456789abcdef0123456789abcdef")
    }

    static let subject: ProviderConformance = {
        var subject = ProviderConformance(
            name: "vonage_sms", makeRig: { _ in try VonageSMSRig.make() },
            destination: ProviderConformance.phones("+1415555", digits: 4), rows: VonageErrorMapping.smsRows,
            calls: [:], expiresAfter: 600, stateTable: "")
        subject.checksAreTheGateways = true
        subject.makeRigWithTimeout = { try VonageSMSRig.make(requestTimeout: $0) }
        // The receipt's `sig` is a field of its JSON body, over the other fields.
        subject.tamper = { Self.receipt($0) { $0["price"] = "0.00000001" } }
        subject.unsign = { Self.receipt($0) { $0["sig"] = nil } }
        return subject
    }()

    /// `callback` with its JSON receipt's fields changed by `change`.
    static func receipt(_ callback: VendorCallback, _ change: (inout [String: String]) -> Void) -> VendorCallback {
        var fields = (try? JSONDecoder().decode([String: String].self, from: callback.body)) ?? [:]
        change(&fields)
        var changed = callback
        changed.body = (try? JSONEncoder().encode(fields)) ?? Data()
        return changed
    }

    @Test("Vonage SMS API", arguments: ProviderConformance.Check.allCases)
    func conformance(_ check: ProviderConformance.Check) async throws {
        try await Self.subject.run(check)
    }

    @Test func aStartPostsTheMessageAsTheSMSAPITakesIt() async throws {
        let rig = try VonageSMSRig.make()
        let result = try await rig.provider.start(try Self.start("+14155550100"))
        let request = try #require(rig.recorder.requests.last)
        #expect(request.url.path == VonageSMSRig.mount + "/sms/json")
        #expect(request.headerFields[.contentType] == "application/x-www-form-urlencoded")
        #expect(
            request.headerFields[.authorization]
                == VendorHTTPClient.basicAuthorization(VonageSandbox.apiKey, VonageSandbox.apiSecret))
        let form = try rig.form()
        #expect(form["to"] == "14155550100")
        #expect(form["from"] == "14155550199")
        #expect(form["type"] == "text")
        #expect(form["ttl"] == "600000")
        #expect(form["client-ref"] == "vf_0123456789abcdef0123456789abcdef")
        let message = try #require(rig.outbox.messages(to: "+14155550100").last)
        let code = try #require(message.code)
        #expect(form["text"] == "Your Acme code is \(code). It expires in 10 minutes.")
        #expect(result.reference?.count == 16)
    }

    @Test func ucs2TextGoesAsUnicodeAndAnAlphanumericSenderAsItIs() async throws {
        let rig = try VonageSMSRig.make()
        let result = try await rig.provider.start(try Self.start("+447400123456", locales: ["ja"]))
        let form = try rig.form()
        #expect(form["type"] == "unicode")
        #expect(form["from"] == "Acme")
        #expect(form["to"] == "447400123456")
        let state = try result.state.decode(OwnCodeState.self)
        #expect(state.sends.first?.encoding == .ucs2)
    }

    @Test func aLongMessageIsSentInPartsAndCountedAsVonageCountsThem() async throws {
        let rig = try VonageSMSRig.make(app: String(repeating: "Acme ", count: 40))
        let result = try await rig.provider.start(try Self.start("+14155550100"))
        let state = try result.state.decode(OwnCodeState.self)
        #expect(state.sends.first?.segments == 2)
    }

    /// The concerns an OTP send meets at the SMS API, each as Vonage answers it, and what the gateway makes of it.
    @Test(
        arguments: [
            (3, GatewayError.Code.invalidPhoneNumber), (6, .invalidPhoneNumber), (33, .invalidPhoneNumber),
            (7, .destinationBlocked), (17, .providerRejected), (15, .providerRejected), (29, .providerRejected),
            (1, .providerRateLimited), (9, .providerInsufficientFunds), (4, .providerAuthFailed),
        ])
    func refusalsMapToTheTaxonomy(_ code: Int, _ expected: GatewayError.Code) async throws {
        let rig = try VonageSMSRig.make()
        rig.errors.arm(try #require(VonageErrorMapping.table.row(vocabulary: "sms", code: String(code))))
        let error = await expectGatewayError(expected) { try await rig.provider.start(try Self.start("+14155550100")) }
        #expect(error?.vendor?.code == String(code))
        #expect(error?.sendMayHaveHappened == false)
        #expect(rig.outbox.messages(to: "+14155550100").isEmpty)
    }

    @Test(
        "each delivery receipt err-code maps as its row says",
        arguments: VonageErrorMapping.dlrRows)
    func receiptCodes(_ row: VendorErrorRow) throws {
        let found = try #require(VonageErrorMapping.table.row(vocabulary: "dlr", code: row.code))
        #expect(found.mapsTo == row.mapsTo)
    }

    @Test func everyDocumentedCodeHasOneRow() {
        #expect(
            VonageErrorMapping.smsRows.compactMap { $0.code.flatMap { Int($0) } } == [
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 17, 22, 23, 29, 32, 33,
            ])
        #expect(VonageErrorMapping.dlrRows.compactMap { $0.code.flatMap { Int($0) } } == Array(1...15) + [99])
    }

    @Test func theEmulatorRefusesWhatTheSMSAPIRefuses() async throws {
        let emulator = VonageSMSEmulator(
            context: EmulatorContext(clock: ManualClock(), outbox: SandboxOutbox(), logger: .quiet))
        func post(_ form: [(String, String)], basic: Bool = true) async throws -> VonageSMSWire.Part? {
            var headers = HTTPFields()
            if basic {
                headers[.authorization] = VendorHTTPClient.basicAuthorization(
                    VonageSandbox.apiKey, VonageSandbox.apiSecret)
            }
            let response = await emulator.handle(
                EmulatorRequest(
                    method: .post, path: "/sms/json", query: nil, headerFields: headers,
                    body: Data(FormEncoding.encode(form).utf8)))
            guard case .response(let answer) = response, answer.status.code == 200 else { return nil }
            return try JSONDecoder().decode(VonageSMSWire.Answer.self, from: answer.body).messages.first
        }
        let good = [("from", "Acme"), ("to", "14155550100"), ("text", "Code 123456")]
        #expect(try await post(good)?.status == "0")
        #expect(
            try await post(
                good + [("api_key", VonageSandbox.apiKey), ("api_secret", VonageSandbox.apiSecret)], basic: false)?
                .status == "0")
        #expect(try await post(good, basic: false)?.status == "4")
        #expect(try await post([("from", "Acme"), ("to", "14155550100")])?.status == "2")
        #expect(try await post([("from", "Acme"), ("to", "+1415"), ("text", "x")])?.status == "3")
        #expect(try await post(good + [("ttl", "1000")])?.status == "3")
        #expect(try await post(good + [("callback", "https://" + String(repeating: "a", count: 100))])?.status == "23")
    }
}
