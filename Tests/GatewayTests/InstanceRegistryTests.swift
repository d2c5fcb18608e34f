import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Synchronization
import Testing

@testable import gateway

@Suite("Instance heartbeats and dead instances")
struct InstanceRegistryTests {
    static let quiet = Logger.quiet

    static let clock = ManualClock(Date(timeIntervalSince1970: 1_900_000_000))

    static func row(
        _ id: String, host: String = "host-1", pid: Int, silentFor seconds: TimeInterval = 0, clock: ManualClock
    )
        -> GatewayInstance
    {
        GatewayInstance(
            id: id, host: host, pid: pid, startedAt: clock.now.addingTimeInterval(-seconds - 60),
            heartbeatAt: clock.now.addingTimeInterval(-seconds))
    }

    static func registry(_ store: any VerificationStore, clock: ManualClock, alive: Set<Int>) -> InstanceRegistry {
        InstanceRegistry(
            store: store, clock: clock, logger: Self.quiet, instanceID: "in_me", host: "host-1", pid: 100,
            deadAfter: 10, verdictLifetime: .zero, processIsAlive: { alive.contains($0) })
    }

    @Test(
        "startup writes this instance's row and removes those of dead processes on this host and of long-silent instances"
    )
    func registerRemovesTheDead() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_900_000_000))
        let store = InMemoryVerificationStore()
        for row in [
            Self.row("in_killed", pid: 200, clock: clock), Self.row("in_running", pid: 101, clock: clock),
            Self.row("in_elsewhere", host: "host-2", pid: 200, clock: clock),
            Self.row("in_forgotten", host: "host-2", pid: 7, silentFor: 90_000, clock: clock),
        ] {
            try await store.heartbeat(row)
        }
        let registry = Self.registry(store, clock: clock, alive: [100, 101])
        #expect(try await registry.register().sorted() == ["in_forgotten", "in_killed"])
        #expect(try await store.instances().map(\.id) == ["in_elsewhere", "in_me", "in_running"])
        let me = try #require(try await store.instances().first { $0.id == "in_me" })
        #expect(me.host == "host-1" && me.pid == 100 && me.heartbeatAt == clock.now)
    }

    @Test("another instance is dead when its row is gone, its process is gone from this host, or it stopped beating")
    func deadOrAlive() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_900_000_000))
        let store = InMemoryVerificationStore()
        try await store.heartbeat(Self.row("in_running", pid: 101, clock: clock))
        try await store.heartbeat(Self.row("in_exited", pid: 102, clock: clock))
        try await store.heartbeat(Self.row("in_elsewhere", host: "host-2", pid: 102, clock: clock))
        let registry = Self.registry(store, clock: clock, alive: [100, 101])
        try await registry.register()
        #expect(await registry.isDead("in_me") == false)
        #expect(await registry.isDead("in_running") == false)
        #expect(await registry.isDead("in_elsewhere") == false)
        #expect(await registry.isDead("in_exited"))
        #expect(await registry.isDead("in_unknown"))
        // This instance beats every few seconds meanwhile; the other host's row stays 10.5 s old.
        for _ in 0..<3 {
            clock.advance(by: 3.5)
            try await registry.beat()
        }
        #expect(await registry.isDead("in_elsewhere"))
        #expect(await registry.isDead("in_me") == false)
        #expect(try await store.instances().first { $0.id == "in_me" }?.heartbeatAt == clock.now)
    }

    @Test("after a store outage, an instance whose heartbeat is old only because nobody could beat keeps its lease")
    func outageKillsNobody() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_900_000_000))
        let store = InMemoryVerificationStore()
        try await store.heartbeat(Self.row("in_elsewhere", host: "host-2", pid: 102, clock: clock))
        let registry = Self.registry(store, clock: clock, alive: [100])
        try await registry.register()
        // Eleven seconds in which nothing reached the store: neither instance beat.
        clock.advance(by: 11)
        try await registry.beat()
        #expect(await registry.isDead("in_elsewhere") == false, "its heartbeat is old because of the outage")
        // The other instance beats again a second later, then stops; this one keeps beating every 2 s.
        clock.advance(by: 1)
        try await store.heartbeat(Self.row("in_elsewhere", host: "host-2", pid: 102, clock: clock))
        for _ in 0..<5 {
            clock.advance(by: 2)
            try await registry.beat()
            #expect(await registry.isDead("in_elsewhere") == false, "its row is at most 10 s old")
        }
        // Its row is older than 10 s now, and this one has beaten without a gap for longer than that: dead.
        clock.advance(by: 0.5)
        #expect(await registry.isDead("in_elsewhere"))
        // A beat that comes late (more than 5 s after the one before) starts this instance's run again: until
        // it has beaten for 10 s more, nobody is judged dead by the age of their heartbeat.
        clock.advance(by: 6)
        try await registry.beat()
        #expect(await registry.isDead("in_elsewhere") == false)
    }

    @Test("a restarted gateway on its SQLite file approves the right code at once after a check died at the vendor")
    func restartReclaimsTheLease() async throws {
        let directory = ScratchDirectories.make("gateway-restart")
        let harness = GatewayHarness(dataDirectory: directory)
        let started = Mutex(("", ""))
        try await harness.run { client, runtime in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550150"}"#)
            let id = try #require(start.body["id"] as? String)
            let code = try sandboxCode(runtime, to: "+14155550150")
            started.withLock { $0 = (id, code) }
        }
        let (id, code) = started.withLock { $0 }
        // What a kill -9 during a check at the vendor leaves: a lease held by an instance whose process is gone.
        let store = try SQLiteVerificationStore(
            path: directory.appendingPathComponent("gateway.sqlite").path, logger: Self.quiet)
        try await store.heartbeat(
            GatewayInstance(
                id: "in_killed", host: ProcessIdentity.hostKey(), pid: Int(Int32.max), startedAt: harness.clock.now,
                heartbeatAt: harness.clock.now))
        let leased = try await store.modify(id: id, durability: StoreWriteDurability.answered) { record in
            var next = record
            next.attempts += 1
            // Ten minutes: waiting for it would blow the bound below; taking it over is what passes.
            next.checkLeaseUntil = harness.clock.now.addingTimeInterval(600)
            next.checkLeaseOwner = "in_killed"
            next.checkLeaseHoldsAttempt = true
            next.version += 1
            return next
        }
        #expect(leased.written != nil)
        store.close()
        try await harness.run { client, runtime in
            let began = ContinuousClock.now
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            // Not a speed target (multi_instance_check.py measures that): a bound far below the lease, generous
            // enough for a loaded machine, that only a check waiting for the dead lease would exceed.
            #expect(ContinuousClock.now - began < .seconds(60))
            #expect(check.status == .ok)
            #expect(check.body["status"] as? String == "approved")
            let stored = try #require(try await runtime.service.store.record(id: id))
            #expect(stored.attempts == 1)
            #expect(try await runtime.service.store.instances().contains { $0.id == "in_killed" } == false)
        }
    }
}
