import Foundation
import GatewayCore
import HTTPTypes

/// Telnyx Messaging, emulated on the wire for the sandbox and tests: `POST /v2/messages` under the mount point,
/// JSON, Bearer ``TelnyxSandbox/apiKey``, answered `200` with `{"data": <message>}` or Telnyx's
/// `{"errors": [{code, title, detail}]}`: 401 `10009` for another key, 400 `10016` for a `to` that is not +E.164,
/// 400 `10004` for a missing `text`, or a missing `from` without a `messaging_profile_id`, 400 `40306` for an
/// alphanumeric sender without a profile, 403 `40309` for an alphanumeric sender to +1 (Telnyx sends none to the
/// United States or Canada), 400 `40302` for more than 10 parts. Each message is recorded in the
/// ``SandboxOutbox`` under the plugin id, with the code read from its text.
///
/// A message with a `webhook_url` gets `message.sent`, then `message.finalized` with `delivered`, each signed as
/// Telnyx signs (Ed25519, the sandbox key of ``TelnyxSandbox/publicKey``); a row armed for ``receiptOperation``
/// makes the second `delivery_failed` with that row's code in `errors[]`.
public final class TelnyxMessagingEmulator: ContextEmulator {
    /// The operation name that arms a `message.finalized` failure (`errors.arm` with a row of this operation).
    package static let receiptOperation = "message_finalized"

    /// The fault switch tests and the sandbox use to make the emulated API misbehave.
    public let faults = FaultSwitch()
    /// Rows of ``TelnyxMessagingErrorMapping/table`` armed to refuse the next send.
    package let errors = EmulatorErrorSwitch()
    /// The clock, outbox and logger the emulator was built with.
    public let context: EmulatorContext

    /// An emulator that records its messages in `context.outbox`.
    public init(context: EmulatorContext) {
        self.context = context
    }

    /// Answers one request as Telnyx's Messaging API would, after the fault switch had its say.
    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        let serverError: (Int) -> TransportResponse = { TelnyxEmulator.error($0, "10007", "Unexpected error") }
        return await withFaults(serverError: serverError) {
            guard request.path == "/v2/messages" else {
                return .response(TelnyxEmulator.error(404, "10005", "Not found"))
            }
            guard request.method == .post else {
                return .response(TelnyxEmulator.error(405, "10015", "Method not allowed"))
            }
            if let row = errors.take(operation: VendorOperation.sendMessage.name), let code = row.code {
                return .response(TelnyxEmulator.error(row.httpStatus ?? 400, code, row.name))
            }
            guard request.headerFields[.authorization] == "Bearer " + TelnyxSandbox.apiKey else {
                return .response(TelnyxEmulator.error(401, "10009", "Authentication failed"))
            }
            guard let body = try? SnakeCaseJSON.decoder.decode(TelnyxMessagingWire.Send.self, from: request.body) else {
                return .response(TelnyxEmulator.error(400, "10023", "Invalid JSON"))
            }
            return .response(send(body))
        }
    }

    private func send(_ body: TelnyxMessagingWire.Send) -> TransportResponse {
        let to = body.to
        guard to.hasPrefix("+"), (8...16).contains(to.count), to.dropFirst().allSatisfy(\.isNumber) else {
            return TelnyxEmulator.error(400, "10016", "Phone number must be in +E.164 format")
        }
        guard let text = body.text, !text.isEmpty else {
            return TelnyxEmulator.error(400, "10004", "Missing required parameter")
        }
        guard let from = body.from, !from.isEmpty else {
            return TelnyxEmulator.error(400, "10004", "Missing required parameter")
        }
        if let profile = body.messagingProfileId, !TelnyxConfiguration.isUUID(profile) {
            return TelnyxEmulator.error(400, "10015", "Bad request")
        }
        if !from.hasPrefix("+"), from.contains(where: \.isLetter) {
            guard body.messagingProfileId != nil else {
                return TelnyxEmulator.error(400, "40306", "Alphanumeric sender ID not configured")
            }
            if to.hasPrefix("+1") { return TelnyxEmulator.error(403, "40309", "Invalid destination region") }
        }
        let measurement = SMSMeasurement(measuring: text)
        guard measurement.segments <= 10 else { return TelnyxEmulator.error(400, "40302", "Too many segments") }
        let now = clock.now
        let recorded = SandboxOutbox.Message(
            provider: TelnyxMessagingPlugin.plugin.id, kind: .sms, channel: "sms", to: to,
            code: SandboxOutbox.Message.code(in: text), text: text, sentAt: now)
        let delivered = outbox.record(recorded)
        let parts = max(1, measurement.segments)
        let message = TelnyxMessagingWire.Message(
            id: UUID().uuidString.lowercased(), recordType: "message", direction: "outbound", type: "SMS",
            from: .init(phoneNumber: from, carrier: "Telnyx", lineType: "VoIP"),
            to: [.init(phoneNumber: to, status: "queued", carrier: "Sandbox Mobile", lineType: "Wireless")],
            text: text, encoding: measurement.encoding == .ucs2 ? "UCS-2" : "GSM-7", parts: parts,
            cost: .init(amount: String(format: "%.4f", 0.004 * Double(parts)), currency: "USD"), errors: [],
            messagingProfileId: body.messagingProfileId, receivedAt: Self.timestamp(now),
            validUntil: Self.timestamp(now.addingTimeInterval(14_400)), webhookUrl: body.webhookUrl, waitSeconds: 0,
            tags: [])
        if let url = body.webhookUrl.flatMap(URL.init(string:)) {
            let plan = outbox.receiptPlan(
                for: recorded, delivered: delivered, armed: errors.take(operation: Self.receiptOperation)?.code,
                defaultCode: "40008")
            deliver(message, to: url, now: now, plan: plan)
        }
        return TelnyxEmulator.json(200, TelnyxWire.DataEnvelope(data: message))
    }

    /// Posts `message.sent`, then `message.finalized`, to `url`, each signed, after the answer.
    private func deliver(
        _ message: TelnyxMessagingWire.Message, to url: URL, now: Date, plan: SandboxOutbox.ReceiptPlan
    ) {
        guard plan.posts else { return }
        let failure = plan.failureCode.map { code in
            TelnyxMessagingErrorMapping.table.row(anyStatus: code)
                ?? VendorErrorRow(code: code, name: "Undeliverable", mapsTo: .deliveryFailed, source: "sandbox")
        }
        var sent = message
        sent.to = message.to?.map {
            var recipient = $0
            recipient.status = "sent"
            return recipient
        }
        sent.sentAt = Self.timestamp(now)
        var finalized = sent
        finalized.completedAt = Self.timestamp(now)
        finalized.to = sent.to?.map {
            var recipient = $0
            recipient.status = failure == nil ? "delivered" : "delivery_failed"
            return recipient
        }
        if let failure, let code = failure.code {
            finalized.errors = [.init(code: code, title: failure.name, detail: failure.name + ".")]
        }
        let bodies = [("message.sent", sent), ("message.finalized", finalized)].map { name, payload in
            TelnyxEmulator.encode(
                TelnyxMessagingWire.Event(
                    data: .init(
                        eventType: name, id: UUID().uuidString.lowercased(), occurredAt: Self.timestamp(now),
                        recordType: "event", payload: payload),
                    meta: ["attempt": 1, "delivered_to": .string(url.absoluteString)]))
        }
        Task { [callbacks, logger, clock] in
            if plan.delay > .zero { try? await Task.sleep(for: plan.delay) }
            for body in bodies {
                let (signature, timestamp) = TelnyxEmulator.sign(body, key: TelnyxEmulator.signingKey, now: clock.now)
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                headers[TelnyxWire.signatureHeader] = signature
                headers[TelnyxWire.timestampHeader] = timestamp
                let request = TransportRequest(method: .post, url: url, headerFields: headers, body: body)
                await callbacks.sendRetrying(request, logger: logger, name: "telnyx sandbox message webhook")
            }
        }
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
