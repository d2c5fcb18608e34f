import Foundation
import HTTPTypes
import Logging

/// A vendor's server, emulated on the wire: a plain request-to-response handler.
///
/// The sandbox mounts it under `/sandbox/<plugin id>` on the gateway's own port; tests call it in
/// process through ``InProcessTransport``. Paths it sees are relative to its mount point
/// (`/v2/Services/VA…/Verifications` for Twilio).
public protocol VendorEmulator: Sendable {
    /// The fault switch tests and the sandbox use to make the vendor misbehave.
    var faults: FaultSwitch { get }

    /// Answers one request. `path` excludes the mount point; `query` is the raw query string.
    func handle(_ request: EmulatorRequest) async -> EmulatorResponse
}

/// A request as an emulator sees it.
public struct EmulatorRequest: Sendable {
    /// The HTTP method.
    public var method: HTTPRequest.Method
    /// The path below the emulator's mount point, percent-encoded as sent.
    public var path: String
    /// The raw query string, without the `?`; `nil` when the URL has none.
    public var query: String?
    /// The request's header fields.
    public var headerFields: HTTPFields
    /// The request body.
    public var body: Data

    /// A request as the transport or the sandbox received it.
    public init(method: HTTPRequest.Method, path: String, query: String?, headerFields: HTTPFields, body: Data) {
        self.method = method
        self.path = path
        self.query = query
        self.headerFields = headerFields
        self.body = body
    }

    /// The decoded query parameters (last value wins).
    public var queryItems: [String: String] {
        guard let query, !query.isEmpty else { return [:] }
        return FormEncoding.decode(query)
    }
}

/// What an emulator answers: a response, or a dropped connection.
public enum EmulatorResponse: Sendable {
    case response(TransportResponse)
    /// The connection is reset after the request was read (an ambiguous failure).
    case reset
}

/// What an emulator is built with.
public struct EmulatorContext: Sendable {
    /// The clock the emulator's expiries and timestamps are reckoned by.
    public var clock: any WallClock
    /// Where the emulator records the messages it "sends".
    public var outbox: SandboxOutbox
    /// The logger for the emulator's own messages.
    public var logger: Logger
    /// Calls the gateway back as the vendor would, at its callback route.
    public var callbacks: CallbackSender
    /// Where the emulator keeps its state across restarts.
    public var persistence: any EmulatorPersistence

    /// A context with the caller's clock and logger, and unless given a new outbox, no callbacks and no
    /// persistence.
    public init(
        clock: any WallClock, outbox: SandboxOutbox = SandboxOutbox(),
        logger: Logger, callbacks: CallbackSender = .none,
        persistence: any EmulatorPersistence = NoEmulatorPersistence()
    ) {
        self.persistence = persistence
        self.clock = clock
        self.outbox = outbox
        self.logger = logger
        self.callbacks = callbacks
    }
}

/// How an emulator calls the gateway back, as its vendor calls a webhook: to the gateway's
/// `/callbacks/<provider id>` route, signed by the emulator as the vendor signs.
///
/// A vendor is told the gateway's public address (`public_base_url`) and signs over it; a proxy or tunnel
/// in front of the gateway forwards the call. The sandbox's emulators do the same: ``url(_:)`` is under the
/// public ``baseURL``, which signatures cover, and ``send(_:timeout:)`` delivers to the gateway's own
/// address when that differs, as the proxy would.
public struct CallbackSender: Sendable {
    /// The callback route of the provider the emulator stands behind, as the vendor was told it
    /// (`…/callbacks/twilio`); `nil` when the emulator has no gateway to call.
    public var baseURL: URL?
    /// Where calls under ``baseURL`` are delivered (the gateway's own callback route), when not there.
    private let deliveryURL: URL?
    private let transport: (any HTTPTransport)?

    /// `deliveredTo`: the gateway's own callback route, when the vendor was told another (`baseURL`).
    public init(baseURL: URL?, deliveredTo deliveryURL: URL? = nil, transport: (any HTTPTransport)?) {
        self.baseURL = baseURL
        self.deliveryURL = deliveryURL
        self.transport = transport
    }

    /// An emulator that calls nobody back.
    public static let none = CallbackSender(baseURL: nil, transport: nil)

    /// The full URL for `subpath` under the callback route, which a vendor signature may cover.
    public func url(_ subpath: String = "") -> URL? {
        guard let baseURL else { return nil }
        return subpath.isEmpty ? baseURL : baseURL.appending(path: subpath)
    }

    /// Sends a callback built with ``url(_:)``, to the gateway's own address when the vendor was told another.
    public func send(_ request: TransportRequest, timeout: Duration = .seconds(10)) async throws(TransportError)
        -> TransportResponse
    {
        guard let transport else { throw .connectFailed("this emulator has no gateway to call back") }
        return try await transport.send(delivered(request), timeout: timeout)
    }

    /// Posts a JSON callback to ``url(_:)``, as a vendor fires its webhooks: an answer outside 2xx or a failure is
    /// logged (`<name> refused`, `<name> failed`), never retried.
    public func postJSON(_ body: Data, headers extra: HTTPFields, to url: URL, logger: Logger, name: String) async {
        var headers = extra
        headers[.contentType] = "application/json"
        do {
            let response = try await send(TransportRequest(method: .post, url: url, headerFields: headers, body: body))
            if !(200..<300).contains(response.status.code) {
                logger.notice("\(name) refused", metadata: ["http.status": "\(response.status.code)"])
            }
        } catch {
            logger.notice("\(name) failed", metadata: ["error": "\(error)"])
        }
    }

    /// Sends a receipt-like callback until the gateway takes it (a 2xx), as a vendor that retries does: after a
    /// failure, a `404`, a `429` or a 5xx it tries again, `attempts` times in all, waiting 250 ms and then twice as long
    /// each time. A receipt can reach the gateway before the start that sent the message has stored it, which
    /// answers `404` until it has. Gives up (logging `<name> refused`) after the last attempt.
    public func sendRetrying(_ request: TransportRequest, attempts: Int = 7, logger: Logger, name: String) async {
        var pause = Duration.milliseconds(250)
        for attempt in 1...max(1, attempts) {
            let status = try? await send(request).status.code
            if let status, (200..<300).contains(status) { return }
            let retryable = status.map { $0 == 404 || $0 == 429 || $0 >= 500 } ?? true
            if attempt == attempts || !retryable {
                logger.notice("\(name) refused", metadata: ["http.status": "\(status.map(String.init) ?? "none")"])
                return
            }
            try? await Task.sleep(for: pause)
            pause *= 2
        }
    }

    /// `request` with its URL moved from under ``baseURL`` to under the delivery address, if there is one.
    func delivered(_ request: TransportRequest) -> TransportRequest {
        guard let baseURL, let deliveryURL else { return request }
        let told = baseURL.absoluteString
        let url = request.url.absoluteString
        guard url.hasPrefix(told), let moved = URL(string: deliveryURL.absoluteString + url.dropFirst(told.count))
        else {
            return request
        }
        var request = request
        request.url = moved
        return request
    }
}

extension VendorEmulator {
    /// Applies the fault switch around `body`: latency first, then the request's fault. A 5xx is answered
    /// instead of handling the request (the vendor refused; nothing happened). A reset or malformed body
    /// from a rate runs `body` first, so the vendor has acted (a start has sent its message) when the
    /// answer is lost or garbled: what makes those failures ambiguous for the gateway. The switches
    /// `connection_reset` and `malformed_body` skip `body`. `serverError` builds the vendor's own 5xx body.
    public func withFaults(
        serverError: (Int) -> TransportResponse,
        _ body: () async -> EmulatorResponse
    ) async -> EmulatorResponse {
        let fault = self.faults.take()
        if fault.latencyMilliseconds > 0 {
            try? await Task.sleep(for: .milliseconds(fault.latencyMilliseconds))
        }
        switch fault.outcome {
        case .none:
            return await body()
        case .serverError(let status):
            return .response(serverError(status))
        case .reset(let afterHandling):
            if afterHandling { _ = await body() }
            return .reset
        case .malformed(let afterHandling):
            if afterHandling { _ = await body() }
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return .response(
                TransportResponse(status: .ok, headerFields: headers, body: Data("{\"unexpected\": [".utf8)))
        }
    }
}
