import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayVonage

/// Vonage SMS delivery receipts: asked for with `callback` beside the `client-ref`, signed with `sig`, read into
/// the gateway's delivery statuses and taxonomy.
@Suite("Vonage SMS delivery receipts")
struct VonageSMSReceiptTests {
    static func sender(_ rig: MessagingRig) throws -> VonageSMSSender {
        try #require((rig.provider as? OwnCodeProvider)?.sender as? VonageSMSSender)
    }

    static func callback(_ body: Data, contentType: String = "application/json") -> VendorCallback {
        VendorCallback(
            method: .post, url: URL(string: "http://gateway.test/callbacks/vonage_sms")!, subpath: "/", query: nil,
            headerFields: [.contentType: contentType], body: body)
    }

    /// Vectors computed apart from the code under test (Python's hashlib and hmac over the documented string).
    @Test(
        "the signature is the documented string's MD5 with the secret, or its HMAC",
        arguments: [
            ("md5hash", "baf065662d4e89023bdd4d86c7376fe5"),
            ("md5", "e4cbbcedb023a13e18bbd1cec8065f20"),
            ("sha1", "ada63c1d67309477828ea60d142574a99c2a87fe"),
            ("sha256", "028404c725e7e87f6bd3779dcd8cc8c17e30ce941ba63ac44d84beea7f598984"),
            (
                "sha512",
                "e189ee9d1e5d55beb23c195735784f9c77b8dc43f983ee2712eab95ef44435f077ba7da8b1b8cf35a22aab46c5f47df16b0bffe9479783efcf454e4b05cc4859"
            ),
        ])
    func signature(_ method: String, _ expected: String) {
        let fields = [
            "messageId": "0A0000000123ABCD1", "status": "delivered", "err-code": "0", "client-ref": "vf_x",
            "msisdn": "447700900000", "to": "Acme", "timestamp": "1764860000", "nonce": "a=b&c", "sig": "ignored",
        ]
        #expect(VonageSMSSender.signature(fields, secret: "s3cret", method: method) == expected)
    }

    @Test("a start asks for the receipt at the callback route; the emulator's signed receipt says delivered")
    func delivered() async throws {
        let rig = try VonageSMSRig.make()
        let result = try await rig.provider.start(try VonageSMSTests.start("+14155550100"))
        #expect(try rig.form()["callback"] == "http://gateway.test/callbacks/vonage_sms")
        let callbacks = await rig.callbacks()
        let receipts = try Self.sender(rig).receipts(in: try #require(callbacks.first))
        #expect(
            receipts == [
                DeliveryReceipt(
                    messageID: try #require(result.reference), verificationID: "vf_0123456789abcdef0123456789abcdef",
                    status: .delivered, vendorStatus: "delivered")
            ])
    }

    @Test("each err-code a receipt carries maps as its dlr row says", arguments: VonageErrorMapping.dlrRows)
    func failed(_ row: VendorErrorRow) async throws {
        let rig = try VonageSMSRig.make()
        var armed = row
        armed.operation = VonageSMSEmulator.receiptOperation
        rig.errors.arm(armed)
        _ = try await rig.provider.start(try VonageSMSTests.start("+14155550100"))
        let callback = try #require(await rig.callbacks().first)
        let receipt = try #require(try Self.sender(rig).receipts(in: callback).first)
        #expect(receipt.status == .undelivered && receipt.vendorStatus == "failed")
        #expect(receipt.errorCode == row.code && receipt.error == row.mapsTo)
    }

    @Test(
        "the statuses of the API's description map to the gateway's",
        arguments: [
            ("accepted", DeliveryStatus.sent), ("buffered", .sent), ("unknown", .sent), ("delivered", .delivered),
            ("expired", .undelivered), ("failed", .undelivered), ("rejected", .failed),
        ])
    func statuses(_ name: String, _ status: DeliveryStatus) throws {
        let rig = try VonageSMSRig.make()
        var fields = ["messageId": "0C000001", "status": name, "err-code": "0", "client-ref": "vf_1"]
        fields["sig"] = VonageSMSSender.signature(fields, secret: VonageSandbox.signatureSecret, method: "md5hash")
        let receipt = try Self.sender(rig).receipts(in: Self.callback(try JSONEncoder().encode(fields)))
        #expect(receipt.map(\.status) == [status])
    }

    @Test("a form-encoded receipt (the dashboard's POST format) is read, with an HMAC method too")
    func form() throws {
        let rig = try VonageSMSRig.make(settings: ["signature_method": "sha256"])
        var fields = ["messageId": "0C000002", "status": "delivered", "err-code": "0", "client-ref": "vf_2"]
        fields["sig"] = VonageSMSSender.signature(fields, secret: VonageSandbox.signatureSecret, method: "sha256")
        let body = Data(FormEncoding.encode(fields.sorted { $0.key < $1.key }).utf8)
        let receipts = try Self.sender(rig).receipts(
            in: Self.callback(body, contentType: "application/x-www-form-urlencoded"))
        #expect(receipts.map(\.messageID) == ["0C000002"])
        // The same receipt signed the default way does not pass a sha256 check.
        fields["sig"] = VonageSMSSender.signature(fields, secret: VonageSandbox.signatureSecret, method: "md5hash")
        let wrong = Data(FormEncoding.encode(fields.sorted { $0.key < $1.key }).utf8)
        #expect(throws: GatewayError.self) {
            try Self.sender(rig).receipts(in: Self.callback(wrong, contentType: "application/x-www-form-urlencoded"))
        }
    }

    @Test("without a signature secret no receipt is asked for, and none is believed")
    func unsignedAccount() async throws {
        let rig = try VonageSMSRig.make(settings: ["signature_secret": ""])
        _ = try await rig.provider.start(try VonageSMSTests.start("+14155550100"))
        #expect(try rig.form()["callback"] == nil)
        let provider = try #require(rig.provider as? OwnCodeProvider)
        let fields = ["messageId": "0C000003", "status": "delivered", "sig": "00"]
        await expectGatewayError(.unauthorized) {
            try await provider.handleCallback(
                Self.callback(try JSONEncoder().encode(fields)), lookup: VerificationLookup({ _ in nil }))
        }
    }
}
