import Foundation
import GatewayCore
import Synchronization

/// Passes requests on and keeps a copy of each.
final class RecordingTransport: HTTPTransport {
    private let next: any HTTPTransport
    private let log = Mutex<[TransportRequest]>([])

    init(_ next: any HTTPTransport) { self.next = next }

    var requests: [TransportRequest] { log.withLock { $0 } }

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        log.withLock { $0.append(request) }
        return try await next.send(request, timeout: timeout)
    }
}
