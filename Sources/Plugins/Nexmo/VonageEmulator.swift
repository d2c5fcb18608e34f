import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Logging
import Synchronization
import _CryptoExtras

/// Vonage Verify, emulated on the wire for the sandbox and for tests, with Vonage's own paths for both
/// versions (relative to the mount point `/sandbox/vonage`):
///
/// * v2: `POST /v2/verify`, `POST|DELETE /v2/verify/{id}`, `POST /v2/verify/{id}/next_workflow`,
///   `GET /v2/verify/{id}/silent-auth/redirect` (the device's `check_url`, which redirects through
///   `…/silent-auth/network`, the emulator's stand-in for the mobile network's check, to the `code`). Basic
///   auth or an application JWT (RS256, ``VonageSandbox/privateKeyPEM``); errors are
///   `application/problem+json`.
/// * v1: `/verify/json`, `/verify/check/json`, `/verify/search/json`, `/verify/control/json`, GET or POST,
///   key and secret in the parameters, errors in HTTP 200 with a `status` string.
///
/// Workflow steps advance by themselves after the channel timeout (short in the sandbox, see
/// ``Settings``), and v2 requests send signed status callbacks (HS256 with
/// ``VonageSandbox/signatureSecret``) to the gateway's callback route. Vonage's rules: one live
/// verification per number (409 / status 10 with its `request_id`), 3 wrong codes (410 / status 17), no
/// cancel in the first 30 s or after the second step, and every message in the outbox with its channel.
public final class VonageEmulator: ContextEmulator {
    public struct Settings: Sendable {
        /// Seconds each workflow step lasts; `nil` honours the request's `channel_timeout` (v2, default 180)
        /// or 300 (v1 `next_event_wait`).
        public var channelTimeout: TimeInterval?
        /// Cancel is refused this long after the start (Vonage: 30 s).
        public var cancelWindow: TimeInterval
        /// Whether a background task advances workflows on time when no request arrives (off in tests,
        /// which call ``tick()`` after moving their clock).
        public var autoAdvance: Bool

        public init(channelTimeout: TimeInterval? = nil, cancelWindow: TimeInterval = 30, autoAdvance: Bool = true) {
            self.channelTimeout = channelTimeout
            self.cancelWindow = cancelWindow
            self.autoAdvance = autoAdvance
        }

        /// The sandbox's: steps of `GATEWAY_VONAGE_CHANNEL_TIMEOUT` seconds (default 20), cancel window of
        /// `GATEWAY_VONAGE_CANCEL_WINDOW` seconds (default 30).
        public static func sandbox(environment: [String: String] = ProcessInfo.processInfo.environment) -> Settings {
            let timeout = environment["GATEWAY_VONAGE_CHANNEL_TIMEOUT"].flatMap(Double.init).flatMap {
                $0 > 0 ? $0 : nil
            }
            let window = environment["GATEWAY_VONAGE_CANCEL_WINDOW"].flatMap(Double.init).flatMap { $0 >= 0 ? $0 : nil }
            return Settings(channelTimeout: timeout ?? 20, cancelWindow: window ?? VonageWire.cancelWindow)
        }
    }

    public let faults = FaultSwitch()
    /// Rows of ``VonageErrorMapping/table`` armed to answer the next call of their operation (tests only).
    package let errors = EmulatorErrorSwitch()

    /// The clock, outbox, logger and callback sender the emulator was built with.
    public let context: EmulatorContext
    let settings: Settings
    /// The requests, as rows read and written per call (``VonageEmulatorState``).
    let state: any EmulatorTable
    private let ticking = Mutex(false)
    /// Callbacks of answered requests on their way to the gateway.
    private let deliveries = Mutex<[Task<Void, Never>]>([])
    let applicationKey: _RSA.Signing.PublicKey?

    public init(context: EmulatorContext, settings: Settings = Settings()) {
        self.context = context
        self.settings = settings
        let table = context.persistence.table(VonageEmulatorState.table)
        state = table
        let now = context.clock.now
        table.moveSaved(context.persistence.load(), context: context, "vonage sandbox requests") { rows, saved in
            let decoder = JSONDecoder()
            try VonageEmulatorState(rows: rows, now: now).move(
                saved.values.compactMap { try? decoder.decode(VonageEmulatorState.Request.self, from: $0) })
        }
        applicationKey = try? _RSA.Signing.PrivateKey(pemRepresentation: VonageSandbox.privateKeyPEM).publicKey
    }

    /// Answers one request as Vonage would: in one transaction, workflows whose step ran out advance and the
    /// request is answered; the callbacks that made go out once it is answered, as Vonage's do, so a check's
    /// answer reaches the gateway before the summary it causes.
    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        let isV1 = !request.path.hasPrefix("/v2/")
        let serverError: @Sendable (Int) -> TransportResponse = {
            isV1 ? Self.v1ServerError($0) : Self.v2ServerError($0)
        }
        var callbacks: [Data] = []
        let response = await withFaults(serverError: serverError) {
            if let operation = Self.operation(of: request), let row = errors.take(operation: operation) {
                return .response(Self.answer(row))
            }
            let now = clock.now
            guard
                let (response, bodies) = await withState(
                    now: now,
                    { state in
                        let pending = try self.advance(state)
                        let (response, more) = try self.route(request, state: state)
                        return (response, pending + more)
                    })
            else { return .response(serverError(500)) }
            callbacks = bodies
            return .response(response)
        }
        sendAfterAnswer(callbacks)
        startTicker()
        return response
    }

    /// Delivers the callbacks still on their way, then advances every workflow whose step timed out and
    /// sends the callbacks that makes.
    public func tick() async {
        await deliverPending()
        guard let bodies = await withState(now: clock.now, { try self.advance($0) }) else { return }
        await send(bodies)
    }

    /// Sends `bodies` once the current request has been answered; ``tick()`` waits for them.
    private func sendAfterAnswer(_ bodies: [Data]) {
        guard !bodies.isEmpty else { return }
        // Tracked, never fire-and-forget: ``deliverPending()`` awaits every one.
        let delivery = Task { await self.send(bodies) }
        deliveries.withLock { $0.append(delivery) }
    }

    /// Waits until every callback of an answered request has been sent.
    package func deliverPending() async {
        let pending = deliveries.withLock { pending in
            defer { pending = [] }
            return pending
        }
        for delivery in pending { await delivery.value }
    }

    /// Runs `body` on the state as of `now` in one transaction; `nil` when the sandbox's file failed (logged).
    func withState<T: Sendable>(now: Date, _ body: @escaping @Sendable (VonageEmulatorState) throws -> T) async -> T? {
        await state.attempt("vonage sandbox state", logger: logger, now: now, body)
    }

    /// A background task that ticks while live workflows remain.
    private func startTicker() {
        guard settings.autoAdvance else { return }
        let started = ticking.withLock { running -> Bool in
            if running { return false }
            running = true
            return true
        }
        guard started else { return }
        Task { [weak self] in
            while let emulator = self {
                try? await Task.sleep(for: .milliseconds(250))
                await emulator.tick()
                let live = await emulator.withState(now: emulator.clock.now) { try $0.hasLive } ?? false
                if !live {
                    emulator.ticking.withLock { $0 = false }
                    return
                }
            }
        }
    }

    // MARK: routing

    private func route(_ request: EmulatorRequest, state: VonageEmulatorState) throws -> (TransportResponse, [Data]) {
        let parts = request.path.split(separator: "/").map(String.init)
        let now = state.now
        if parts.first == "v2", parts.count >= 2, parts[1] == "verify" {
            if parts.count == 5, parts[3] == "silent-auth", request.method == .get {
                // The device's hops, unauthenticated as Vonage's: check_url, then the mobile network's check.
                switch parts[4] {
                case "redirect": return (try silentAuthRedirect(id: parts[2], state: state), [])
                case "network": return (try silentAuthNetwork(id: parts[2], state: state), [])
                default: break
                }
            }
            guard isAuthorizedV2(request.headerFields[.authorization], now: now) else {
                return (
                    Self.problem(401, "unauthorized", "Unauthorized", "You did not provide correct credentials."), []
                )
            }
            let rest = Array(parts.dropFirst(2))
            switch (rest.count, request.method) {
            case (0, .post): return (try startV2(request.body, now: now, state: state), [])
            case (1, .post): return try checkV2(id: rest[0], body: request.body, now: now, state: state)
            case (1, .delete): return (try cancelV2(id: rest[0], now: now, state: state), [])
            case (2, .post) where rest[1] == "next_workflow":
                return (try nextWorkflowV2(id: rest[0], now: now, state: state), [])
            case (0, _), (1, _):
                return (Self.problem(405, "method-not-allowed", "Method Not Allowed", "Method not allowed."), [])
            default:
                return (Self.problem(404, "not-found", "Not Found", "Request not found."), [])
            }
        }
        if parts.first == "verify", parts.last == "json", request.method == .get || request.method == .post {
            var fields = request.queryItems
            if request.method == .post {
                // A form body, as the spec says; the Python client may label it JSON, so the body decides.
                if let object = try? JSONDecoder().decode([String: JSONValue].self, from: request.body) {
                    for (key, value) in object {
                        if let text = value.stringValue { fields[key] = text }
                        if let number = value.numberValue { fields[key] = String(Int(number)) }
                    }
                } else {
                    for (key, value) in FormEncoding.decode(String(decoding: request.body, as: UTF8.self)) {
                        fields[key] = value
                    }
                }
            }
            // Key and secret in the parameters (the spec), or as Basic auth: vonage-verify-legacy 1.1 sends
            // the header instead of the body parameters.
            let basic =
                fields["api_key"] == nil && isAuthorizedV2(request.headerFields[.authorization], now: now)
                && request.headerFields[.authorization]?.lowercased().hasPrefix("basic ") == true
            guard
                basic
                    || (fields["api_key"] == VonageSandbox.apiKey
                        && ConstantTime.equals(fields["api_secret"] ?? "", VonageSandbox.apiSecret))
            else {
                if fields["api_key"] == nil, request.headerFields[.authorization] == nil {
                    return (Self.v1(status: "2", "Missing api_key"), [])
                }
                return (Self.v1(status: "4", "Invalid credentials were provided"), [])
            }
            switch Array(parts.dropFirst()) {
            case ["json"]: return (try startV1(fields, now: now, state: state), [])
            case ["check", "json"]: return (try checkV1(fields, now: now, state: state), [])
            case ["search", "json"]: return (try searchV1(fields, state: state), [])
            case ["control", "json"]: return (try controlV1(fields, now: now, state: state), [])
            default: break
            }
        }
        return (Self.problem(404, "not-found", "Not Found", "No such Vonage path."), [])
    }

    /// Basic with the sandbox key and secret, or an application JWT signed with the sandbox application key.
    func isAuthorizedV2(_ header: String?, now: Date) -> Bool {
        guard let header else { return false }
        let lowered = header.lowercased()
        if lowered.hasPrefix("basic ") {
            guard let (user, password) = VendorHTTPClient.basicCredentials(header) else { return false }
            return user == VonageSandbox.apiKey && ConstantTime.equals(password, VonageSandbox.apiSecret)
        }
        if let token = VendorHTTPClient.bearerToken(header), let key = applicationKey {
            return VonageJWT.verifyApplicationToken(token, publicKey: key, now: now)?.applicationID
                == VonageSandbox.applicationID
        }
        return false
    }

    // MARK: time

    /// Moves every live request whose step has run out to its next step (or expires it); returns the v2
    /// callbacks to send.
    func advance(_ state: VonageEmulatorState) throws -> [Data] {
        let now = state.now
        do {
            var bodies: [Data] = []
            for var request in try state.dueSteps() {
                var changed = false
                while request.isLive, now >= request.stepStartedAt.addingTimeInterval(request.channelTimeout) {
                    let endedAt = request.stepStartedAt.addingTimeInterval(request.channelTimeout)
                    request.steps[request.position].status = "expired"
                    if request.api == "v2" {
                        bodies.append(event(request, channel: request.current.channel, status: "expired", at: endedAt))
                    }
                    if request.position + 1 < request.steps.count {
                        beginStep(&request, at: request.position + 1, now: endedAt)
                    } else {
                        request.status = "expired"
                        request.finalizedAt = endedAt
                        if request.api == "v2" { bodies.append(summary(request, at: endedAt)) }
                    }
                    changed = true
                }
                if changed { try state.put(request) }
            }
            return bodies
        }
    }

    /// Starts step `index`: a new code on v2 (Vonage's default without `reuse_code`), the same PIN on v1,
    /// and the message in the outbox with its channel.
    func beginStep(_ request: inout VonageEmulatorState.Request, at index: Int, now: Date) {
        request.position = index
        request.stepStartedAt = now
        request.steps[index].initiatedAt = now
        if request.api == "v2", index > 0 { request.code = Self.randomCode(length: request.codeLength) }
        let step = request.steps[index]
        // The outbox lists phone numbers in E.164, as the other emulators do.
        let recipient = step.channel == "email" ? step.to : "+" + step.to
        if step.channel == "silent_auth" {
            request.steps[index].status = "action_pending"
            outbox.record(
                SandboxOutbox.Message(
                    provider: "vonage", kind: .silentAuth, channel: "silent_auth", to: recipient, code: nil,
                    text: "Silent authentication: the device opens \(checkURL(request.id))", sentAt: now))
            return
        }
        request.steps[index].status = "pending"
        let message = SandboxMessages.verificationCode(request.code, language: request.locale)
        let channel = step.channel == "tts" ? "voice" : step.channel
        outbox.record(
            SandboxOutbox.Message(
                provider: "vonage", kind: Channel(rawValue: channel).map(SandboxOutbox.Message.Kind.init) ?? .sms,
                channel: channel, to: recipient, code: request.code, text: "\(request.brand): " + message.text,
                language: message.language, sentAt: now))
    }

    /// The URL the device opens for silent authentication: the emulator's own, on the gateway's address.
    func checkURL(_ id: String) -> String { silentAuthURL(id, hop: "redirect") }

    /// One hop of silent authentication (`redirect`: the `check_url`; `network`: the mobile network's check).
    func silentAuthURL(_ id: String, hop: String) -> String {
        if let base = callbacks.baseURL {
            let gateway = base.deletingLastPathComponent().deletingLastPathComponent()
            return gateway.appending(path: "sandbox/vonage/v2/verify/\(id)/silent-auth/\(hop)").absoluteString
        }
        return "https://api.nexmo.com/v2/verify/\(id)/silent-auth/\(hop)"
    }

    // MARK: callbacks

    func event(_ request: VonageEmulatorState.Request, channel: String, status: String, at: Date) -> Data {
        var callback = VonageWire.Callback(
            requestID: request.id, type: "event", status: status, channel: channel,
            triggeredAt: VonageWire.v2Date(at))
        if status == "action_pending" {
            callback.action = VonageWire.Callback.Action(type: "check", checkURL: checkURL(request.id))
        }
        return Self.encode(callback)
    }

    func summary(_ request: VonageEmulatorState.Request, at: Date) -> Data {
        Self.encode(
            VonageWire.Callback(
                requestID: request.id, type: "summary", status: request.status,
                submittedAt: VonageWire.v2Date(request.createdAt),
                finalizedAt: VonageWire.v2Date(at), channelTimeout: Int(request.channelTimeout),
                workflow: request.steps.map {
                    VonageWire.Callback.WorkflowEntry(
                        channel: $0.channel, initiatedAt: $0.initiatedAt.map(VonageWire.v2Date), status: $0.status)
                }))
    }

    /// Posts each callback to the gateway, signed as Vonage signs; failures are logged, never retried.
    func send(_ bodies: [Data]) async {
        guard !bodies.isEmpty, let url = callbacks.url() else { return }
        for body in bodies {
            var headers = HTTPFields()
            headers[.authorization] = try? VonageJWT.signCallback(
                body: body, secret: VonageSandbox.signatureSecret, apiKey: VonageSandbox.apiKey,
                applicationID: VonageSandbox.applicationID, now: clock.now)
            await callbacks.postJSON(body, headers: headers, to: url, logger: logger, name: "vonage sandbox callback")
        }
    }

    // MARK: bodies

    static func encode(_ value: some Encodable) -> Data { VendorJSON.encode(value) }

    static func json(_ status: Int, _ value: some Encodable) -> TransportResponse { .json(value, status: status) }

    static func problem(
        _ status: Int, _ fragment: String, _ title: String, _ detail: String,
        invalid: [VonageWire.Problem.InvalidParameter]? = nil, requestID: String? = nil
    ) -> TransportResponse {
        let problem = VonageWire.Problem(
            type: "https://developer.vonage.com/en/api-errors/verify-v2#" + fragment, title: title, detail: detail,
            instance: UUID().uuidString.lowercased(), invalidParameters: invalid, requestID: requestID)
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        return TransportResponse(
            status: HTTPResponse.Status(code: status), headerFields: headers, body: encode(problem))
    }

    static func v1(status: String, _ text: String, requestID: String? = nil) -> TransportResponse {
        json(200, VonageWire.V1Response(status: status, requestID: requestID, errorText: text))
    }

    /// The operation name (``VonageErrorMapping``'s) of a request, for the error switch.
    static func operation(of request: EmulatorRequest) -> String? {
        let parts = request.path.split(separator: "/").map(String.init)
        switch (parts.first, parts.count, request.method) {
        case ("v2", 2, .post): return "start"
        case ("v2", 3, .post): return "check"
        case ("v2", 3, .delete): return "cancel"
        case ("v2", 4, .post) where parts[3] == "next_workflow": return "next_workflow"
        case ("verify", 2, _): return "start"
        case ("verify", 3, _) where parts[1] == "check": return "check"
        case ("verify", 3, _) where parts[1] == "search": return "search"
        case ("verify", 3, _) where parts[1] == "control":
            let fields = (request.query ?? "") + "&" + String(decoding: request.body, as: UTF8.self)
            return fields.contains("cmd=cancel") ? "cancel" : "next_workflow"
        default: return nil
        }
    }

    /// Vonage's own answer for an error row: problem details for v2, a `status` in HTTP 200 for v1.
    static func answer(_ row: VendorErrorRow) -> TransportResponse {
        if row.vocabulary == "v1" { return v1(status: row.code ?? "5", row.name) }
        return problem(row.httpStatus ?? 400, row.code ?? "error", row.name, "An error the test switch answered.")
    }

    static func v2ServerError(_ status: Int) -> TransportResponse {
        problem(status, "internal-error", "Internal error", "An internal error occurred.")
    }

    static func v1ServerError(_ status: Int) -> TransportResponse {
        var response = v1(status: "5", "Internal Error")
        response.status = HTTPResponse.Status(code: status)
        return response
    }

    static func randomCode(length: Int) -> String {
        String((0..<length).map { _ in Character(String(Int.random(in: 0...9))) })
    }

    static func randomID() -> String {
        UUID().uuidString.lowercased()
    }

    /// A phone number as Vonage takes it: digits only, a valid number once `+` is put in front.
    static func isValidNumber(_ digits: String) -> Bool {
        guard (7...15).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.first != "0"
        else { return false }
        return (try? PhoneNumber(parsing: "+" + digits))?.isValid == true
    }
}
