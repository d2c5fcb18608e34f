import Foundation
import GatewayCore
import HTTPTypes

extension VendorOperation {
    /// An SMS API send: it may have sent when no answer came.
    static let sendSMS = VendorOperation("send_sms", sendMayHaveHappened: true)
}

/// The Vonage SMS API: one `POST /sms/json` per message, form-encoded, Basic auth, an answer of one element per
/// part (docs/vendors/vonage-sms.md). The API does not detect the encoding, so UCS-2 text goes as
/// `type=unicode`. A refusal comes as a part's non-zero `status` inside a 200, mapped by the `sms` rows of
/// ``VonageErrorMapping``.
struct VonageSMSSender: MessageSender {
    let configuration: VonageSMSConfiguration
    let client: VendorHTTPClient

    init(context: ProviderContext) throws(ConfigurationError) {
        configuration = try VonageSMSConfiguration(settings: context.settings, providerID: context.providerID)
        client = VendorHTTPClient(vendor: "Vonage", context: context, baseURL: configuration.baseURL)
    }

    func send(_ message: OutboundMessage) async throws(GatewayError) -> SentMessage {
        // Numbers go without the `+`; an alphanumeric sender or a short code as it is.
        let from = message.from.value.hasPrefix("+") ? String(message.from.value.dropFirst()) : message.from.value
        // Tried for as long as the code is good, never below the API's 20-second floor.
        let ttl = max(20_000, Int(message.validity.components.seconds) * 1000)
        var form: [(String, String)] = [
            ("from", from), ("to", String(message.to.digits)), ("text", message.text),
            ("type", message.encoding == .ucs2 ? "unicode" : "text"), ("ttl", String(ttl)),
        ]
        if !message.reference.isEmpty { form.append(("client-ref", message.reference)) }
        var headers = HTTPFields()
        headers[.authorization] = VendorHTTPClient.basicAuthorization(configuration.apiKey, configuration.apiSecret)
        headers[.accept] = "application/json"
        let providerID = client.providerID
        let response = try await client.send(.post, "/sms/json", headers: headers, form: form, operation: .sendSMS) {
            answer in
            VonageErrorMapping.mapV2(
                status: answer.status, problem: nil, operation: .sendSMS, retryAfter: answer.retryAfter,
                providerID: providerID)
        }
        let answer = try client.decode(VonageSMSWire.Answer.self, from: response, operation: .sendSMS)
        guard let first = answer.messages.first else {
            throw client.malformed(.sendSMS, httpStatus: response.status.code)
        }
        if let refused = answer.messages.first(where: { $0.status != "0" }) {
            var error = VonageErrorMapping.mapSMS(
                status: refused.status.flatMap { Int($0) } ?? -1, providerID: providerID)
            // A long message whose first parts went out may have reached the phone in part.
            error.sendMayHaveHappened = answer.messages.contains { $0.status == "0" }
            throw client.refused(error, operation: .sendSMS, httpStatus: response.status.code)
        }
        guard let messageID = first.messageID, !messageID.isEmpty else {
            throw client.malformed(.sendSMS, httpStatus: response.status.code)
        }
        return SentMessage(messageID: messageID, status: .queued, segments: answer.messages.count)
    }
}
