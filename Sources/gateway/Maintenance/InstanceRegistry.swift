import Foundation
import GatewayCore
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// This instance's heartbeat, and the judge of other instances' leases (docs/architecture.md §9.3).
///
/// At startup the instance writes its row (a new id each start) and deletes the rows of instances found
/// dead: on this host, a process that is gone; anywhere, a heartbeat older than a day. Their leases are
/// then taken over at the first touch. While it runs it renews its heartbeat every ``interval``; another
/// instance is dead when its row is gone, its process is gone from this host, or its heartbeat is older
/// than ``deadAfter`` while this instance's own heartbeats have been reaching the store for longer than that.
///
/// The last condition is what a store outage needs: while the store cannot be written, no instance can
/// beat, so once it is back every heartbeat is old, the living ones' too. Judged by age alone, a live
/// instance whose check was at the vendor during the outage would lose its lease, and the attempt that check
/// reserved would be given back although the vendor counted the code and the check answers it as counted.
/// So a stale heartbeat means death only once this instance has beaten without a gap (no failure, no two
/// beats more than half of ``deadAfter`` apart) for longer than ``deadAfter``: long enough for every live
/// instance to have beaten meanwhile.
final class InstanceRegistry: LeaseOwners, Service {
    let instanceID: String
    let store: any VerificationStore
    let clock: any WallClock
    let logger: Logger
    /// This process: the host it runs on (``ProcessIdentity/hostKey()``) and its pid.
    let host: String
    let pid: Int
    let startedAt: Date
    let interval: Duration
    let deadAfter: TimeInterval
    /// How long a verdict of ``isDead(_:)`` is reused: a check waiting on a lease asks on every turn.
    let verdictLifetime: Duration
    private let processIsAlive: @Sendable (Int) -> Bool
    /// What ``isDead(_:)`` last found per instance.
    private let verdicts = Mutex<[String: (at: ContinuousClock.Instant, dead: Bool)]>([:])
    /// This instance's run of heartbeats that reached the store without a gap: when it began and the
    /// latest; nil after a failed one.
    private let streak = Mutex<(since: Date, last: Date)?>(nil)

    /// A heartbeat row older than this is deleted at startup, whatever host it names.
    static let forgetAfter: TimeInterval = 86_400

    init(
        store: any VerificationStore, clock: any WallClock, logger: Logger,
        instanceID: String = InstanceRegistry.newID(),
        host: String = ProcessIdentity.hostKey(), pid: Int = ProcessIdentity.currentPID(),
        interval: Duration = .seconds(1), deadAfter: TimeInterval = 10, verdictLifetime: Duration = .milliseconds(250),
        processIsAlive: @escaping @Sendable (Int) -> Bool = ProcessIdentity.isAlive
    ) {
        self.instanceID = instanceID
        self.store = store
        self.clock = clock
        self.logger = logger
        self.host = host
        self.pid = pid
        startedAt = clock.now
        self.interval = interval
        self.deadAfter = deadAfter
        self.verdictLifetime = verdictLifetime
        self.processIsAlive = processIsAlive
    }

    /// `in_` and 16 hex digits from the system's secure generator.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return "in_" + Hex.lowercase(generator.next() as UInt64)
    }

    /// Writes this instance's row and deletes the rows of instances found dead; returns their ids.
    @discardableResult
    func register() async throws(GatewayError) -> [String] {
        try await beat()
        var removed: [String] = []
        for other in try await store.instances() where other.id != instanceID {
            let forgotten = clock.now.timeIntervalSince(other.heartbeatAt) > Self.forgetAfter
            guard forgotten || (other.host == host && !processIsAlive(other.pid)) else { continue }
            try await store.removeInstance(id: other.id)
            removed.append(other.id)
        }
        if !removed.isEmpty {
            logger.notice(
                "dead instances removed; their leases are taken over at once",
                metadata: ["instance.id": "\(instanceID)", "instance.removed": "\(removed.joined(separator: ","))"])
        }
        return removed
    }

    func beat() async throws(GatewayError) {
        do {
            try await store.heartbeat(
                GatewayInstance(id: instanceID, host: host, pid: pid, startedAt: startedAt, heartbeatAt: clock.now))
        } catch {
            streak.withLock { $0 = nil }
            throw error
        }
        let now = clock.now
        let gap = deadAfter / 2
        streak.withLock { streak in
            // A beat that took long (one that hung through an outage) or came late starts a new run.
            if let run = streak, now.timeIntervalSince(run.last) <= gap {
                streak = (run.since, now)
            } else {
                streak = (now, now)
            }
        }
    }

    /// Whether this instance's heartbeats have reached the store without a gap for longer than ``deadAfter``
    /// until lately: only then does another instance's old heartbeat mean that it stopped beating.
    func beatsLongEnough() -> Bool {
        guard let run = streak.withLock({ $0 }) else { return false }
        let now = clock.now
        return now.timeIntervalSince(run.last) <= deadAfter / 2 && now.timeIntervalSince(run.since) > deadAfter
    }

    /// Renews the heartbeat until shutdown. The row stays after a graceful stop: a check of this instance
    /// may still be finishing, and the row goes stale (or its process is gone) soon enough.
    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            do {
                try await beat()
            } catch {
                logger.warning("instance heartbeat failed", metadata: ["error.code": "\(error.code.rawValue)"])
            }
        }
    }

    func isDead(_ id: String) async -> Bool {
        if id == instanceID { return false }
        let now = ContinuousClock.now
        if let verdict = verdicts.withLock({ $0[id] }), now - verdict.at < verdictLifetime { return verdict.dead }
        // A store that cannot answer leaves the owner alive: its lease then lapses on its own.
        guard let instances = try? await store.instances() else { return false }
        let dead = instances.first { $0.id == id }.map(judge) ?? true
        verdicts.withLock { $0[id] = (now, dead) }
        return dead
    }

    /// Dead: its process is gone from this host, or its heartbeat stopped while this instance's did not.
    func judge(_ instance: GatewayInstance) -> Bool {
        if instance.host == host && !processIsAlive(instance.pid) { return true }
        return beatsLongEnough() && clock.now.timeIntervalSince(instance.heartbeatAt) > deadAfter
    }
}

/// Which process this is, in terms another process on the same host can check.
enum ProcessIdentity {
    /// The host name, the boot id and the process-id namespace: two processes with the same key and pid are
    /// the same process (a container with its own pid namespace gets another key, so its pids are never
    /// judged from outside).
    static func hostKey() -> String {
        var parts = [ProcessInfo.processInfo.hostName]
        if let boot = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) {
            parts.append(boot.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        if let namespace = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid") {
            parts.append(namespace)
        }
        return parts.joined(separator: "/")
    }

    static func currentPID() -> Int {
        Int(getpid())
    }

    /// Whether a process with this pid exists on this host (one we may not signal exists too).
    static func isAlive(_ pid: Int) -> Bool {
        guard pid > 0, let value = Int32(exactly: pid) else { return false }
        return kill(value, 0) == 0 || errno == EPERM
    }
}
