import Crypto
import Foundation
import GatewayCore
import HTTPTypes

extension VendorOperation {
    /// A `POST /batches`: it may have sent when no answer came.
    static let sendBatch = VendorOperation("send_batch", sendMayHaveHappened: true)
}

/// Sinch SMS (XMS): one `POST /xms/v1/{service_plan_id}/batches` per message, JSON, `Authorization: Bearer` with the
/// plan's API token (docs/vendors/sinch-sms.md). The answer is the batch, HTTP 201, whose `id` is the reference; it
/// has no parts count, so the gateway's own measurement stands (Sinch picks GSM-7 or UCS-2 from the text as the
/// gateway measures it). Each message asks Sinch to stop trying when the code expires (`expire_at`). With a
/// webhook secret, each one asks for its final report per recipient at the provider's callback route, the
/// verification id in the URL and as `client_reference`.
struct SinchSMSSender: ReceiptReadingSender {
    let configuration: SinchSMSConfiguration
    let client: VendorHTTPClient
    let clock: any WallClock
    /// The provider's callback route, when the gateway has a public address and the secret to check reports.
    let receiptURL: URL?

    init(context: ProviderContext) throws(ConfigurationError) {
        configuration = try SinchSMSConfiguration(settings: context.settings, providerID: context.providerID)
        client = VendorHTTPClient(vendor: "Sinch", context: context, baseURL: configuration.baseURL)
        clock = context.clock
        receiptURL = configuration.webhookSecret == nil ? nil : context.callbackURL
    }

    func send(_ message: OutboundMessage) async throws(GatewayError) -> SentMessage {
        if case .messagingService = message.from {
            throw GatewayError(
                .providerRejected,
                "Provider \(client.providerID) sends through Sinch, which has no Messaging Service senders: give it "
                    + "a number, a short code or an alphanumeric sender.")
        }
        // Never less than a minute: the API wants `expire_at` after the send.
        let validity = max(60, Int(message.validity.components.seconds))
        var body = SinchSMSWire.Send(
            to: [message.to.e164], from: message.from.value, body: message.text, type: "mt_text",
            expireAt: VendorDate.iso8601(clock.now.addingTimeInterval(TimeInterval(validity))))
        if !message.reference.isEmpty { body.clientReference = message.reference }
        if let receiptURL, !message.reference.isEmpty {
            body.deliveryReport = "per_recipient_final"
            body.callbackUrl = receiptURL.appending(path: message.reference).absoluteString
        }
        let headers: HTTPFields = [
            .authorization: "Bearer " + configuration.apiToken, .accept: "application/json",
            .contentType: "application/json",
        ]
        let providerID = client.providerID
        let response = try await client.send(
            .post, "/xms/v1/\(configuration.servicePlanID)/batches", headers: headers,
            body: try client.snakeCaseJSON(body), operation: .sendBatch
        ) { answer in
            SinchSMSErrorMapping.map(
                status: answer.status, problem: try? JSONDecoder().decode(SinchSMSWire.Problem.self, from: answer.body),
                retryAfter: answer.retryAfter, providerID: providerID)
        }
        let batch = try client.decodeSnakeCase(SinchSMSWire.Batch.self, from: response, operation: .sendBatch)
        guard let id = batch.id, !id.isEmpty else {
            throw client.malformed(.sendBatch, httpStatus: response.status.code)
        }
        return SentMessage(messageID: id, status: .queued)
    }
}

extension SinchSMSSender {
    /// A delivery report: the HMAC-SHA256 signature over `body.nonce.timestamp` checked first (as Sinch's SDKs
    /// check it), then the recipient report's status and code. A batch report (`delivery_report_sms`), which the
    /// gateway never asks for, carries no receipt and is taken with none.
    func receipts(in callback: VendorCallback) throws(GatewayError) -> [DeliveryReceipt] {
        guard let secret = configuration.webhookSecret else { throw client.refusedCallback("no webhook_secret") }
        guard let signature = callback.headerFields[SinchSMSWire.signatureHeader],
            let nonce = callback.headerFields[SinchSMSWire.nonceHeader],
            let timestamp = callback.headerFields[SinchSMSWire.timestampHeader]
        else { throw client.refusedCallback("unsigned") }
        let algorithm = callback.headerFields[SinchSMSWire.algorithmHeader] ?? "HmacSHA256"
        guard algorithm.lowercased() == "hmacsha256",
            ConstantTime.equals(
                signature, Self.signature(callback.body, nonce: nonce, timestamp: timestamp, secret: secret))
        else { throw client.refusedCallback("bad signature") }
        guard let report = try? SnakeCaseJSON.decoder.decode(SinchSMSWire.RecipientReport.self, from: callback.body)
        else { throw GatewayError.invalidRequest("The callback body is not a Sinch delivery report.") }
        guard report.type == "recipient_delivery_report_sms" else { return [] }
        guard let batchID = report.batchId, let name = report.status,
            let status = SinchSMSWire.deliveryStatus(name)
        else { throw GatewayError.invalidRequest("The delivery report names no batch or no status.") }
        let failed = status == .undelivered || status == .failed
        let code = failed ? report.code : nil
        let verificationID = callback.subpath.split(separator: "/").first.map(String.init) ?? report.clientReference
        return [
            DeliveryReceipt(
                messageID: batchID, verificationID: verificationID, status: status, vendorStatus: name,
                errorCode: code.map(String.init), error: code.map(SinchSMSErrorMapping.delivery(code:)))
        ]
    }

    /// Base64 of HMAC-SHA256 under `secret` of the raw body, `.`, the nonce, `.`, the timestamp.
    static func signature(_ body: Data, nonce: String, timestamp: String, secret: String) -> String {
        var signed = body
        signed.append(Data(".\(nonce).\(timestamp)".utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.utf8)))
        return Data(mac).base64EncodedString()
    }
}
