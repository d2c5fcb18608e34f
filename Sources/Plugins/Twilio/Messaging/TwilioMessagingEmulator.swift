import Foundation
import GatewayCore
import HTTPTypes

/// Twilio Programmable Messaging, emulated on the wire for the sandbox and tests:
/// `POST /2010-04-01/Accounts/{AccountSid}/Messages.json` with the ``TwilioSandbox`` credentials (or any `SK…`
/// key SID with the sandbox secret), form-encoded, answered `201` with the Message resource, or Twilio's
/// error envelope: 21211 for a `To` that is not E.164, 21604/21602 for a missing `From`/`MessagingServiceSid`
/// or `Body`, 21617 for a body over 1,600 characters, 20404 for another account. Each message is recorded in the
/// ``SandboxOutbox`` under the plugin id, with the code read from its text (``SandboxOutbox/Message/code(in:)``).
///
/// A message with a `StatusCallback` gets two status callbacks after the answer, `sent` then `delivered`, form
/// encoded and signed with `X-Twilio-Signature` under the sandbox auth token; a row armed for
/// ``receiptOperation`` makes the second `undelivered` (or `failed`, for 30001 and 30002) with its code.
public final class TwilioMessagingEmulator: ContextEmulator {
    /// The operation name that arms a receipt's error (`errors.arm` with a row of this operation).
    package static let receiptOperation = "status_callback"

    /// The fault switch tests and the sandbox use to make the emulated API misbehave.
    public let faults = FaultSwitch()
    /// Rows of ``TwilioErrorMapping/table`` armed to answer the next send with Twilio's error envelope.
    package let errors = EmulatorErrorSwitch()
    /// The clock, outbox and logger the emulator was built with.
    public let context: EmulatorContext
    /// The plugin id the outbox records messages under.
    let plugin: String

    /// An emulator that records its messages in `context.outbox` under `plugin`.
    public init(context: EmulatorContext, plugin: String = TwilioMessagingPlugin.plugin.id) {
        self.context = context
        self.plugin = plugin
    }

    /// Answers one request as Twilio's Messaging API would, after the fault switch had its say.
    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        await withFaults(serverError: TwilioEmulator.serverError) {
            if let row = errors.take(operation: VendorOperation.sendMessage.name),
                let code = row.code.flatMap({ Int($0) })
            {
                return .response(
                    TwilioEmulator.error(
                        row.httpStatus ?? TwilioEmulator.status(of: code), code: code, message: row.name))
            }
            return .response(route(request))
        }
    }

    private func route(_ request: EmulatorRequest) -> TransportResponse {
        guard TwilioEmulator.isAuthorized(request.headerFields[.authorization]) else {
            return TwilioEmulator.error(401, code: 20003, message: "Authenticate")
        }
        let parts = request.path.split(separator: "/").map(String.init)
        guard parts.count == 4, parts[0] == "2010-04-01", parts[1] == "Accounts", parts[3] == "Messages.json" else {
            return TwilioEmulator.notFound()
        }
        guard parts[2] == TwilioSandbox.accountSID else { return TwilioEmulator.notFound() }
        guard request.method == .post else {
            return TwilioEmulator.error(405, code: 20004, message: "Method not allowed")
        }
        return create(FormEncoding.decode(String(decoding: request.body, as: UTF8.self)))
    }

    private func create(_ form: [String: String]) -> TransportResponse {
        guard let to = form["To"], to.hasPrefix("+"), (8...16).contains(to.count), to.dropFirst().allSatisfy(\.isNumber)
        else {
            return TwilioEmulator.error(400, code: 21211, message: "Invalid 'To' Phone Number")
        }
        let from = form["From"].flatMap { $0.isEmpty ? nil : $0 }
        let service = form["MessagingServiceSid"].flatMap { $0.isEmpty ? nil : $0 }
        guard (from == nil) != (service == nil) else {
            return TwilioEmulator.error(
                400, code: 21604, message: "A 'From' phone number or a 'MessagingServiceSid' is required, not both")
        }
        if let service, !TwilioConfiguration.matches(service, prefixes: ["MG"]) {
            return TwilioEmulator.error(400, code: 21701, message: "The Messaging Service Sid is invalid")
        }
        guard let body = form["Body"], !body.isEmpty else {
            return TwilioEmulator.error(400, code: 21602, message: "Message body is required")
        }
        guard body.count <= 1600 else {
            return TwilioEmulator.error(
                400, code: 21617, message: "The concatenated message body exceeds the 1600 character limit")
        }
        let now = clock.now
        let sid = "SM" + Hex.timeOrdered(now: now)
        let date = TwilioMessagingWire.rfc2822(now)
        let recorded = SandboxOutbox.Message(
            provider: plugin, kind: .sms, channel: "sms", to: to, code: SandboxOutbox.Message.code(in: body),
            text: body,
            sentAt: now)
        let delivered = outbox.record(recorded)
        let message = TwilioMessagingWire.Message(
            sid: sid, accountSID: TwilioSandbox.accountSID, messagingServiceSID: service, from: from, to: to,
            body: body, status: service == nil ? "queued" : "accepted", direction: "outbound-api",
            numSegments: service == nil ? String(SMSMeasurement(measuring: body).segments) : "0", numMedia: "0",
            price: nil, priceUnit: "USD", errorCode: nil, errorMessage: nil, dateCreated: date, dateSent: nil,
            dateUpdated: date, apiVersion: "2010-04-01",
            uri: "/2010-04-01/Accounts/\(TwilioSandbox.accountSID)/Messages/\(sid).json",
            subresourceURIs: ["media": "/2010-04-01/Accounts/\(TwilioSandbox.accountSID)/Messages/\(sid)/Media.json"])
        if let url = form["StatusCallback"].flatMap(URL.init(string:)) {
            let plan = outbox.receiptPlan(
                for: recorded, delivered: delivered, armed: errors.take(operation: Self.receiptOperation)?.code,
                defaultCode: "30003")
            let failure = plan.failureCode
            let last = failure.map { ["30001", "30002"].contains($0) ? "failed" : "undelivered" } ?? "delivered"
            var fields = [("MessageSid", sid), ("SmsSid", sid), ("AccountSid", TwilioSandbox.accountSID), ("To", to)]
            fields.append(service.map { ("MessagingServiceSid", $0) } ?? ("From", from ?? ""))
            let receipts = [
                fields + [("MessageStatus", "sent")],
                fields + [("MessageStatus", last)] + (failure.map { [("ErrorCode", $0)] } ?? []),
            ]
            Task { [callbacks, logger] in
                guard plan.posts else { return }
                if plan.delay > .zero { try? await Task.sleep(for: plan.delay) }
                for parameters in receipts {
                    var headers = HTTPFields()
                    headers[.contentType] = "application/x-www-form-urlencoded"
                    headers[TwilioPushCrypto.signatureHeader] = TwilioPushCrypto.webhookSignature(
                        url: url.absoluteString, parameters: parameters, authToken: TwilioSandbox.authToken)
                    let request = TransportRequest(
                        method: .post, url: url, headerFields: headers, body: Data(FormEncoding.encode(parameters).utf8)
                    )
                    await callbacks.sendRetrying(request, logger: logger, name: "twilio sandbox status callback")
                }
            }
        }
        return TwilioEmulator.json(201, message)
    }
}
