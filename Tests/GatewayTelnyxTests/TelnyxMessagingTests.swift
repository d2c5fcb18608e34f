import Crypto
import Foundation
import GatewayCore
import GatewayKitCrypto
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayTelnyx

extension TelnyxMessagingEmulator: ErrorSwitchedEmulator {}

/// A Telnyx Messaging provider (an own-code provider over ``TelnyxMessagingSender``) wired to a
/// ``TelnyxMessagingEmulator`` in process.
enum TelnyxMessagingRig {
    static let mount = "/sandbox/telnyx_messaging"
    static let key = HMACOwnCodeKey(secret: Array("the own-code secret of the Telnyx messaging tests, 32+".utf8))!

    static func make(
        requestTimeout: Duration = .seconds(10), app: String = "Acme", settings: [String: String] = [:]
    ) throws -> MessagingRig {
        try MessagingRig(
            TelnyxMessagingPlugin.plugin, mount: mount,
            ownCodes: OwnCodeSettings(
                key: key, catalog: MessageCatalog(app: app),
                senders: try SenderTable(fallback: .alphanumeric("Acme"), byCountry: ["US": .number("+14155550199")])),
            settings: settings, requestTimeout: requestTimeout, makeEmulator: TelnyxMessagingEmulator.init(context:))
    }

    static func sender(_ rig: MessagingRig) throws -> TelnyxMessagingSender {
        try #require((rig.provider as? OwnCodeProvider)?.sender as? TelnyxMessagingSender)
    }
}

@Suite("Telnyx Messaging")
struct TelnyxMessagingTests {
    static let verificationID = "vf_0123456789abcdef0123456789abcdef"

    static func start(_ to: String, locales: [String] = ["en"]) throws(GatewayError) -> StartVerification {
        StartVerification(
            destination: .phone(try PhoneNumber(parsing: to)), channel: .sms, locales: locales,
            verificationID: verificationID)
    }

    static let subject: ProviderConformance = {
        var subject = ProviderConformance(
            name: "telnyx_messaging", makeRig: { _ in try TelnyxMessagingRig.make() },
            destination: ProviderConformance.phones("+1415555", digits: 4),
            rows: TelnyxMessagingErrorMapping.requestRows, calls: [:], expiresAfter: 600, stateTable: "")
        subject.checksAreTheGateways = true
        subject.signatureHeaders = [TelnyxWire.signatureHeader]
        subject.makeRigWithTimeout = { try TelnyxMessagingRig.make(requestTimeout: $0) }
        return subject
    }()

    @Test("Telnyx Messaging", arguments: ProviderConformance.Check.allCases)
    func conformance(_ check: ProviderConformance.Check) async throws {
        try await Self.subject.run(check)
    }

    @Test func aStartPostsTheMessageAsTelnyxTakesIt() async throws {
        let rig = try TelnyxMessagingRig.make()
        let result = try await rig.provider.start(try Self.start("+14155550100"))
        let request = try #require(rig.recorder.requests.last)
        #expect(request.url.path == TelnyxMessagingRig.mount + "/v2/messages")
        #expect(request.headerFields[.contentType] == "application/json")
        #expect(request.headerFields[.authorization] == "Bearer " + TelnyxSandbox.apiKey)
        let body = try rig.json()
        #expect(body["to"] == .string("+14155550100"))
        #expect(body["from"] == .string("+14155550199"))
        #expect(body["type"] == .string("SMS"))
        #expect(body["messaging_profile_id"] == .string(TelnyxSandbox.messagingProfileID))
        #expect(body["webhook_url"] == .string("http://gateway.test/callbacks/telnyx_messaging/" + Self.verificationID))
        let message = try #require(rig.outbox.messages(to: "+14155550100").last)
        let code = try #require(message.code)
        #expect(body["text"] == .string("Your Acme code is \(code). It expires in 10 minutes."))
        #expect(result.reference.flatMap(UUID.init(uuidString:)) != nil)
        #expect(result.billedSegments == 1)
    }

    @Test func anAlphanumericSenderGoesWithTheProfileAndTelnyxCountsTheParts() async throws {
        let rig = try TelnyxMessagingRig.make(app: String(repeating: "Acme ", count: 40))
        let result = try await rig.provider.start(try Self.start("+447400123456"))
        #expect(try rig.json()["from"] == .string("Acme"))
        let state = try result.state.decode(OwnCodeState.self)
        #expect(state.sends.first?.segments == 2)
    }

    @Test func withoutAPublicKeyNoWebhookIsAskedForAndNoneIsBelieved() async throws {
        let rig = try TelnyxMessagingRig.make(settings: ["public_key": ""])
        _ = try await rig.provider.start(try Self.start("+14155550100"))
        #expect(try rig.json()["webhook_url"] == nil)
        await expectGatewayError(.unauthorized) {
            _ = try TelnyxMessagingRig.sender(rig).receipts(
                in: TelnyxMessagingReceiptTests.callback(Data("{}".utf8), at: rig.clock.now))
        }
    }

    /// The concerns an OTP send meets at Telnyx, each as the sandbox answers it, and what the gateway makes of it.
    @Test(
        arguments: [
            ("40310", GatewayError.Code.invalidPhoneNumber), ("10016", .invalidPhoneNumber),
            ("40300", .destinationBlocked), ("40309", .unsupportedDestination), ("40306", .providerRejected),
            ("10011", .providerRateLimited), ("20100", .providerInsufficientFunds),
            ("40333", .providerInsufficientFunds),
        ])
    func refusalsMapToTheTaxonomy(_ code: String, _ expected: GatewayError.Code) async throws {
        let rig = try TelnyxMessagingRig.make()
        rig.errors.arm(try #require(TelnyxMessagingErrorMapping.table.row(anyStatus: code)))
        let error = await expectGatewayError(expected) { try await rig.provider.start(try Self.start("+14155550100")) }
        #expect(error?.vendor?.code == code)
        #expect(rig.outbox.messages(to: "+14155550100").isEmpty)
    }

    @Test func aMessagingServiceSenderIsRefusedBeforeAnyCall() async throws {
        let rig = try MessagingRig(
            TelnyxMessagingPlugin.plugin, mount: TelnyxMessagingRig.mount,
            ownCodes: OwnCodeSettings(
                key: TelnyxMessagingRig.key, catalog: MessageCatalog(app: "Acme"),
                senders: try SenderTable(fallback: .messagingService("MG" + String(repeating: "a", count: 32)))),
            makeEmulator: TelnyxMessagingEmulator.init(context:))
        await expectGatewayError(.providerRejected) { try await rig.provider.start(try Self.start("+14155550100")) }
        #expect(rig.recorder.requests.isEmpty)
    }

    @Test func theEmulatorRefusesWhatTelnyxRefuses() async throws {
        let emulator = TelnyxMessagingEmulator(
            context: EmulatorContext(clock: ManualClock(), outbox: SandboxOutbox(), logger: .quiet))
        func post(_ body: [String: String], key: String = TelnyxSandbox.apiKey) async throws -> (Int, String?) {
            let response = await emulator.handle(
                EmulatorRequest(
                    method: .post, path: "/v2/messages", query: nil,
                    headerFields: [.authorization: "Bearer " + key, .contentType: "application/json"],
                    body: try JSONEncoder().encode(body)))
            guard case .response(let answer) = response else { return (0, nil) }
            let code = (try? JSONDecoder().decode(TelnyxWire.Errors.self, from: answer.body))?.errors.first?.code
            return (answer.status.code, code)
        }
        let good = ["from": "+14155550199", "to": "+14155550100", "text": "Code 123456"]
        #expect(try await post(good) == (200, nil))
        #expect(try await post(good, key: "KEYWRONG") == (401, "10009"))
        #expect(try await post(good.merging(["to": "14155550100"]) { $1 }) == (400, "10016"))
        #expect(try await post(good.filter { $0.key != "text" }) == (400, "10004"))
        #expect(try await post(good.merging(["from": "Acme", "to": "+447400123456"]) { $1 }) == (400, "40306"))
        let profile = ["messaging_profile_id": TelnyxSandbox.messagingProfileID]
        #expect(try await post(good.merging(profile) { $1 }.merging(["from": "Acme"]) { $1 }) == (403, "40309"))
        #expect(
            try await post(good.merging(profile) { $1 }.merging(["from": "Acme", "to": "+447400123456"]) { $1 })
                == (200, nil))
        #expect(try await post(good.merging(["text": String(repeating: "x", count: 1600)]) { $1 }) == (400, "40302"))
    }
}

/// Telnyx message webhooks: asked for per message with `webhook_url`, signed with Ed25519 over `timestamp|body`,
/// read into the gateway's delivery statuses and taxonomy.
@Suite("Telnyx Messaging webhooks")
struct TelnyxMessagingReceiptTests {
    static func callback(_ body: Data, subpath: String = "/" + TelnyxMessagingTests.verificationID, at now: Date)
        -> VendorCallback
    {
        let (signature, timestamp) = TelnyxEmulator.sign(body, key: TelnyxEmulator.signingKey, now: now)
        return VendorCallback(
            method: .post, url: URL(string: "http://gateway.test/callbacks/telnyx_messaging" + subpath)!,
            subpath: subpath, query: nil,
            headerFields: [
                .contentType: "application/json", TelnyxWire.signatureHeader: signature,
                TelnyxWire.timestampHeader: timestamp,
            ], body: body)
    }

    static func event(_ type: String, status: String, errors: [[String: String]] = []) -> Data {
        let payload: JSONValue = [
            "id": "40385f64-5717-4562-b3fc-2c963f66afa6", "record_type": "message",
            "to": .array([["phone_number": "+14155550100", "status": .string(status)]]),
            "errors": .array(errors.map { .object($0.mapValues(JSONValue.string)) }),
        ]
        let event: JSONValue = ["data": ["event_type": .string(type), "record_type": "event", "payload": payload]]
        return (try? JSONEncoder().encode(event)) ?? Data()
    }

    @Test("a start names its webhook; the emulator's signed webhooks say sent, then delivered")
    func delivered() async throws {
        let rig = try TelnyxMessagingRig.make()
        let result = try await rig.provider.start(try TelnyxMessagingTests.start("+14155550100"))
        var callbacks = await rig.callbacks()
        for _ in 0..<600 where callbacks.count < 2 {
            try await Task.sleep(for: .milliseconds(100))
            callbacks = rig.sink.vendorCallbacks
        }
        let sender = try TelnyxMessagingRig.sender(rig)
        var receipts: [DeliveryReceipt] = []
        for callback in callbacks { receipts += try sender.receipts(in: callback) }
        let id = try #require(result.reference)
        #expect(
            receipts == [
                DeliveryReceipt(
                    messageID: id, verificationID: TelnyxMessagingTests.verificationID, status: .sent,
                    vendorStatus: "sent"),
                DeliveryReceipt(
                    messageID: id, verificationID: TelnyxMessagingTests.verificationID, status: .delivered,
                    vendorStatus: "delivered"),
            ])
    }

    @Test(
        "each code a message.finalized carries maps as its row says",
        arguments: TelnyxMessagingErrorMapping.deliveryRows)
    func failed(_ row: VendorErrorRow) async throws {
        let rig = try TelnyxMessagingRig.make()
        var armed = row
        armed.operation = TelnyxMessagingEmulator.receiptOperation
        rig.errors.arm(armed)
        _ = try await rig.provider.start(try TelnyxMessagingTests.start("+14155550100"))
        var callbacks = await rig.callbacks()
        for _ in 0..<600 where callbacks.count < 2 {
            try await Task.sleep(for: .milliseconds(100))
            callbacks = rig.sink.vendorCallbacks
        }
        let last = try #require(callbacks.last)
        let receipt = try #require(try TelnyxMessagingRig.sender(rig).receipts(in: last).first)
        #expect(receipt.status == .undelivered && receipt.vendorStatus == "delivery_failed")
        #expect(receipt.errorCode == row.code && receipt.error == row.mapsTo)
    }

    @Test(
        "the recipient statuses of Telnyx's description map to the gateway's",
        arguments: [
            ("queued", DeliveryStatus.queued), ("sending", .queued), ("sent", .sent), ("delivered", .delivered),
            ("delivery_unconfirmed", .sent), ("delivery_failed", .undelivered), ("expired", .undelivered),
            ("sending_failed", .failed),
        ])
    func statuses(_ name: String, _ status: DeliveryStatus) throws {
        let rig = try TelnyxMessagingRig.make()
        let receipts = try TelnyxMessagingRig.sender(rig).receipts(
            in: Self.callback(Self.event("message.finalized", status: name), at: rig.clock.now))
        #expect(receipts.map(\.status) == [status])
    }

    @Test("an unknown delivery code is delivery_failed; a delivered message carries no error")
    func unknownCode() throws {
        let rig = try TelnyxMessagingRig.make()
        let sender = try TelnyxMessagingRig.sender(rig)
        let failed = try sender.receipts(
            in: Self.callback(
                Self.event("message.finalized", status: "delivery_failed", errors: [["code": "49999", "title": "x"]]),
                at: rig.clock.now))
        #expect(failed.first?.error == .deliveryFailed && failed.first?.errorCode == "49999")
        let delivered = try sender.receipts(
            in: Self.callback(
                Self.event("message.finalized", status: "delivered", errors: [["code": "40008", "title": "x"]]),
                at: rig.clock.now))
        #expect(delivered.first?.error == nil && delivered.first?.errorCode == nil)
    }

    @Test("a forged, unsigned or stale webhook is refused; an inbound message is taken with no receipt")
    func refused() async throws {
        let rig = try TelnyxMessagingRig.make()
        let sender = try TelnyxMessagingRig.sender(rig)
        let body = Self.event("message.finalized", status: "delivered")
        var forged = Self.callback(body, at: rig.clock.now)
        forged.body = Self.event("message.finalized", status: "delivery_failed")
        await expectGatewayError(.unauthorized) { _ = try sender.receipts(in: forged) }
        var unsigned = Self.callback(body, at: rig.clock.now)
        unsigned.headerFields[TelnyxWire.signatureHeader] = nil
        await expectGatewayError(.unauthorized) { _ = try sender.receipts(in: unsigned) }
        let stale = Self.callback(body, at: rig.clock.now.addingTimeInterval(-301))
        await expectGatewayError(.unauthorized) { _ = try sender.receipts(in: stale) }
        let inbound = Self.callback(Self.event("message.received", status: "webhook_delivered"), at: rig.clock.now)
        #expect(try sender.receipts(in: inbound).isEmpty)
        let other = Self.callback(Data(#"{"data": {"event_type": "verify.sent"}}"#.utf8), at: rig.clock.now)
        await expectGatewayError(.invalidRequest) { _ = try sender.receipts(in: other) }
    }
}
