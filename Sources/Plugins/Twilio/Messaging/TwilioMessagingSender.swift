import Foundation
import GatewayCore
import HTTPTypes

extension VendorOperation {
    /// A `Messages.json` create: it may have sent when no answer came.
    static let sendMessage = VendorOperation("send_message", sendMayHaveHappened: true)
}

/// Twilio Programmable Messaging: one `POST /2010-04-01/Accounts/{AccountSid}/Messages.json` per message, form
/// encoded, Basic auth, the Message resource as JSON (docs/vendors/twilio-messaging.md). Errors are Twilio's one
/// dictionary, mapped by ``TwilioErrorMapping`` as for Verify. Each message asks for status callbacks at
/// `…/callbacks/{provider id}/{verification id}`, which Twilio signs with the account's auth token, URL and all.
struct TwilioMessagingSender: ReceiptReadingSender {
    let configuration: TwilioMessagingConfiguration
    let client: VendorHTTPClient
    /// The provider's callback route, when the gateway has a public address and the auth token to check them.
    let receiptURL: URL?
    /// `Basic` and the credentials in base64, and the Messages resource's path: the same on every send.
    let authorization: String
    let messagesPath: String

    init(context: ProviderContext) throws(ConfigurationError) {
        configuration = try TwilioMessagingConfiguration(settings: context.settings, providerID: context.providerID)
        client = VendorHTTPClient(vendor: "Twilio", context: context, baseURL: configuration.baseURL)
        receiptURL = configuration.signingToken == nil ? nil : context.callbackURL
        authorization = VendorHTTPClient.basicAuthorization(configuration.username, configuration.authToken)
        messagesPath = "/2010-04-01/Accounts/\(configuration.accountSID)/Messages.json"
    }

    func send(_ message: OutboundMessage) async throws(GatewayError) -> SentMessage {
        var form: [(String, String)] = [("To", message.to.e164), ("Body", message.text)]
        if case .messagingService(let sid) = message.from {
            form.append(("MessagingServiceSid", sid))
        } else {
            form.append(("From", message.from.value))
        }
        // Dropped unsent after the code's validity: a late code is of no use (Twilio takes 1 to 36000 seconds).
        let seconds = min(max(Int(message.validity.components.seconds), 1), 36000)
        form.append(("ValidityPeriod", String(seconds)))
        if let receiptURL, !message.reference.isEmpty {
            form.append(("StatusCallback", receiptURL.appending(path: message.reference).absoluteString))
        }
        var headers = HTTPFields()
        headers[.authorization] = authorization
        headers[.accept] = "application/json"
        let providerID = client.providerID
        let response = try await client.send(
            .post, messagesPath, headers: headers, form: form, operation: .sendMessage
        ) { answer in
            let envelope = try? JSONDecoder().decode(TwilioWire.ErrorEnvelope.self, from: answer.body)
            return TwilioErrorMapping.map(
                code: envelope?.code, httpStatus: answer.status, retryAfter: answer.retryAfter, providerID: providerID)
        }
        let resource: TwilioMessagingWire.Message
        if let fast = TwilioMessagingWire.Message(fastJSON: response.body) {
            resource = fast
        } else {
            resource = try client.decode(TwilioMessagingWire.Message.self, from: response, operation: .sendMessage)
        }
        guard let sid = resource.sid, let status = resource.status.flatMap(TwilioMessagingWire.deliveryStatus) else {
            throw client.malformed(.sendMessage, httpStatus: response.status.code)
        }
        if status == .failed || status == .undelivered {
            // Refused at once with a 2xx: the message's own error code says why.
            var error = TwilioErrorMapping.map(
                code: resource.errorCode, httpStatus: response.status.code, retryAfter: nil, providerID: providerID)
            error.sendMayHaveHappened = false
            throw client.refused(error, operation: .sendMessage, httpStatus: response.status.code)
        }
        // `num_segments` is "0" until a Messaging Service has picked the sender.
        let segments = resource.numSegments.flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        return SentMessage(messageID: sid, status: status, segments: segments)
    }
}

extension TwilioMessagingSender {
    /// A status callback: form-encoded, signed with `X-Twilio-Signature` over the URL (our verification id in its
    /// path) and every parameter; `MessageSid`, `MessageStatus` and, for a failure, `ErrorCode`.
    func receipts(in callback: VendorCallback) throws(GatewayError) -> [DeliveryReceipt] {
        let parameters = TwilioEmulator.formPairs(callback.body)
        guard let token = configuration.signingToken,
            TwilioPushCrypto.isValidWebhook(
                signature: callback.headerFields[TwilioPushCrypto.signatureHeader], url: callback.url.absoluteString,
                parameters: parameters, authToken: token)
        else { throw client.refusedCallback("bad X-Twilio-Signature") }
        let form = Dictionary(parameters, uniquingKeysWith: { _, last in last })
        guard let sid = form["MessageSid"] ?? form["SmsSid"], let name = form["MessageStatus"] ?? form["SmsStatus"],
            let status = TwilioMessagingWire.deliveryStatus(name)
        else { throw GatewayError.invalidRequest("The status callback names no message or no status.") }
        let id = callback.subpath.split(separator: "/").first.map(String.init)
        let code = form["ErrorCode"].flatMap { $0.isEmpty || $0 == "0" ? nil : $0 }
        let error = code.map {
            TwilioErrorMapping.map(code: Int($0), httpStatus: 200, retryAfter: nil, providerID: client.providerID).code
        }
        return [
            DeliveryReceipt(
                messageID: sid, verificationID: id, status: status, vendorStatus: name, errorCode: code, error: error)
        ]
    }
}
