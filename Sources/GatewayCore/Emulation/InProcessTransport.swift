import Foundation

/// A transport that hands requests straight to an emulator, with no sockets: what plugin tests use.
///
/// Requests to any host reach the emulator; the URL's path becomes the emulator path after
/// `pathPrefix` is removed. A timeout longer than the emulator's latency behaves like a real one.
public struct InProcessTransport: HTTPTransport {
    public var emulator: any VendorEmulator
    public var pathPrefix: String

    public init(emulator: any VendorEmulator, pathPrefix: String = "") {
        self.emulator = emulator
        self.pathPrefix = pathPrefix
    }

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
