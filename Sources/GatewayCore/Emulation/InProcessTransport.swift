import Foundation

/// A transport that hands requests straight to an emulator, with no sockets: what plugin tests use.
///
/// Requests to any host reach the emulator; the URL's path becomes the emulator path after
/// `pathPrefix` is removed. A timeout longer than the emulator's latency behaves like a real one.
public struct InProcessTransport: HTTPTransport {
    /// The emulator every request reaches.
    public var emulator: any VendorEmulator
    /// A path prefix removed from each request's path before the emulator sees it (a sandbox mount point).
    public var pathPrefix: String

    /// A transport to `emulator`, removing `pathPrefix` from paths that start with it.
    public init(emulator: any VendorEmulator, pathPrefix: String = "") {
        self.emulator = emulator
        self.pathPrefix = pathPrefix
    }

    /// Hands the request to the emulator and waits for it at most `timeout`: a slower emulator is a
    /// ``TransportError/timeout`` and a reset is ``TransportError/connectionReset(_:)``.
    public func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        var path = request.url.path(percentEncoded: true)
        if !pathPrefix.isEmpty, path.hasPrefix(pathPrefix) { path.removeFirst(pathPrefix.count) }
        let emulatorRequest = EmulatorRequest(
            method: request.method, path: path, query: request.url.query(percentEncoded: true),
            headerFields: request.headerFields, body: request.body)
        let emulator = self.emulator
        let outcome: EmulatorResponse? = await withTaskGroup(of: EmulatorResponse?.self) { group in
            group.addTask { await emulator.handle(emulatorRequest) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch outcome {
        case .none: throw .timeout
        case .reset: throw .connectionReset("emulator reset the connection")
        case .response(let response): return response
        }
    }
}
