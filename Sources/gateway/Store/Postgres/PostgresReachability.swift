import NIOCore
import NIOPosix
import Synchronization

/// Lets store operations fail at once while the PostgreSQL server refuses connections.
///
/// postgres-nio's pool keeps a request waiting while it retries a connection that failed (with backoff; it
/// gives up on waiting requests only after a minute), so without this every request during an outage would
/// wait the whole store deadline before its `503`. An operation still waiting after ``probeDelay`` asks, every
/// ``probeInterval`` until it ends, whether the server's port takes a TCP connection; once one has failed as
/// unavailable, every operation asks before it goes to the pool. Refused means `503 store_unavailable` at
/// once; accepted, or no answer within ``probeTimeout`` (a host that drops packets), means the operation waits
/// for the pool as usual, up to the store deadline. One probe runs at a time and its answer is reused for
/// ``probeInterval``, so a slow store costs the server at most five probe connections a second per
/// instance. The first operation that succeeds ends the suspicion; the pool reconnects by itself.
final class PostgresReachability: Sendable {
    static let probeInterval: Duration = .milliseconds(200)
    static let probeTimeout: TimeAmount = .milliseconds(250)
    /// How long an operation waits for the pool before the server is probed. Short, so the first request of
    /// an outage is not held for the whole store deadline; long enough that a healthy store's operations,
    /// which finish in a few milliseconds, rarely cause a probe.
    static let probeDelay: Duration = .milliseconds(100)

    private struct State {
        var suspect = false
        var running: Task<Bool, Never>?
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

    /// Whether the server is known to refuse connections right now: probes only once an operation has
    /// failed as unavailable (or a probe found the port refusing).
    func refusesConnections() async -> Bool {
        guard state.withLock({ $0.suspect }) else { return false }
        return await probe()
    }

    /// Probes until the server's port refuses a connection (true) or the task is cancelled (false): for an
    /// operation that waits for the pool, which holds it while the server is down. A probe that connected,
    /// or that had no answer in time (a host that drops packets, or a machine too busy to run the probe's
    /// event loop within ``probeTimeout``), is tried again after ``probeInterval``.
    func refusedWhileWaiting() async -> Bool {
        while !Task.isCancelled {
            if await probe() { return true }
            try? await Task.sleep(for: Self.probeInterval)
        }
        return false
    }

    /// Whether the server's port refuses connections: the last probe's answer if it is recent, else the
    /// answer of the probe in flight, else a new probe's. A refusal makes later operations probe first.
    func probe() async -> Bool {
        let now = ContinuousClock.now
        enum Step {
            case answer(Bool)
            case wait(Task<Bool, Never>)
        }
        let step = state.withLock { state -> Step in
            if let last = state.lastProbe, now - last.at < Self.probeInterval { return .answer(last.refused) }
            if let running = state.running { return .wait(running) }
            let (host, port) = (host, port)
            let task = Task {
                let refused = await Self.refuses(host: host, port: port)
                self.finishProbe(refused: refused)
                return refused
            }
            state.running = task
            return .wait(task)
        }
        switch step {
        case .answer(let refused): return refused
        case .wait(let task): return await task.value
        }
    }

    private func finishProbe(refused: Bool) {
        state.withLock { state in
            state.running = nil
            state.lastProbe = (ContinuousClock.now, refused)
            if refused { state.suspect = true }
        }
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
