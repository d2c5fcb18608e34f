import Foundation
import GatewayCore
import HTTPTypes
import Synchronization

/// The Vonage SMS API, emulated on the wire for the sandbox and tests: `POST /sms/json`, form-encoded, with the
/// ``VonageSandbox`` key and secret as Basic auth or as `api_key`/`api_secret` fields. It answers HTTP 200 with
/// one element per part (``VonageSMSWire/Answer``), `status` `"0"` and a `message-id` each, or one refused element:
/// 4 for other credentials, 2 for a missing `from`, `to` or `text`, 3 for a `to` that is not 7 to 15 digits, a
/// `ttl` outside 20,000 to 604,800,000 ms or a `client-ref` over 100 characters, 23 for a `callback` over 100.
/// Each message is recorded in the ``SandboxOutbox`` under the plugin id, the recipient with its `+`, and the
/// code read from its text (``SandboxOutbox/Message/code(in:)``).
///
/// A message with a `callback` gets a delivery receipt per part after the answer, POST-JSON and signed (`sig`,
/// method `md5hash`) with ``VonageSandbox/signatureSecret``: `delivered`, or with a `dlr` row armed for
/// ``receiptOperation``, `failed` with that row's `err-code`.
public final class VonageSMSEmulator: ContextEmulator {
    /// The operation name that arms a receipt's `err-code` (`errors.arm` with a `dlr` row of this operation).
    package static let receiptOperation = "delivery_receipt"

    /// The fault switch tests and the sandbox use to make the emulated API misbehave.
    public let faults = FaultSwitch()
    /// Rows of ``VonageErrorMapping/table`` (its `sms` vocabulary) armed to refuse the next send.
    package let errors = EmulatorErrorSwitch()
    /// The clock, outbox and logger the emulator was built with.
    public let context: EmulatorContext
    private let counter = Counter()

    /// An emulator that records its messages in `context.outbox`.
    public init(context: EmulatorContext) {
        self.context = context
    }

    /// Answers one request as the SMS API would, after the fault switch had its say.
    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        await withFaults(serverError: Self.problem) {
            guard request.path == "/sms/json" else { return .response(Self.problem(404)) }
            guard request.method == .post else { return .response(Self.problem(405)) }
            let form = FormEncoding.decode(String(decoding: request.body, as: UTF8.self))
            if let row = errors.take(operation: VendorOperation.sendSMS.name), let code = row.code {
                return .response(Self.refused(code, row.name))
            }
            return .response(send(form, authorization: request.headerFields[.authorization]))
        }
    }

    private func send(_ form: [String: String], authorization: String?) -> TransportResponse {
        let credentials =
            VendorHTTPClient.basicCredentials(authorization) ?? (form["api_key"] ?? "", form["api_secret"] ?? "")
        guard credentials.user == VonageSandbox.apiKey,
            ConstantTime.equals(credentials.password, VonageSandbox.apiSecret)
        else { return Self.refused("4", "Bad Credentials") }
        guard let from = form["from"], !from.isEmpty, let to = form["to"], !to.isEmpty, let text = form["text"],
            !text.isEmpty
        else { return Self.refused("2", "Missing from, to or text") }
        guard (7...15).contains(to.count), to.allSatisfy(\.isNumber) else { return Self.refused("3", "Invalid to") }
        if let ttl = form["ttl"], Int(ttl).map({ (20_000...604_800_000).contains($0) }) != true {
            return Self.refused("3", "Invalid ttl")
        }
        if let reference = form["client-ref"], reference.count > 100 { return Self.refused("3", "Invalid client-ref") }
        if let callback = form["callback"], callback.count > 100 { return Self.refused("23", "Invalid callback") }
        let now = clock.now
        let recorded = SandboxOutbox.Message(
            provider: VonageSMSPlugin.plugin.id, kind: .sms, channel: "sms", to: "+" + to,
            code: SandboxOutbox.Message.code(in: text), text: text, sentAt: now)
        let delivered = outbox.record(recorded)
        let parts = max(1, SMSMeasurement(measuring: text).segments)
        let answer = VonageSMSWire.Answer(
            messageCount: String(parts),
            messages: (0..<parts).map { _ in
                VonageSMSWire.Part(
                    to: to, messageID: counter.nextID(), status: "0", errorText: nil, remainingBalance: "10.00000000",
                    messagePrice: "0.03330000", network: "310260", clientRef: form["client-ref"])
            })
        if let url = form["callback"].flatMap(URL.init(string:)) {
            let plan = outbox.receiptPlan(
                for: recorded, delivered: delivered, armed: errors.take(operation: Self.receiptOperation)?.code,
                defaultCode: "1")
            let receipts = answer.messages.map { part in
                receipt(part, from: from, error: plan.failureCode, now: now)
            }
            Task { [callbacks, logger] in
                guard plan.posts else { return }
                if plan.delay > .zero { try? await Task.sleep(for: plan.delay) }
                for body in receipts {
                    var headers = HTTPFields()
                    headers[.contentType] = "application/json"
                    let request = TransportRequest(method: .post, url: url, headerFields: headers, body: body)
                    await callbacks.sendRetrying(request, logger: logger, name: "vonage sandbox delivery receipt")
                }
            }
        }
        return .json(answer, status: 200)
    }

    /// The signed JSON receipt of one part: every value a string, as the API's `DeliveryReceipt` has them.
    private func receipt(_ part: VonageSMSWire.Part, from: String, error: String?, now: Date) -> Data {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let t = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: now)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let scts = two((t.year ?? 0) % 100) + two(t.month) + two(t.day) + two(t.hour) + two(t.minute)
        let stamp = "\(t.year ?? 0)-\(two(t.month))-\(two(t.day)) \(two(t.hour)):\(two(t.minute)):\(two(t.second))"
        var fields = [
            "msisdn": part.to ?? "", "to": from, "network-code": "310260", "messageId": part.messageID ?? "",
            "price": "0.03330000", "status": error == nil ? "delivered" : "failed", "scts": scts,
            "err-code": error ?? "0", "api-key": VonageSandbox.apiKey, "message-timestamp": stamp,
            "timestamp": String(Int(now.timeIntervalSince1970)), "nonce": UUID().uuidString.lowercased(),
        ]
        if let reference = part.clientRef { fields["client-ref"] = reference }
        fields["sig"] = VonageSMSSender.signature(fields, secret: VonageSandbox.signatureSecret, method: "md5hash")
        let body = JSONValue.object(fields.mapValues { .string($0) })
        return (try? JSONEncoder().encode(body)) ?? Data()
    }

    /// One refused element in a 200, as the SMS API answers every refusal.
    static func refused(_ status: String, _ text: String) -> TransportResponse {
        .json(
            VonageSMSWire.Answer(
                messageCount: "1",
                messages: [VonageSMSWire.Part(status: status, errorText: text)]),
            status: 200)
    }

    /// An HTTP error the API answers outside its `messages` (an unknown path, a 5xx from the fault switch).
    static func problem(_ status: Int) -> TransportResponse {
        TransportResponse(status: HTTPResponse.Status(code: status), headerFields: [:], body: Data())
    }

    /// Message ids as Vonage writes them: 16 upper-case hex digits, in order.
    private final class Counter: Sendable {
        private let next = Mutex<UInt64>(0x1C00_0000_0000_0000)
        func nextID() -> String {
            next.withLock { value in
                value += 1
                return String(value, radix: 16, uppercase: true)
            }
        }
    }
}
