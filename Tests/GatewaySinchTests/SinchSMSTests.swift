import Foundation
import GatewayCore
import GatewayKitCrypto
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewaySinch

extension SinchSMSEmulator: ErrorSwitchedEmulator {}

/// A Sinch SMS provider (an own-code provider over ``SinchSMSSender``) wired to a ``SinchSMSEmulator`` in process.
enum SinchSMSRig {
    static let mount = "/sandbox/sinch_sms"
    static let key = HMACOwnCodeKey(secret: Array("the own-code secret of the Sinch SMS tests, 32 bytes+".utf8))!

    static func make(
        requestTimeout: Duration = .seconds(10), app: String = "Acme", settings: [String: String] = [:]
    ) throws -> MessagingRig {
        try MessagingRig(
            SinchSMSPlugin.plugin, mount: mount,
            ownCodes: OwnCodeSettings(
                key: key, catalog: MessageCatalog(app: app),
                senders: try SenderTable(fallback: .alphanumeric("Acme"), byCountry: ["US": .number("+14155550199")])),
            settings: settings, requestTimeout: requestTimeout, makeEmulator: SinchSMSEmulator.init(context:))
    }

    static func sender(_ rig: MessagingRig) throws -> SinchSMSSender {
        try #require((rig.provider as? OwnCodeProvider)?.sender as? SinchSMSSender)
    }
}

@Suite("Sinch SMS")
struct SinchSMSTests {
    static let verificationID = "vf_0123456789abcdef0123456789abcdef"

    static func start(_ to: String, locales: [String] = ["en"]) throws(GatewayError) -> StartVerification {
        StartVerification(
            destination: .phone(try PhoneNumber(parsing: to)), channel: .sms, locales: locales,
            verificationID: verificationID)
    }

    static let subject: ProviderConformance = {
        var subject = ProviderConformance(
            name: "sinch_sms", makeRig: { _ in try SinchSMSRig.make() },
            destination: ProviderConformance.phones("+1415555", digits: 4),
            rows: SinchSMSErrorMapping.requestRows, calls: [VendorOperation.sendBatch.name: .start], expiresAfter: 600,
            stateTable: "")
        subject.checksAreTheGateways = true
        subject.signatureHeaders = [SinchSMSWire.signatureHeader]
        subject.makeRigWithTimeout = { try SinchSMSRig.make(requestTimeout: $0) }
        return subject
    }()

    @Test("Sinch SMS", arguments: ProviderConformance.Check.allCases)
    func conformance(_ check: ProviderConformance.Check) async throws {
        try await Self.subject.run(check)
    }

    @Test func aStartPostsOneBatchAsSinchTakesIt() async throws {
        let rig = try SinchSMSRig.make()
        let result = try await rig.provider.start(try Self.start("+14155550100"))
        let request = try #require(rig.recorder.requests.last)
        #expect(request.url.path == SinchSMSRig.mount + "/xms/v1/\(SinchSandbox.servicePlanID)/batches")
        #expect(request.headerFields[.contentType] == "application/json")
        #expect(request.headerFields[.authorization] == "Bearer " + SinchSandbox.smsAPIToken)
        let body = try rig.json()
        #expect(body["to"] == .array([.string("+14155550100")]))
        #expect(body["from"] == .string("+14155550199"))
        #expect(body["type"] == .string("mt_text"))
        #expect(body["client_reference"] == .string(Self.verificationID))
        #expect(body["delivery_report"] == .string("per_recipient_final"))
        #expect(body["callback_url"] == .string("http://gateway.test/callbacks/sinch_sms/" + Self.verificationID))
        // Sinch stops trying when the code expires (10 minutes from the rig's clock).
        let expiry = try #require(body["expire_at"]?.stringValue.flatMap(VendorDate.parseISO8601))
        #expect(expiry == rig.clock.now.addingTimeInterval(600))
        let message = try #require(rig.outbox.messages(to: "+14155550100").last)
        let code = try #require(message.code)
        #expect(body["body"] == .string("Your Acme code is \(code). It expires in 10 minutes."))
        #expect(result.reference?.count == 26)
        #expect(result.billedSegments == 1)
    }

    @Test func anAlphanumericSenderAndTheGatewaysOwnPartCount() async throws {
        let rig = try SinchSMSRig.make(app: String(repeating: "Acme ", count: 40))
        let result = try await rig.provider.start(try Self.start("+447400123456"))
        #expect(try rig.json()["from"] == .string("Acme"))
        // The batch says nothing of parts: the gateway's measurement stands.
        let state = try result.state.decode(OwnCodeState.self)
        #expect(state.sends.first?.segments == 2)
    }

    @Test func withoutAWebhookSecretNoReportIsAskedForAndNoneIsBelieved() async throws {
        let rig = try SinchSMSRig.make(settings: ["webhook_secret": ""])
        _ = try await rig.provider.start(try Self.start("+14155550100"))
        let body = try rig.json()
        #expect(body["callback_url"] == nil && body["delivery_report"] == nil)
        await expectGatewayError(.unauthorized) {
            _ = try SinchSMSRig.sender(rig).receipts(in: SinchSMSReportTests.callback(Data("{}".utf8)))
        }
    }

    /// Every request row, as the emulator answers it, and what the gateway makes of it.
    @Test(arguments: SinchSMSErrorMapping.requestRows)
    func refusalsMapToTheTaxonomy(_ row: VendorErrorRow) async throws {
        let rig = try SinchSMSRig.make()
        rig.errors.arm(row)
        let error = await expectGatewayError(row.mapsTo) {
            try await rig.provider.start(try Self.start("+14155550100"))
        }
        #expect(error?.vendor?.code == row.code)
        #expect(error?.vendor?.httpStatus == row.httpStatus)
        #expect(rig.outbox.messages(to: "+14155550100").isEmpty)
    }

    @Test func aServerErrorIsUnavailableAndAMessagingServiceSenderIsRefusedBeforeAnyCall() async throws {
        let rig = try SinchSMSRig.make()
        rig.faults.set(FaultSwitch.Faults(serverErrorStatus: 503, remaining: 1))
        await expectGatewayError(.providerUnavailable) { try await rig.provider.start(try Self.start("+14155550100")) }
        let service = try MessagingRig(
            SinchSMSPlugin.plugin, mount: SinchSMSRig.mount,
            ownCodes: OwnCodeSettings(
                key: SinchSMSRig.key, catalog: MessageCatalog(app: "Acme"),
                senders: try SenderTable(fallback: .messagingService("MG" + String(repeating: "a", count: 32)))),
            makeEmulator: SinchSMSEmulator.init(context:))
        await expectGatewayError(.providerRejected) { try await service.provider.start(try Self.start("+14155550100")) }
        #expect(service.recorder.requests.isEmpty)
    }

    @Test func theEmulatorRefusesWhatSinchRefuses() async throws {
        let emulator = SinchSMSEmulator(
            context: EmulatorContext(clock: ManualClock(), outbox: SandboxOutbox(), logger: .quiet))
        func post(
            _ body: [String: JSONValue], token: String = SinchSandbox.smsAPIToken,
            plan: String = SinchSandbox.servicePlanID, type: String = "application/json"
        ) async throws -> (Int, String?) {
            let response = await emulator.handle(
                EmulatorRequest(
                    method: .post, path: "/xms/v1/\(plan)/batches", query: nil,
                    headerFields: [.authorization: "Bearer " + token, .contentType: type],
                    body: try JSONEncoder().encode(body)))
            guard case .response(let answer) = response else { return (0, nil) }
            let code = (try? JSONDecoder().decode(SinchSMSWire.Problem.self, from: answer.body))?.code
            return (answer.status.code, code)
        }
        let good: [String: JSONValue] = ["to": ["+14155550100"], "from": "+14155550199", "body": "Code 123456"]
        #expect(try await post(good) == (201, nil))
        #expect(try await post(good, token: "wrong") == (401, nil))
        #expect(try await post(good, plan: "0000") == (404, nil))
        #expect(try await post(good, type: "text/plain") == (415, nil))
        #expect(try await post(good.merging(["to": ["14155550100"]]) { $1 }) == (201, nil))
        #expect(try await post(good.merging(["to": ["+1415x"]]) { $1 }) == (400, "syntax_invalid_parameter_format"))
        #expect(try await post(good.merging(["to": []]) { $1 }) == (400, "syntax_constraint_violation"))
        #expect(try await post(good.filter { $0.key != "body" }) == (400, "syntax_invalid_json"))
        let long = JSONValue.string(String(repeating: "x", count: 1601))
        #expect(try await post(good.merging(["body": long]) { $1 }) == (400, "syntax_constraint_violation"))
        #expect(try await post(good.merging(["delivery_report": "full"]) { $1 }) == (403, "missing_callback_url"))
        #expect(
            try await post(good.merging(["delivery_report": "sometimes"]) { $1 })
                == (400, "syntax_invalid_parameter_format"))
        #expect(
            try await post(good.merging(["expire_at": "2000-01-01T00:00:00Z"]) { $1 })
                == (400, "syntax_constraint_violation"))
    }
}

/// Sinch delivery reports: asked for per batch with `callback_url` and `per_recipient_final`, signed with
/// HMAC-SHA256 over `body.nonce.timestamp`, read into the gateway's delivery statuses and taxonomy.
@Suite("Sinch SMS delivery reports")
struct SinchSMSReportTests {
    static func callback(
        _ body: Data, subpath: String = "/" + SinchSMSTests.verificationID,
        secret: String = SinchSandbox.smsWebhookSecret
    ) -> VendorCallback {
        let nonce = "01FJA8B4A7BM43YGWSG9GBV067"
        let timestamp = "1700000000"
        return VendorCallback(
            method: .post, url: URL(string: "http://gateway.test/callbacks/sinch_sms" + subpath)!, subpath: subpath,
            query: nil,
            headerFields: [
                .contentType: "application/json", SinchSMSWire.nonceHeader: nonce,
                SinchSMSWire.timestampHeader: timestamp, SinchSMSWire.algorithmHeader: "HmacSHA256",
                SinchSMSWire.signatureHeader: SinchSMSSender.signature(
                    body, nonce: nonce, timestamp: timestamp, secret: secret),
            ], body: body)
    }

    static func report(status: String, code: Int, type: String = "recipient_delivery_report_sms") -> Data {
        let report: JSONValue = [
            "type": .string(type), "batch_id": "01FC66621XXXXX119Z8PMV1QPQ", "recipient": "+14155550100",
            "status": .string(status), "code": .number(Double(code)), "at": "2026-12-07T10:00:00.000Z",
            "client_reference": .string(SinchSMSTests.verificationID),
        ]
        return (try? JSONEncoder().encode(report)) ?? Data()
    }

    @Test("a start asks for its report; the emulator's signed report says delivered")
    func delivered() async throws {
        let rig = try SinchSMSRig.make()
        let result = try await rig.provider.start(try SinchSMSTests.start("+14155550100"))
        let callbacks = await rig.callbacks()
        let receipts = try callbacks.flatMap { try SinchSMSRig.sender(rig).receipts(in: $0) }
        #expect(
            receipts == [
                DeliveryReceipt(
                    messageID: try #require(result.reference), verificationID: SinchSMSTests.verificationID,
                    status: .delivered, vendorStatus: "Delivered")
            ])
    }

    @Test("each code a report carries maps as its row says", arguments: SinchSMSErrorMapping.deliveryRows)
    func failed(_ row: VendorErrorRow) async throws {
        let rig = try SinchSMSRig.make()
        var armed = row
        armed.operation = SinchSMSEmulator.receiptOperation
        rig.errors.arm(armed)
        _ = try await rig.provider.start(try SinchSMSTests.start("+14155550100"))
        let last = try #require(await rig.callbacks().last)
        let receipt = try #require(try SinchSMSRig.sender(rig).receipts(in: last).first)
        #expect(receipt.status == .undelivered && receipt.vendorStatus == "Failed")
        #expect(receipt.errorCode == row.code && receipt.error == row.mapsTo)
    }

    @Test(
        "the statuses of Sinch's reports map to the gateway's",
        arguments: [
            ("Queued", DeliveryStatus.queued), ("Dispatched", .sent), ("Unknown", .sent), ("Delivered", .delivered),
            ("Failed", .undelivered), ("Expired", .undelivered), ("Deleted", .undelivered), ("Rejected", .failed),
            ("Aborted", .failed), ("Cancelled", .failed),
        ])
    func statuses(_ name: String, _ status: DeliveryStatus) throws {
        let rig = try SinchSMSRig.make()
        let receipts = try SinchSMSRig.sender(rig).receipts(in: Self.callback(Self.report(status: name, code: 0)))
        #expect(receipts.map(\.status) == [status])
    }

    @Test("an SMPP code no row names is delivery_failed; a delivered report carries no error")
    func unknownCode() throws {
        let rig = try SinchSMSRig.make()
        let sender = try SinchSMSRig.sender(rig)
        let failed = try sender.receipts(in: Self.callback(Self.report(status: "Failed", code: 62)))
        #expect(failed.first?.error == .deliveryFailed && failed.first?.errorCode == "62")
        let delivered = try sender.receipts(in: Self.callback(Self.report(status: "Delivered", code: 0)))
        #expect(delivered.first?.error == nil && delivered.first?.errorCode == nil)
    }

    @Test("a forged, unsigned or wrongly keyed report is refused; a batch report is taken with no receipt")
    func refused() async throws {
        let rig = try SinchSMSRig.make()
        let sender = try SinchSMSRig.sender(rig)
        var forged = Self.callback(Self.report(status: "Delivered", code: 0))
        forged.body = Self.report(status: "Failed", code: 402)
        await expectGatewayError(.unauthorized) { _ = try sender.receipts(in: forged) }
        var unsigned = Self.callback(Self.report(status: "Delivered", code: 0))
        unsigned.headerFields[SinchSMSWire.signatureHeader] = nil
        await expectGatewayError(.unauthorized) { _ = try sender.receipts(in: unsigned) }
        let otherKey = Self.callback(Self.report(status: "Delivered", code: 0), secret: "another secret")
        await expectGatewayError(.unauthorized) { _ = try sender.receipts(in: otherKey) }
        var otherAlgorithm = Self.callback(Self.report(status: "Delivered", code: 0))
        otherAlgorithm.headerFields[SinchSMSWire.algorithmHeader] = "HmacSHA1"
        await expectGatewayError(.unauthorized) { _ = try sender.receipts(in: otherAlgorithm) }
        let batch = Self.callback(Self.report(status: "Delivered", code: 0, type: "delivery_report_sms"))
        #expect(try sender.receipts(in: batch).isEmpty)
        await expectGatewayError(.invalidRequest) {
            _ = try sender.receipts(in: Self.callback(Data("[1]".utf8)))
        }
    }
}
