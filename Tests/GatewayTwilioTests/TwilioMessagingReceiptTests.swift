import Foundation
import GatewayCore
import GatewayKitCrypto
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayTwilio

/// Twilio Programmable Messaging status callbacks: asked for with `StatusCallback` at the provider's callback
/// route with the verification id in its path, signed with `X-Twilio-Signature`, read into delivery receipts.
@Suite("Twilio Programmable Messaging status callbacks")
struct TwilioMessagingReceiptTests {
    static func sender(_ rig: MessagingRig) throws -> TwilioMessagingSender {
        try #require((rig.provider as? OwnCodeProvider)?.sender as? TwilioMessagingSender)
    }

    static let keySID = "SK" + String(repeating: "ab", count: 16)
    static let route = "http://gateway.test/callbacks/twilio_messaging"

    @Test("a start asks for status callbacks under the verification's id; the emulator sends sent, then delivered")
    func delivered() async throws {
        let rig = try TwilioMessagingRig.make()
        let result = try await rig.provider.start(try TwilioMessagingTests.start("+14155550100"))
        #expect(try rig.form()["StatusCallback"] == Self.route + "/vf_0123456789abcdef0123456789abcdef")
        for _ in 0..<600 where rig.sink.requests.count < 2 {
            try await Task.sleep(for: .milliseconds(100))
        }
        let receipts = try rig.sink.vendorCallbacks.flatMap { try Self.sender(rig).receipts(in: $0) }
        #expect(receipts.map(\.status) == [.sent, .delivered])
        #expect(receipts.allSatisfy { $0.messageID == result.reference && $0.errorCode == nil })
        #expect(receipts.allSatisfy { $0.verificationID == "vf_0123456789abcdef0123456789abcdef" })
    }

    @Test("an API key alone cannot check a signature, so no receipts are asked for; webhook_auth_token can")
    func apiKeys() async throws {
        let alone = try TwilioMessagingRig.make(settings: ["api_key_sid": Self.keySID])
        _ = try await alone.provider.start(try TwilioMessagingTests.start("+14155550101"))
        #expect(try alone.form()["StatusCallback"] == nil)

        let signed = try TwilioMessagingRig.make(
            settings: ["api_key_sid": Self.keySID, "webhook_auth_token": TwilioSandbox.authToken])
        _ = try await signed.provider.start(try TwilioMessagingTests.start("+14155550102"))
        #expect(try signed.form()["StatusCallback"]?.hasPrefix(Self.route + "/vf_") == true)
        let callback = try #require(await signed.callbacks().first)
        #expect(try Self.sender(signed).receipts(in: callback).first?.status == .sent)
    }

    /// The vector is Python's `hmac` over the URL and the sorted parameters, computed apart from the code.
    @Test("a signed undelivered callback maps its ErrorCode; a changed parameter or URL is refused")
    func vector() async throws {
        let rig = try TwilioMessagingRig.make(settings: ["auth_token": "tok"])
        let sender = try Self.sender(rig)
        func callback(_ url: String, status: String = "undelivered", signature: String = "9Icq0knQ5HttqKnOoF+hCpVoEw4=")
            -> VendorCallback
        {
            var headers = HTTPFields()
            headers[.contentType] = "application/x-www-form-urlencoded"
            headers[TwilioPushCrypto.signatureHeader] = signature
            return VendorCallback(
                method: .post, url: URL(string: url)!, subpath: "/vf_abc", query: nil, headerFields: headers,
                body: Data("MessageSid=SM1&MessageStatus=\(status)&ErrorCode=30003".utf8))
        }
        let receipts = try sender.receipts(in: callback(Self.route + "/vf_abc"))
        #expect(
            receipts == [
                DeliveryReceipt(
                    messageID: "SM1", verificationID: "vf_abc", status: .undelivered, vendorStatus: "undelivered",
                    errorCode: "30003", error: .deliveryFailed)
            ])
        await expectGatewayError(.unauthorized) {
            _ = try sender.receipts(in: callback(Self.route + "/vf_abc", status: "delivered"))
        }
        await expectGatewayError(.unauthorized) { _ = try sender.receipts(in: callback(Self.route + "/vf_abd")) }
        await expectGatewayError(.unauthorized) {
            _ = try sender.receipts(in: callback(Self.route + "/vf_abc", signature: ""))
        }
    }

    @Test(
        "a receipt the emulator is armed to fail arrives undelivered (or failed, for 30001 and 30002) with its code",
        arguments: [("30003", "undelivered", DeliveryStatus.undelivered), ("30001", "failed", .failed)])
    func failed(_ code: String, _ name: String, _ status: DeliveryStatus) async throws {
        let rig = try TwilioMessagingRig.make()
        let row = try #require(TwilioErrorMapping.table.rows.first { $0.code == code })
        var armed = row
        armed.operation = TwilioMessagingEmulator.receiptOperation
        rig.errors.arm(armed)
        _ = try await rig.provider.start(try TwilioMessagingTests.start("+14155550103"))
        for _ in 0..<600 where rig.sink.requests.count < 2 {
            try await Task.sleep(for: .milliseconds(100))
        }
        let last = try #require(try rig.sink.vendorCallbacks.flatMap { try Self.sender(rig).receipts(in: $0) }.last)
        #expect(last.status == status && last.vendorStatus == name)
        #expect(last.errorCode == code && last.error == row.mapsTo)
    }
}
