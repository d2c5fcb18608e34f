import Foundation
import HTTPTypes
import Logging

/// The one pipeline every plugin's vendor call goes through: the URL from the configured base, the timeout, the
/// call, the mapping of an error answer, the decode of a good one, and the two cases without a usable answer
/// (none at all, or a body the gateway cannot read), each with `sendMayHaveHappened` from the
/// ``VendorOperation``. Logs carry the provider, the operation, the status and the codes, never a URL, a body,
/// a phone number or a code; each call is timed in `gateway_vendor_call_duration_seconds`.
///
/// A plugin keeps only what is its vendor's: its headers and signatures, its wire types and its error table.
public struct VendorHTTPClient: Sendable {
    /// The vendor's name as messages say it (`Vonage`).
    public var vendor: String
    /// The lower-case name of log messages and metadata keys (`vonage` → `vonage refused a call`,
    /// `vonage.operation`).
    public var logName: String
    /// The provider instance the client calls for, in log metadata and metric labels.
    public var providerID: String
    /// Where the API lives, without a trailing slash.
    public var baseURL: String
    /// How calls reach the vendor (the context's).
    public var transport: any HTTPTransport
    /// The deadline for one call (the context's ``ProviderContext/requestTimeout``).
    public var timeout: Duration
    /// The provider's logger (the context's).
    public var logger: Logger
    /// The provider's clock, for the plugin's own times (expiry, signatures).
    public var clock: any WallClock
    /// Where each call is timed (the context's).
    public var metrics: GatewayMetrics
    /// Whether a 5xx answer to an operation that may send keeps `sendMayHaveHappened` (a vendor that does not
    /// say whether a 5xx came before or after it acted); otherwise an error answer never claims a send.
    public var serverErrorMaySend: Bool

    /// A client for `vendor` at `baseURL`, with the transport, deadline, logger, clock and metrics of `context`.
    public init(
        vendor: String, context: ProviderContext, baseURL: String, serverErrorMaySend: Bool = false
    ) {
        self.vendor = vendor
        self.logName = vendor.lowercased()
        self.providerID = context.providerID
        self.baseURL = baseURL
        self.transport = context.transport
        self.timeout = context.requestTimeout
        self.logger = context.logger
        self.clock = context.clock
        self.metrics = context.metrics
        self.serverErrorMaySend = serverErrorMaySend
    }

    /// Sends one call to `baseURL + path` and returns its 2xx answer. An answer outside 2xx becomes the error
    /// `mapError` chooses (logged, counted); no answer becomes `provider_timeout` or `provider_unavailable`.
    /// `logMetadata` adds bounded values of the plugin's to the refusal's log line (a masked device).
    public func send(
        _ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], body: Data = Data(),
        operation: VendorOperation, logMetadata: Logger.Metadata = [:], mapError: (VendorErrorAnswer) -> GatewayError
    ) async throws(GatewayError) -> TransportResponse {
        let url = try url(path)
        var headers = headers
        headers[.userAgent] = "verification-gateway"
        let started = clock.instant
        let response: TransportResponse
        do {
            response = try await transport.send(
                TransportRequest(method: method, url: url, headerFields: headers, body: body), timeout: timeout)
        } catch {
            logger.warning(
                "\(logName) call failed without an answer",
                metadata: [
                    "provider.id": "\(providerID)", "\(logName).operation": "\(operation.name)",
                    "transport.error": "\(Self.name(of: error))",
                ])
            let failure = GatewayError.transport(
                error, vendor: vendor, providerID: providerID, sendMayHaveHappened: operation.sendMayHaveHappened)
            count(operation, outcome: failure.code.rawValue, since: started)
            throw failure
        }
        let status = response.status.code
        guard !(200..<300).contains(status) else {
            count(operation, outcome: "ok", since: started)
            return response
        }
        let retryAfter = response.headerFields[.retryAfter].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        var error = mapError(
            VendorErrorAnswer(
                status: status, headerFields: response.headerFields, body: response.body, retryAfter: retryAfter,
                operation: operation))
        if serverErrorMaySend, status >= 500 { error.sendMayHaveHappened = operation.sendMayHaveHappened }
        count(operation, outcome: error.code.rawValue, since: started)
        throw refused(error, operation: operation, httpStatus: status, logMetadata: logMetadata)
    }

    /// Logs a refusal the plugin found itself (an error inside a 200, as Vonage v1 answers) and returns it.
    public func refused(
        _ error: GatewayError, operation: VendorOperation, httpStatus: Int, logMetadata: Logger.Metadata = [:]
    ) -> GatewayError {
        var metadata: Logger.Metadata = [
            "provider.id": "\(providerID)", "\(logName).operation": "\(operation.name)",
            "http.status": "\(httpStatus)", "\(logName).code": "\(error.vendor?.code ?? "-")",
            "error.code": "\(error.code.rawValue)",
        ]
        metadata.merge(logMetadata) { kept, _ in kept }
        logger.info("\(logName) refused a call", metadata: metadata)
        return error
    }

    /// `baseURL + path` as a URL (a plugin that signs the path reads it from here).
    public func url(_ path: String) throws(GatewayError) -> URL {
        guard let url = URL(string: baseURL + path) else {
            throw GatewayError.internal("The \(vendor) base URL does not form a valid request URL.")
        }
        return url
    }

    /// Decodes a 2xx body as `type`, or throws ``malformed(_:httpStatus:)``.
    public func decode<T: Decodable>(
        _ type: T.Type, from response: TransportResponse, operation: VendorOperation
    ) throws(GatewayError) -> T {
        guard let value = try? JSONDecoder().decode(type, from: response.body) else {
            throw malformed(operation, httpStatus: response.status.code)
        }
        return value
    }

    /// The error for a 2xx answer the provider cannot read (`provider_error`). After an operation that may
    /// send, the vendor accepted it: the send may have happened.
    public func malformed(_ operation: VendorOperation, httpStatus: Int) -> GatewayError {
        logger.warning(
            "\(logName) answered with an unreadable body",
            metadata: [
                "provider.id": "\(providerID)", "\(logName).operation": "\(operation.name)",
                "http.status": "\(httpStatus)",
            ])
        return GatewayError(
            .providerError, "\(vendor) answered \(operation.name) with a body the gateway cannot read.",
            vendor: GatewayError.VendorDetail(providerID: providerID, code: nil, httpStatus: httpStatus),
            sendMayHaveHappened: operation.sendMayHaveHappened)
    }

    /// JSON with sorted keys and unescaped slashes, as the plugins send it.
    public func json(_ value: some Encodable) throws(GatewayError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw GatewayError.internal("The \(vendor) request could not be encoded.")
        }
    }

    /// The failure's kind only: a transport's description may quote the URL, which can carry a key.
    static func name(of error: TransportError) -> String {
        switch error {
        case .timeout: return "timeout"
        case .connectFailed: return "connect_failed"
        case .connectionReset: return "connection_reset"
        }
    }

    private func count(_ operation: VendorOperation, outcome: String, since started: ContinuousClock.Instant) {
        let elapsed = clock.instant - started
        let nanoseconds = elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
        metrics.vendorCall(provider: providerID, operation: operation.name, outcome: outcome, nanoseconds: nanoseconds)
    }
}
