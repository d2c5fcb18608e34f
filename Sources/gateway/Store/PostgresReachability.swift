import NIOCore
import NIOPosix
import Synchronization

/// Lets store operations fail at once while the PostgreSQL server refuses connections.
///
/// postgres-nio's pool keeps a request waiting while it retries a connection that failed (with backoff; it
/// gives up on waiting requests only after a minute), so without this every request during an outage would
/// wait the whole store deadline before its `503`. After an operation fails as unavailable, the next ones
/// first ask whether the server's port takes a TCP connection (one probe at a time, its answer reused for
/// ``probeInterval``): refused means `503 store_unavailable` at once; accepted, or no answer within
/// ``probeTimeout`` (a host that drops packets), means the operation goes to the pool as usual. The first
/// operation that succeeds ends the suspicion; the pool reconnects by itself.
final class PostgresReachability: Sendable {
    static let probeInterval: Duration = .milliseconds(200)
    static let probeTimeout: TimeAmount = .milliseconds(250)

    private struct State {
        var suspect = false
        var probing = false
        var lastProbe: (at: ContinuousClock.Instant, refused: Bool)?
    }

    let host: String
    let port: Int
    private let state = Mutex(State())

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// An operation failed as unavailable: probe before the next ones.
    func noteUnavailable() {
        state.withLock { $0.suspect = true }
    }

    func noteSuccess() {
        state.withLock { state in
            state.suspect = false
            state.lastProbe = nil
        }
    }

    /// Whether the server is known to refuse connections right now.
    func refusesConnections() async -> Bool {
        let now = ContinuousClock.now
        enum Step { case answer(Bool), probe }
        let step = state.withLock { state -> Step in
            guard state.suspect else { return .answer(false) }
            if let last = state.lastProbe, now - last.at < Self.probeInterval { return .answer(last.refused) }
            // Another caller is probing: go by the previous answer meanwhile.
            if state.probing { return .answer(state.lastProbe?.refused ?? false) }
            state.probing = true
            return .probe
        }
        guard case .probe = step else {
            if case .answer(let refused) = step { return refused }
            return false
        }
        let refused = await Self.refuses(host: host, port: port)
        state.withLock { state in
            state.probing = false
            state.lastProbe = (ContinuousClock.now, refused)
        }
        return refused
    }

    /// Opens and closes one TCP connection: true when it failed before ``probeTimeout`` (refused,
    /// unreachable), false when it connected or took longer.
    static func refuses(host: String, port: Int) async -> Bool {
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(probeTimeout)
                .connect(host: host, port: port).get()
            try? await channel.close()
            return false
        } catch ChannelError.connectTimeout {
            return false
        } catch {
            return true
        }
    }
}
