import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

/// A sender whose "vendor" posts receipts as JSON `{message_id, status, verification_id?, error_code?}`, signed
/// by an `X-Test-Signature: good` header.
final class ReceiptSender: ReceiptReadingSender {
    let recording = RecordingSender()
    static let signature = HTTPField.Name("X-Test-Signature")!

    func send(_ message: OutboundMessage) async throws(GatewayError) -> SentMessage {
        try await recording.send(message)
    }

    func receipts(in callback: VendorCallback) throws(GatewayError) -> [DeliveryReceipt] {
        guard callback.headerFields[Self.signature] == "good" else {
            throw GatewayError(.unauthorized, "bad signature")
        }
        guard let fields = try? JSONDecoder().decode([String: String].self, from: callback.body),
            let id = fields["message_id"], let name = fields["status"], let status = DeliveryStatus(rawValue: name)
        else { throw GatewayError.invalidRequest("not a receipt") }
        return [
            DeliveryReceipt(
                messageID: id, verificationID: fields["verification_id"], status: status, vendorStatus: name,
                errorCode: fields["error_code"], error: fields["error_code"] == nil ? nil : .deliveryFailed)
        ]
    }

    static func callback(_ fields: [String: String], signature: String = "good") -> VendorCallback {
        VendorCallback(
            method: .post, url: URL(string: "https://gateway.example/callbacks/own_sms")!, subpath: "/", query: nil,
            headerFields: [Self.signature: signature],
            body: (try? JSONEncoder().encode(fields)) ?? Data())
    }
}

@Suite("Delivery receipts of the gateway's own messages")
struct DeliveryReceiptTests {
    /// An own-code provider per id, each over a ``ReceiptSender`` of its own, and those senders by id.
    static func providers(_ ids: [String]) throws -> ([any VerificationProvider], [String: ReceiptSender]) {
        var senders: [String: ReceiptSender] = [:]
        var providers: [any VerificationProvider] = []
        for id in ids {
            let sender = ReceiptSender()
            senders[id] = sender
            providers.append(try provider(id, sender: sender))
        }
        return (providers, senders)
    }

    static func provider(_ id: String = "own_sms", sender: any MessageSender) throws -> OwnCodeProvider {
        let settings = OwnCodeSettings(
            key: OwnCodeProviderTests.key,
            catalog: MessageCatalog(app: "Acme", autofill: try MessageAutofill(originBoundHost: "example.com")),
            senders: try SenderTable(fallback: .number("+14155550100")))
        return OwnCodeProvider(id: id, sender: sender, settings: settings, clock: ManualClock())
    }

    @Test("a receipt is a delivery event on the timeline and changes nothing else")
    func recorded() async throws {
        let h = try ServiceHarness([try Self.provider(sender: ReceiptSender())])
        let record = try await h.service.start(try .sms())
        let reply = try await h.service.handleCallback(
            providerID: "own_sms",
            ReceiptSender.callback([
                "message_id": "msg-1", "status": "undelivered", "verification_id": record.id, "error_code": "30003",
            ]))
        #expect(reply.response.status == .ok)
        let deliveries = try await h.events(record.id, .delivery)
        #expect(
            deliveries.map(\.detail) == [
                [
                    "provider": "own_sms", "message_id": "msg-1", "status": "undelivered",
                    "vendor_status": "undelivered", "error_code": "30003", "error": "delivery_failed",
                ]
            ])
        let stored = try await h.stored(record.id)
        #expect(stored.version == record.version && stored.status == .pending)
        #expect(WebhookEventType.of(deliveries[0]) == .delivery)
    }

    @Test("without a verification id the message id finds the verification")
    func byMessageID() async throws {
        let h = try ServiceHarness([try Self.provider(sender: ReceiptSender())])
        let record = try await h.service.start(try .sms())
        _ = try await h.service.handleCallback(
            providerID: "own_sms", ReceiptSender.callback(["message_id": "msg-1", "status": "delivered"]))
        #expect(try await h.events(record.id, .delivery).map { $0.detail["status"] } == ["delivered"])
    }

    @Test("a wrong signature is unauthorized and records nothing")
    func forged() async throws {
        let h = try ServiceHarness([try Self.provider(sender: ReceiptSender())])
        let record = try await h.service.start(try .sms())
        await expectGatewayError(.unauthorized) {
            _ = try await h.service.handleCallback(
                providerID: "own_sms",
                ReceiptSender.callback(
                    ["message_id": "msg-1", "status": "delivered", "verification_id": record.id], signature: "forged"))
        }
        #expect(try await h.events(record.id, .delivery).isEmpty)
    }

    @Test("the same receipt twice, or eight times at once, is one event; a later status is another")
    func repeated() async throws {
        let h = try ServiceHarness([try Self.provider(sender: ReceiptSender())])
        let record = try await h.service.start(try .sms())
        let fields = ["message_id": "msg-1", "status": "sent", "verification_id": record.id]
        _ = try await h.service.handleCallback(providerID: "own_sms", ReceiptSender.callback(fields))
        _ = try await h.service.handleCallback(providerID: "own_sms", ReceiptSender.callback(fields))
        var delivered = fields
        delivered["status"] = "delivered"
        let service = h.service
        let callback = ReceiptSender.callback(delivered)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { _ = try await service.handleCallback(providerID: "own_sms", callback) }
            }
            try await group.waitForAll()
        }
        #expect(try await h.events(record.id, .delivery).map { $0.detail["status"] } == ["sent", "delivered"])
    }

    @Test("a receipt for a verification the gateway does not hold is not_found, so the vendor retries it")
    func unknown() async throws {
        let h = try ServiceHarness([try Self.provider(sender: ReceiptSender())])
        await expectGatewayError(.notFound) {
            _ = try await h.service.handleCallback(
                providerID: "own_sms",
                ReceiptSender.callback([
                    "message_id": "msg-9", "status": "delivered",
                    "verification_id": "vf_" + String(repeating: "0", count: 32),
                ]))
        }
        await expectGatewayError(.notFound) {
            _ = try await h.service.handleCallback(
                providerID: "own_sms", ReceiptSender.callback(["message_id": "msg-9", "status": "delivered"]))
        }
    }

    @Test("receipts of a send before a handover still land; a provider that never sent is not believed")
    func handover() async throws {
        let h = try ServiceHarness([
            try Self.provider("first", sender: ReceiptSender()), try Self.provider("second", sender: ReceiptSender()),
            try Self.provider("third", sender: ReceiptSender()),
        ])
        let record = try await h.service.start(try .sms(forced: "first"))
        _ = try await h.service.resend(id: record.id, request: ResendRequest(provider: "second"))
        _ = try await h.service.handleCallback(
            providerID: "first",
            ReceiptSender.callback(["message_id": "msg-1", "status": "delivered", "verification_id": record.id]))
        _ = try await h.service.handleCallback(
            providerID: "third",
            ReceiptSender.callback(["message_id": "msg-1", "status": "delivered", "verification_id": record.id]))
        #expect(try await h.events(record.id, .delivery).map { $0.detail["provider"] } == ["first"])
        #expect(h.logs.lines(atLeast: .notice).contains { $0.contains("did not send") })
    }

    @Test("a receipt of a verification that has ended is still recorded")
    func afterApproval() async throws {
        let sender = ReceiptSender()
        let h = try ServiceHarness([try Self.provider(sender: sender)])
        let record = try await h.service.start(try .sms())
        #expect(try await h.check(record.id, try sender.recording.code()).record.status == .approved)
        _ = try await h.service.handleCallback(
            providerID: "own_sms",
            ReceiptSender.callback(["message_id": "msg-1", "status": "delivered", "verification_id": record.id]))
        #expect(try await h.events(record.id, .delivery).count == 1)
        #expect(try await h.stored(record.id).status == .approved)
    }

    @Test("over a sender that reads no receipts the provider takes no callbacks")
    func noReceipts() async throws {
        let provider = try Self.provider(sender: RecordingSender())
        #expect(!provider.operations.contains(.callbacks))
        #expect(try Self.provider(sender: ReceiptSender()).operations.contains(.callbacks))
        let h = try ServiceHarness([provider])
        await expectGatewayError(.notFound) {
            _ = try await h.service.handleCallback(
                providerID: "own_sms", ReceiptSender.callback(["message_id": "msg-1", "status": "delivered"]))
        }
    }
}
