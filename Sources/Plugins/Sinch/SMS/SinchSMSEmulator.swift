import Foundation
import GatewayCore
import HTTPTypes

/// Sinch SMS (XMS), emulated on the wire for the sandbox and tests: `POST /xms/v1/{service_plan_id}/batches` under
/// the mount point, JSON, Bearer ``SinchSandbox/smsAPIToken`` for the plan ``SinchSandbox/servicePlanID``,
/// answered `201` with the batch or Sinch's `{"code", "text"}`: 401 for another token, 404 for another plan or path,
/// 415 for a body that is not `application/json`, 400 `syntax_invalid_json` for one that does not parse, 400
/// `syntax_constraint_violation` for a missing `to` or `body`, more than 1,600 characters or an `expire_at` that
/// has passed, 400 `syntax_invalid_parameter_format` for a recipient that is not an MSISDN or an unknown
/// `delivery_report`, 403 `missing_callback_url` for a report asked for with no URL (the sandbox's plan has no
/// default one). Each message is recorded in the ``SandboxOutbox`` under the plugin id, with the code read from
/// its text.
///
/// A batch with a `callback_url` and `per_recipient_final` reports gets one `recipient_delivery_report_sms`,
/// signed as Sinch's SDKs check it (HMAC-SHA256 under ``SinchSandbox/smsWebhookSecret``): `Delivered` with code 0,
/// or with a row armed for ``receiptOperation``, `Failed` with that row's code.
public final class SinchSMSEmulator: ContextEmulator {
    /// The operation name that arms a report's failure (`errors.arm` with a `dlr` row of this operation).
    package static let receiptOperation = "delivery_report"
    static let reportKinds: Set<String> = ["none", "summary", "full", "per_recipient", "per_recipient_final"]

    /// The fault switch tests and the sandbox use to make the emulated API misbehave.
    public let faults = FaultSwitch()
    /// Rows of ``SinchSMSErrorMapping/table`` armed to refuse the next send.
    package let errors = EmulatorErrorSwitch()
    /// The clock, outbox and logger the emulator was built with.
    public let context: EmulatorContext

    /// An emulator that records its messages in `context.outbox`.
    public init(context: EmulatorContext) {
        self.context = context
    }

    /// Answers one request as Sinch's SMS API would, after the fault switch had its say.
    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        let serverError: (Int) -> TransportResponse = { Self.problem($0, nil, "Internal error") }
        return await withFaults(serverError: serverError) {
            let parts = request.path.split(separator: "/")
            guard parts.count == 4, parts[0] == "xms", parts[1] == "v1", parts[3] == "batches" else {
                return .response(Self.problem(404, nil, "Not found"))
            }
            guard request.method == .post else { return .response(Self.problem(405, nil, "Method not allowed")) }
            if let row = errors.take(operation: VendorOperation.sendBatch.name) {
                return .response(Self.problem(row.httpStatus ?? 400, row.code, row.name))
            }
            guard request.headerFields[.authorization] == "Bearer " + SinchSandbox.smsAPIToken else {
                return .response(Self.problem(401, nil, "Unauthorized"))
            }
            guard parts[2] == SinchSandbox.servicePlanID else { return .response(Self.problem(404, nil, "Not found")) }
            guard request.headerFields[.contentType]?.hasPrefix("application/json") == true else {
                return .response(Self.problem(415, nil, "Unsupported media type"))
            }
            guard let body = try? SnakeCaseJSON.decoder.decode(SinchSMSWire.Send.self, from: request.body) else {
                return .response(
                    Self.problem(400, "syntax_invalid_json", "The JSON body is not valid or is missing a field"))
            }
            return .response(send(body))
        }
    }

    private func send(_ body: SinchSMSWire.Send) -> TransportResponse {
        let now = clock.now
        guard (1...1000).contains(body.to.count), !body.body.isEmpty, body.body.count <= 1600 else {
            return Self.problem(400, "syntax_constraint_violation", "to and body are required; body 1600 at most")
        }
        let msisdn = { (to: String) in
            let digits = to.hasPrefix("+") ? to.dropFirst() : Substring(to)
            return (7...15).contains(digits.count) && digits.allSatisfy(\.isNumber)
        }
        guard body.to.allSatisfy(msisdn) else {
            return Self.problem(400, "syntax_invalid_parameter_format", "A recipient is not a valid MSISDN")
        }
        let kind = body.deliveryReport ?? "none"
        guard Self.reportKinds.contains(kind) else {
            return Self.problem(400, "syntax_invalid_parameter_format", "Unknown delivery_report")
        }
        if kind != "none", body.callbackUrl == nil {
            return Self.problem(403, "missing_callback_url", "A delivery report needs a callback URL")
        }
        let expiry = body.expireAt.flatMap(VendorDate.parseISO8601)
        if let expiry, expiry <= now {
            return Self.problem(400, "syntax_constraint_violation", "expire_at must be after send_at")
        }
        let wantsReports = body.deliveryReport == "per_recipient_final" || body.deliveryReport == "per_recipient"
        var plans: [(recipient: String, plan: SandboxOutbox.ReceiptPlan)] = []
        for to in body.to {
            let number = to.hasPrefix("+") ? to : "+" + to
            let recorded = SandboxOutbox.Message(
                provider: SinchSMSPlugin.plugin.id, kind: .sms, channel: "sms", to: number,
                code: SandboxOutbox.Message.code(in: body.body), text: body.body, sentAt: now)
            let delivered = outbox.record(recorded)
            guard wantsReports else { continue }
            let armed = errors.take(operation: Self.receiptOperation)?.code
            plans.append(
                (to, outbox.receiptPlan(for: recorded, delivered: delivered, armed: armed, defaultCode: "404")))
        }
        let id = Self.batchID()
        let batch = SinchSMSWire.Batch(
            id: id, to: body.to, from: body.from, body: body.body, type: body.type ?? "mt_text", canceled: false,
            createdAt: Self.timestamp(now), modifiedAt: Self.timestamp(now), deliveryReport: kind,
            expireAt: Self.timestamp(expiry ?? now.addingTimeInterval(3 * 86_400)), callbackUrl: body.callbackUrl,
            clientReference: body.clientReference, flashMessage: false)
        if wantsReports, let url = body.callbackUrl.flatMap(URL.init) {
            report(batch: id, plans: plans, reference: body.clientReference, to: url, now: now)
        }
        return .snakeCaseJSON(batch, status: 201)
    }

    /// Posts one final report per recipient to `url`, signed, after the answer: `Delivered`, or `Failed` with its
    /// plan's code; none for a recipient whose plan posts nothing.
    private func report(
        batch: String, plans: [(recipient: String, plan: SandboxOutbox.ReceiptPlan)], reference: String?, to url: URL,
        now: Date
    ) {
        let reports = plans.filter(\.plan.posts).map { recipient, plan in
            (
                plan.delay,
                SnakeCaseJSON.encode(
                    SinchSMSWire.RecipientReport(
                        type: "recipient_delivery_report_sms", batchId: batch, recipient: recipient,
                        status: plan.failureCode == nil ? "Delivered" : "Failed",
                        code: plan.failureCode.flatMap { Int($0) } ?? 0, at: Self.timestamp(now),
                        operatorStatusAt: Self.timestamp(now), clientReference: reference))
            )
        }
        guard !reports.isEmpty else { return }
        Task { [callbacks, logger, clock] in
            for (delay, body) in reports {
                if delay > .zero { try? await Task.sleep(for: delay) }
                let nonce = UUID().uuidString.lowercased()
                let timestamp = String(Int(clock.now.timeIntervalSince1970))
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                headers[SinchSMSWire.nonceHeader] = nonce
                headers[SinchSMSWire.timestampHeader] = timestamp
                headers[SinchSMSWire.algorithmHeader] = "HmacSHA256"
                headers[SinchSMSWire.signatureHeader] = SinchSMSSender.signature(
                    body, nonce: nonce, timestamp: timestamp, secret: SinchSandbox.smsWebhookSecret)
                let request = TransportRequest(method: .post, url: url, headerFields: headers, body: body)
                await callbacks.sendRetrying(request, logger: logger, name: "sinch sandbox delivery report")
            }
        }
    }

    /// A batch id as Sinch's look: 26 characters of Crockford's base 32 (a ULID).
    static func batchID() -> String {
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        var generator = SystemRandomNumberGenerator()
        return String((0..<26).map { _ in alphabet[Int(generator.next() % 32)] })
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// Sinch's error object: `{"code", "text"}`, the code left out where Sinch names none.
    static func problem(_ status: Int, _ code: String?, _ text: String) -> TransportResponse {
        .snakeCaseJSON(SinchSMSWire.Problem(code: code, text: text), status: status)
    }
}
