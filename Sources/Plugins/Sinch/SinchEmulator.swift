import Foundation
import GatewayCore
import HTTPTypes
import Logging
import Synchronization

/// Sinch Verification v1, emulated on the wire, for the sandbox and for tests.
///
/// Paths are Sinch's, relative to the mount point: `POST /verification/v1/verifications`,
/// `PUT …/verifications/id/{id}` and `…/number/{endpoint}` (report), `GET …/verifications/id/{id}`,
/// `…/reference/{reference}` and `…/{method}/number/{endpoint}` (status). Every call must be
/// application-signed with the ``SinchSandbox`` key and secret (the signed path may include the mount
/// point, as the Python SDK signs it) or use Basic with them; a wrong one answers Sinch's 401 body.
/// Errors come in Sinch's shape, `{"errorCode", "message", "reference"}`.
///
/// Each method "sends" to the ``SandboxOutbox``: the code in the language negotiated from
/// `Accept-Language` and ``SinchLanguages`` (answered as `Content-Language`), a flash call's caller number,
/// a callout's spoken code, a seamless verification's URL, which completes it when fetched
/// (`GET /seamless/{id}/{token}`, unsigned: the device opens it). With a gateway to call, it asks it with a
/// signed `VerificationRequestEvent` before sending and reports outcomes with a `VerificationResultEvent`.
/// Test numbers: ``SinchSandbox/fraudNumber`` and ``SinchSandbox/errorNumber(_:)``.
public final class SinchEmulator: ContextEmulator {
    public let faults = FaultSwitch()
    /// Rows of ``SinchErrorMapping/table`` armed to answer the next call with Sinch's error body.
    package let errors = EmulatorErrorSwitch()

    /// The clock, outbox, logger and callback sender the emulator was built with.
    public let context: EmulatorContext
    /// Verifications, references and start windows, as rows read and written per call
    /// (``SinchEmulatorState``).
    let state: any EmulatorTable
    /// Where devices reach the emulator (for seamless URLs): the sandbox's own address plus the mount.
    let publicBase: String

    /// How far an `x-timestamp` may be from the emulator's clock; Sinch does not document it (docs/vendors/sinch.md
    /// §8).
    static let timestampTolerance: TimeInterval = 600

    public init(context: EmulatorContext, publicBaseURL: URL? = nil) {
        self.context = context
        let table = context.persistence.table(SinchEmulatorState.table)
        self.state = table
        let now = context.clock.now
        table.moveSaved(context.persistence.load(), context: context, "sinch sandbox verifications") { rows, saved in
            let decoder = JSONDecoder()
            try SinchEmulatorState(rows: rows, now: now).move(
                saved.values.compactMap { try? decoder.decode(SinchEmulatorState.Verification.self, from: $0) })
        }
        var base =
            (publicBaseURL ?? Self.sandboxBase(callbacks: context.callbacks))?.absoluteString
            ?? "https://verification.api.sinch.com"
        while base.hasSuffix("/") { base.removeLast() }
        self.publicBase = base
    }

    /// The sandbox calls the gateway back at `<base>/callbacks/<id>` and mounts this emulator at
    /// `<base>/sandbox/sinch`, so one gives the other.
    static func sandboxBase(callbacks: CallbackSender) -> URL? {
        guard let url = callbacks.baseURL, url.deletingLastPathComponent().lastPathComponent == "callbacks" else {
            return nil
        }
        return url.deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: String(SinchSandbox.mountPath.dropFirst()))
    }

    /// Answers one request as Sinch would; what it changed is saved within the call's transactions.
    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        await withFaults(serverError: Self.serverError) {
            let operation = request.method == .post ? "start" : request.method == .put ? "check" : "status"
            if request.path.hasPrefix("/verification/"), let row = errors.take(operation: operation),
                let code = row.code.flatMap({ Int($0) })
            {
                return .response(Self.error(row.httpStatus ?? code / 100, code: code, message: row.name))
            }
            return .response(await route(request))
        }
    }

    /// Runs `body` on the state as of `now` in one transaction, after sweeping what is due; `nil` when the
    /// sandbox's file failed (logged), which callers answer with Sinch's 500.
    func withState<T: Sendable>(
        now: Date, _ body: @escaping @Sendable (SinchEmulatorState) throws -> T
    ) async -> T? {
        await state.attempt("sinch sandbox state", logger: logger, now: now, body)
    }

    // MARK: routing

    private func route(_ request: EmulatorRequest) async -> TransportResponse {
        let now = clock.now
        let parts = request.path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        if parts.count == 3, parts[0] == "seamless", request.method == .get {
            return await seamless(id: parts[1], token: parts[2], now: now)
        }
        let verdict = SinchSigning.verify(
            headers: request.headerFields, method: request.method.rawValue, body: request.body,
            resources: [request.path, SinchSandbox.mountPath + request.path],
            applicationKey: SinchSandbox.applicationKey, secret: SinchSandbox.applicationSecret, now: now,
            tolerance: Self.timestampTolerance, allowBasic: true)
        if case .failure(let refusal) = verdict {
            let status = refusal.errorCode / 100
            return Self.error(status, code: refusal.errorCode, message: refusal.message)
        }
        guard parts.count >= 3, parts[0] == "verification", parts[1] == "v1", parts[2] == "verifications" else {
            return Self.notFound()
        }
        let rest = Array(parts[3...])
        switch (rest.count, request.method) {
        case (0, .post):
            return await start(request, now: now)
        case (2, .put) where rest[0] == "id":
            let id = rest[1]
            return await report(request.body, find: { try $0.verification(id) }, now: now)
        case (2, .put) where rest[0] == "number":
            let method = (try? JSONDecoder().decode(SinchWire.ReportRequest.self, from: request.body))?.method
                .flatMap(SinchWire.canonicalMethod)
            let endpoint = rest[1]
            return await report(request.body, find: { try $0.newest(endpoint: endpoint, method: method) }, now: now)
        case (2, .get) where rest[0] == "id":
            let id = rest[1]
            return await status(now: now) { try $0.verification(id) }
        case (2, .get) where rest[0] == "reference":
            let reference = rest[1]
            return await status(now: now) { try $0.verification(reference: reference) }
        case (3, .get) where rest[1] == "number":
            guard let method = SinchWire.canonicalMethod(rest[0]) else { return Self.notFound() }
            let endpoint = rest[2]
            return await status(now: now) { try $0.newest(endpoint: endpoint, method: method) }
        case (0, _), (2, _), (3, _):
            return Self.error(501, code: 50100, message: "Method not implemented")
        default:
            return Self.notFound()
        }
    }

    // MARK: bodies

    static func json(_ status: Int, _ value: some Encodable, headers: HTTPFields = [:]) -> TransportResponse {
        .json(value, status: status, contentType: "application/json; charset=utf-8", headers: headers)
    }

    /// Sinch's error body, with a fresh reference as Sinch gives one per error.
    static func error(_ status: Int, code: Int, message: String) -> TransportResponse {
        json(status, SinchWire.ErrorBody(errorCode: code, message: message, reference: UUID().uuidString.lowercased()))
    }

    static func notFound() -> TransportResponse {
        error(404, code: 40400, message: "Requested resource was not found.")
    }

    /// An injected 5xx: 50300 for 503, 50100 for 501, 50000 otherwise.
    static func serverError(_ status: Int) -> TransportResponse {
        switch status {
        case 503: return error(503, code: 50300, message: "Service is temporarily unavailable, please try again later.")
        case 501: return error(501, code: 50100, message: "Method not implemented")
        default: return error(status, code: 50000, message: "Internal error")
        }
    }

    // MARK: callbacks

    /// Sends one signed event to the gateway; `nil` when there is no gateway or it could not be reached.
    func sendEvent(_ event: SinchWire.Event) async -> TransportResponse? {
        guard let url = callbacks.url() else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let body = try? encoder.encode(event),
            let key = SinchSigning.key(fromSecret: SinchSandbox.applicationSecret)
        else { return nil }
        let contentType = "application/json"
        let timestamp = VendorDate.iso8601(clock.now)
        var headers = HTTPFields()
        headers[.contentType] = contentType
        headers[SinchSigning.timestampHeader] = timestamp
        headers[.authorization] = SinchSigning.authorization(
            applicationKey: SinchSandbox.applicationKey, key: key, method: "POST", body: body,
            contentType: contentType, timestamp: timestamp, resource: url.path(percentEncoded: true))
        do {
            return try await callbacks.send(
                TransportRequest(method: .post, url: url, headerFields: headers, body: body), timeout: .seconds(5))
        } catch {
            logger.notice(
                "sinch sandbox could not deliver an event", metadata: ["sinch.event": "\(event.event ?? "-")"])
            return nil
        }
    }

    func sendResult(_ verification: SinchEmulatorState.Verification) async {
        _ = await sendEvent(
            SinchWire.Event(
                id: verification.id, event: SinchWire.resultEvent, method: verification.method,
                identity: SinchWire.Identity(endpoint: verification.endpoint), reference: verification.reference,
                custom: verification.custom, status: verification.status, reason: verification.reason,
                source: verification.source))
    }
}
