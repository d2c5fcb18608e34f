import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Logging
import Synchronization

/// Telnyx Verify v2, emulated on the wire for the sandbox and for tests, on Telnyx's own paths under the mount
/// point (`/sandbox/telnyx/v2/…`): `POST /verifications/{sms,call,flashcall,whatsapp}`,
/// `GET /verifications/{id}`, `POST /verifications/{id}/actions/verify`,
/// `GET /verifications/by_phone_number/{n}` and `POST /verifications/by_phone_number/{n}/actions/verify`,
/// `GET /verify_profiles/{id}`. Bearer ``TelnyxSandbox/apiKey``; errors as `{"errors": [{code, title,
/// detail}]}`.
///
/// The choices on what Telnyx leaves open (docs/telnyx.md): 5-digit codes (the profile default), a flash call
/// whose whole caller ID (digits, no `+`) is the code, a wrong code answers `rejected` without a limit, a
/// check of a verification that is not pending (accepted, expired, unknown) answers 404 `10005`, and webhooks
/// signed with the sandbox's Ed25519 key: `verify.sent` when a code goes out, `verification.complete` with
/// `status: accepted` when it is accepted.
public final class TelnyxEmulator: ContextEmulator {
    public let faults = FaultSwitch()
    /// Rows of ``TelnyxErrorMapping/table`` armed to answer the next call of their operation (tests only).
    package let errors = EmulatorErrorSwitch()

    /// The clock, outbox, logger and callback sender the emulator was built with.
    public let context: EmulatorContext
    let state: any EmulatorTable
    /// Webhooks of answered requests on their way to the gateway.
    private let deliveries = Mutex<[Task<Void, Never>]>([])

    static let types: Set<String> = ["sms", "call", "flashcall", "whatsapp"]
    /// The key the emulator signs its webhooks with, from a fixed seed: a public test key, never use it
    /// anywhere else.
    static var signingKey: Curve25519.Signing.PrivateKey {
        // 32 bytes always make a key.
        (try? Curve25519.Signing.PrivateKey(rawRepresentation: Data((0..<32).map { UInt8(0x7e ^ $0) })))
            ?? Curve25519.Signing.PrivateKey()
    }
    static let codeLength = 5
    static let defaultTimeout = 300

    public init(context: EmulatorContext) {
        self.context = context
        state = context.persistence.table(TelnyxEmulatorState.table)
    }

    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        var webhooks: [Data] = []
        let serverError: (Int) -> TransportResponse = { Self.error($0, "10007", "Unexpected error") }
        let response = await withFaults(serverError: serverError) {
            if let operation = Self.operation(of: request), let row = errors.take(operation: operation) {
                return .response(Self.error(row.httpStatus ?? 400, row.code ?? "10007", row.name))
            }
            guard request.headerFields[.authorization] == "Bearer " + TelnyxSandbox.apiKey else {
                return .response(Self.error(401, "10009", "Authentication failed"))
            }
            let now = clock.now
            guard
                let (response, bodies) = await state.attempt(
                    "telnyx sandbox state", logger: logger, now: now,
                    { (state: TelnyxEmulatorState) in try self.route(request, state: state) })
            else { return .response(Self.error(500, "10007", "Unexpected error")) }
            webhooks = bodies
            return .response(response)
        }
        if !webhooks.isEmpty {
            // Tracked, never fire-and-forget: ``deliverPending()`` awaits every one.
            let delivery = Task { await self.send(webhooks) }
            deliveries.withLock { $0.append(delivery) }
        }
        return response
    }

    /// Waits until every webhook of an answered request has been sent.
    package func deliverPending() async {
        let pending = deliveries.withLock { pending in
            defer { pending = [] }
            return pending
        }
        for delivery in pending { await delivery.value }
    }

    // MARK: routing

    private func route(_ request: EmulatorRequest, state: TelnyxEmulatorState) throws -> (TransportResponse, [Data]) {
        // `+` in a path segment is the number's own (the SDK sends it as is), never a space.
        let parts = request.path.split(separator: "/").map { $0.removingPercentEncoding ?? String($0) }
        guard parts.first == "v2" else { return (Self.error(404, "10005", "Resource not found"), []) }
        let rest = Array(parts.dropFirst())
        let notFound = Self.error(404, "10005", "Resource not found")
        let method = request.method
        if rest.first == "verify_profiles", rest.count == 2, method == .get {
            guard rest[1] == TelnyxSandbox.verifyProfileID else { return (notFound, []) }
            let profile: [String: String] = [
                "id": TelnyxSandbox.verifyProfileID, "record_type": "verification_profile", "name": "Gateway sandbox",
                "language": "en-US",
            ]
            return (Self.json(200, TelnyxWire.DataEnvelope(data: profile)), [])
        }
        guard rest.first == "verifications", rest.count >= 2 else { return (notFound, []) }
        let isVerify = rest.count >= 2 && rest.suffix(2) == ["actions", "verify"] && method == .post
        if rest[1] == "by_phone_number", rest.count >= 3 {
            let number = rest[2]
            if rest.count == 3, method == .get {
                let found = try state.records(number: number).map(\.wire)
                let meta = [
                    "page_number": 1, "page_size": max(found.count, 1), "total_pages": 1, "total_results": found.count,
                ]
                return (Self.json(200, ListAnswer(data: found, meta: meta)), [])
            }
            guard rest.count == 5, isVerify else { return (notFound, []) }
            guard let body = try? SnakeCaseJSON.decoder.decode(TelnyxWire.VerifyCode.self, from: request.body),
                let profile = body.verifyProfileId
            else { return (Self.error(400, "10004", "Missing required parameter"), []) }
            guard
                let record = try state.records(number: number).first(where: {
                    $0.profile == profile && $0.status == "pending"
                })
            else { return (notFound, []) }
            return try check(record, code: body.code, state: state)
        }
        if rest.count == 2, method == .post, Self.types.contains(rest[1]) {
            return try trigger(type: rest[1], body: request.body, state: state)
        }
        if rest.count == 4, isVerify {
            guard let body = try? SnakeCaseJSON.decoder.decode(TelnyxWire.VerifyCode.self, from: request.body) else {
                return (Self.error(400, "10004", "Missing required parameter"), [])
            }
            guard let record = try state.record(rest[1]), record.status == "pending" else { return (notFound, []) }
            return try check(record, code: body.code, state: state)
        }
        if rest.count == 2, method == .get {
            guard let record = try state.record(rest[1]) else { return (notFound, []) }
            return (Self.json(200, TelnyxWire.DataEnvelope(data: record.wire)), [])
        }
        return (notFound, [])
    }

    private func trigger(type: String, body: Data, state: TelnyxEmulatorState) throws -> (TransportResponse, [Data]) {
        guard let trigger = try? SnakeCaseJSON.decoder.decode(TelnyxWire.Trigger.self, from: body) else {
            return (Self.error(400, "10004", "Missing required parameter"), [])
        }
        guard trigger.phoneNumber.hasPrefix("+"), (try? PhoneNumber(parsing: trigger.phoneNumber))?.isValid == true
        else {
            return (Self.error(400, "10016", "Phone number must be in +E.164 format"), [])
        }
        guard trigger.verifyProfileId == TelnyxSandbox.verifyProfileID else {
            return (Self.error(422, "10017", "Associated resource does not exist"), [])
        }
        if let timeout = trigger.timeoutSecs, !(1...86_400).contains(timeout) {
            return (Self.error(422, "10033", "Value out of range"), [])
        }
        let now = state.now
        let code =
            type == "flashcall"
            ? "1800555" + Self.digits(4) : Self.digits(Self.codeLength)
        let record = TelnyxEmulatorState.Record(
            id: UUID().uuidString.lowercased(), type: type, phoneNumber: trigger.phoneNumber,
            profile: trigger.verifyProfileId,
            code: code, timeoutSecs: trigger.timeoutSecs ?? Self.defaultTimeout, createdAt: now, updatedAt: now,
            status: "pending", failedAttempts: 0)
        try state.put(record)
        let channel = TelnyxWire.channels.first { $0.value == type }?.key ?? .sms
        let text =
            type == "flashcall"
            ? "Flash call from +\(code): the app reads the caller ID"
            : "Gateway: " + SandboxMessages.verificationCode(code, language: nil).text
        outbox.record(
            SandboxOutbox.Message(
                provider: "telnyx", kind: SandboxOutbox.Message.Kind(channel), channel: channel.rawValue,
                to: trigger.phoneNumber, code: code, text: text, sentAt: now))
        return (
            Self.json(200, TelnyxWire.DataEnvelope(data: record.wire)),
            [webhook("verify.sent", record, delivery: "sent", now: now)]
        )
    }

    private func check(
        _ record: TelnyxEmulatorState.Record, code: String, state: TelnyxEmulatorState
    ) throws -> (TransportResponse, [Data]) {
        var record = record
        record.updatedAt = state.now
        let accepted = ConstantTime.equals(code, record.code)
        if accepted { record.status = "accepted" } else { record.failedAttempts += 1 }
        try state.put(record)
        let answer = TelnyxWire.CodeResult(
            phoneNumber: record.phoneNumber, responseCode: accepted ? "accepted" : "rejected")
        let bodies = accepted ? [webhook("verification.complete", record, delivery: nil, now: state.now)] : []
        return (Self.json(200, TelnyxWire.DataEnvelope(data: answer)), bodies)
    }

    // MARK: webhooks

    func webhook(_ event: String, _ record: TelnyxEmulatorState.Record, delivery: String?, now: Date) -> Data {
        // The envelope and payload of docs/vendors/telnyx.md §7.3 (note `profile_id`, not `verify_profile_id`).
        let payload: [String: JSONValue] = [
            "id": .string(record.id), "type": .string(record.type), "record_type": "verification",
            "phone_number": .string(record.phoneNumber), "profile_id": .string(record.profile),
            "status": .string(record.status), "delivery_status": delivery.map(JSONValue.string) ?? .null,
            "failed_attempts": .number(Double(record.failedAttempts)),
            "timeout_secs": .number(Double(record.timeoutSecs)),
            "created_at": .string(TelnyxEmulatorState.Record.timestamp(record.createdAt)),
            "updated_at": .string(TelnyxEmulatorState.Record.timestamp(record.updatedAt)),
        ]
        let data: [String: JSONValue] = [
            "event_type": .string(event), "id": .string(UUID().uuidString.lowercased()), "record_type": "event",
            "occurred_at": .string(now.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))),
            "payload": .object(payload),
        ]
        return Self.encode(JSONValue.object(["data": .object(data), "meta": ["attempt": 1]]))
    }

    /// Posts each webhook to the gateway, signed as Telnyx signs; failures are logged, never retried.
    func send(_ bodies: [Data]) async {
        guard let url = callbacks.url() else { return }
        let key = Self.signingKey
        for body in bodies {
            let (signature, timestamp) = Self.sign(body, key: key, now: clock.now)
            let headers: HTTPFields = [TelnyxWire.signatureHeader: signature, TelnyxWire.timestampHeader: timestamp]
            await callbacks.postJSON(body, headers: headers, to: url, logger: logger, name: "telnyx sandbox webhook")
        }
    }

    /// The two signature headers' values for `body` at `now`, signed with `key` as Telnyx signs.
    static func sign(_ body: Data, key: Curve25519.Signing.PrivateKey, now: Date) -> (
        signature: String, timestamp: String
    ) {
        let timestamp = String(Int(now.timeIntervalSince1970))
        let signature = (try? key.signature(for: TelnyxWire.signedBytes(timestamp: timestamp, body: body))) ?? Data()
        return (signature.base64EncodedString(), timestamp)
    }

    // MARK: bodies

    struct ListAnswer: Encodable {
        var data: [TelnyxEmulatorState.Verification]
        var meta: [String: Int]
    }

    /// The operation name (``TelnyxErrorMapping``'s) of a request, for the error switch.
    static func operation(of request: EmulatorRequest) -> String? {
        let parts = request.path.split(separator: "/")
        guard parts.count >= 3, parts[0] == "v2", parts[1] == "verifications" else { return nil }
        if request.method == .get { return "retrieve" }
        if parts.last == "verify" { return "verify" }
        return parts.count == 3 ? "trigger" : nil
    }

    static func error(_ status: Int, _ code: String, _ title: String) -> TransportResponse {
        let item = [
            "code": code, "title": title, "detail": title + ".",
        ]
        return json(status, ["errors": [item]])
    }

    static func encode(_ value: some Encodable) -> Data { SnakeCaseJSON.encode(value) }

    static func json(_ status: Int, _ value: some Encodable) -> TransportResponse {
        .snakeCaseJSON(value, status: status)
    }

    static func digits(_ count: Int) -> String {
        String((0..<count).map { _ in Character(String(Int.random(in: 0...9))) })
    }
}
