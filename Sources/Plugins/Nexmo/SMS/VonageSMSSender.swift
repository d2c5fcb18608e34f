import Crypto
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
/// ``VonageErrorMapping``. With a signature secret, each message asks for its delivery receipt at the provider's
/// callback route; the verification id goes as `client-ref`, which the signed receipt echoes.
struct VonageSMSSender: ReceiptReadingSender {
    let configuration: VonageSMSConfiguration
    let client: VendorHTTPClient
    /// The provider's callback route, when receipts can be checked and the URL fits the API's 100 characters.
    let receiptURL: String?

    init(context: ProviderContext) throws(ConfigurationError) {
        configuration = try VonageSMSConfiguration(settings: context.settings, providerID: context.providerID)
        client = VendorHTTPClient(vendor: "Vonage", context: context, baseURL: configuration.baseURL)
        let url = configuration.signatureSecret == nil ? nil : context.callbackURL?.absoluteString
        receiptURL = url.flatMap { $0.count <= 100 ? $0 : nil }
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
        if let receiptURL { form.append(("callback", receiptURL)) }
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

extension VonageSMSSender {
    /// A delivery receipt, POST-JSON (the API's description) or POST form, with `sig` over every other parameter.
    func receipts(in callback: VendorCallback) throws(GatewayError) -> [DeliveryReceipt] {
        let fields: [String: String]
        if callback.headerFields[.contentType]?.hasPrefix("application/json") == true {
            guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: callback.body) else {
                throw GatewayError.invalidRequest("The delivery receipt is not a JSON object.")
            }
            fields = object.compactMapValues { if case .string(let text) = $0 { text } else { nil } }
        } else {
            fields = FormEncoding.decode(String(decoding: callback.body, as: UTF8.self))
        }
        guard let secret = configuration.signatureSecret, let sig = fields["sig"],
            ConstantTime.equals(
                sig.lowercased(), Self.signature(fields, secret: secret, method: configuration.signatureMethod))
        else { throw client.refusedCallback("bad sig") }
        guard let id = fields["messageId"], let name = fields["status"] else {
            throw GatewayError.invalidRequest("The delivery receipt names no message or no status.")
        }
        let code = fields["err-code"].flatMap { $0 == "0" || $0.isEmpty ? nil : $0 }
        let error = code.map { VonageErrorMapping.mapDLR(code: $0, providerID: client.providerID).code }
        let status: DeliveryStatus =
            switch name {
            case "delivered": .delivered
            case "expired", "failed": .undelivered
            case "rejected": .failed
            default: .sent  // accepted, buffered, unknown: handed on, nothing confirmed
            }
        return [
            DeliveryReceipt(
                messageID: id, verificationID: fields["client-ref"], status: status, vendorStatus: name,
                errorCode: code, error: error)
        ]
    }

    /// The hex `sig` of `fields`: every one but `sig`, sorted by key, as `&key=value` with `&` and `=` in values
    /// made `_`; then MD5 of that and the secret (`md5hash`), or its HMAC under the secret.
    static func signature(_ fields: [String: String], secret: String, method: String) -> String {
        let text = fields.filter { $0.key != "sig" }.sorted { $0.key < $1.key }.map { key, value in
            "&" + key + "=" + value.replacingOccurrences(of: "&", with: "_").replacingOccurrences(of: "=", with: "_")
        }.joined()
        let key = SymmetricKey(data: Data(secret.utf8))
        let data = Data(text.utf8)
        return switch method {
        case "md5": Hex.lowercase(HMAC<Insecure.MD5>.authenticationCode(for: data, using: key))
        case "sha1": Hex.lowercase(HMAC<Insecure.SHA1>.authenticationCode(for: data, using: key))
        case "sha256": Hex.lowercase(HMAC<SHA256>.authenticationCode(for: data, using: key))
        case "sha512": Hex.lowercase(HMAC<SHA512>.authenticationCode(for: data, using: key))
        default: Hex.lowercase(Insecure.MD5.hash(data: Data((text + secret).utf8)))
        }
    }
}
