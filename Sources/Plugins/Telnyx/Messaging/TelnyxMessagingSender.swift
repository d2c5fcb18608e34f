import Foundation
import GatewayCore
import HTTPTypes

extension VendorOperation {
    /// A `POST /messages`: it may have sent when no answer came.
    static let sendMessage = VendorOperation("send_message", sendMayHaveHappened: true)
}

/// Telnyx Messaging: one `POST /messages` per message, JSON, `Authorization: Bearer` (docs/vendors/telnyx-messaging.md).
/// The answer's `id` is the message id and its `parts` the segments Telnyx bills. Telnyx takes no client reference,
/// so with a public key each message names its own webhook: `…/callbacks/{provider id}/{verification id}`, where
/// its `message.sent` and `message.finalized` webhooks arrive signed with Ed25519 as Telnyx Verify's are.
struct TelnyxMessagingSender: ReceiptReadingSender {
    let configuration: TelnyxMessagingConfiguration
    let client: VendorHTTPClient
    let clock: any WallClock
    /// The provider's callback route, when the gateway has a public address and the key to check webhooks.
    let receiptURL: URL?

    init(context: ProviderContext) throws(ConfigurationError) {
        configuration = try TelnyxMessagingConfiguration(settings: context.settings, providerID: context.providerID)
        client = VendorHTTPClient(vendor: "Telnyx", context: context, baseURL: configuration.baseURL)
        clock = context.clock
        receiptURL = configuration.publicKey == nil ? nil : context.callbackURL
    }

    func send(_ message: OutboundMessage) async throws(GatewayError) -> SentMessage {
        if case .messagingService = message.from {
            throw GatewayError(
                .providerRejected,
                "Provider \(client.providerID) sends through Telnyx, which has no Messaging Service "
                    + "senders: give it a number, a short code or an alphanumeric sender.")
        }
        var body = TelnyxMessagingWire.Send(
            from: message.from.value, to: message.to.e164, text: message.text, type: "SMS",
            messagingProfileId: configuration.messagingProfileID)
        if let receiptURL, !message.reference.isEmpty {
            body.webhookUrl = receiptURL.appending(path: message.reference).absoluteString
        }
        let headers: HTTPFields = [
            .authorization: "Bearer " + configuration.apiKey, .accept: "application/json",
            .contentType: "application/json",
        ]
        let providerID = client.providerID
        let response = try await client.send(
            .post, "/messages", headers: headers, body: try client.snakeCaseJSON(body), operation: .sendMessage
        ) { answer in
            TelnyxMessagingErrorMapping.map(
                status: answer.status, errors: try? JSONDecoder().decode(TelnyxWire.Errors.self, from: answer.body),
                retryAfter: answer.retryAfter, providerID: providerID)
        }
        let sent = try client.decodeSnakeCase(
            TelnyxWire.DataEnvelope<TelnyxMessagingWire.Message>.self, from: response, operation: .sendMessage
        ).data
        guard let id = sent.id, !id.isEmpty,
            let status = TelnyxMessagingWire.deliveryStatus(sent.to?.first?.status ?? "queued")
        else { throw client.malformed(.sendMessage, httpStatus: response.status.code) }
        if status == .failed || status == .undelivered {
            // Refused with a 200: the message's own errors say why.
            let errors = sent.errors.map { TelnyxWire.Errors(errors: $0.map { .init(code: $0.code) }) }
            var error = TelnyxMessagingErrorMapping.map(
                status: response.status.code, errors: errors, retryAfter: nil, providerID: providerID)
            error.sendMayHaveHappened = false
            throw client.refused(error, operation: .sendMessage, httpStatus: response.status.code)
        }
        return SentMessage(messageID: id, status: status, segments: sent.parts.flatMap { $0 > 0 ? $0 : nil })
    }
}

extension TelnyxMessagingSender {
    /// A message webhook: the Ed25519 signature over `timestamp|body` and the timestamp's age checked first, then
    /// the payload's first recipient status and error. `message.received` (an inbound message) carries no
    /// receipt and is taken with none.
    func receipts(in callback: VendorCallback) throws(GatewayError) -> [DeliveryReceipt] {
        guard let key = configuration.publicKey else { throw client.refusedCallback("no public_key") }
        if let problem = TelnyxSignature.problem(
            signature: callback.headerFields[TelnyxWire.signatureHeader],
            timestamp: callback.headerFields[TelnyxWire.timestampHeader], body: callback.body, publicKey: key,
            now: clock.now)
        {
            throw client.refusedCallback(problem)
        }
        guard
            let event = (try? SnakeCaseJSON.decoder.decode(TelnyxMessagingWire.Event.self, from: callback.body))?.data,
            event.eventType.hasPrefix("message.")
        else { throw GatewayError.invalidRequest("The callback body is not a Telnyx message webhook.") }
        guard event.eventType == "message.sent" || event.eventType == "message.finalized" else { return [] }
        guard let message = event.payload, let id = message.id, let name = message.to?.first?.status,
            let status = TelnyxMessagingWire.deliveryStatus(name)
        else { throw GatewayError.invalidRequest("The message webhook names no message or no status.") }
        let code = status == .delivered ? nil : message.errors?.first?.code
        return [
            DeliveryReceipt(
                messageID: id, verificationID: callback.subpath.split(separator: "/").first.map(String.init),
                status: status, vendorStatus: name, errorCode: code,
                error: code.map(TelnyxMessagingErrorMapping.delivery(code:)))
        ]
    }
}
