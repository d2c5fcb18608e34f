import Dispatch
import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Synchronization
import Testing

@testable import gateway

/// The SQLite store's group commit (docs/performance.md, "Group commit"): calls that queue up together run
/// in one transaction, each in its own savepoint, and are answered only once that transaction is committed.
///
/// Each test holds the store's queue with one call, queues the calls under test behind it one at a time (so
/// their order is known), then lets the queue go: they run as one group.
@Suite("SQLite group commit")
struct SQLiteGroupCommitTests {
    let directory = TemporaryDirectory("gateway-sqlite-group-tests")

    private func path() -> String { directory.path("store.sqlite") }

    private func store() throws -> SQLiteVerificationStore {
        try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
    }

    /// Runs `calls` as one group of `store`'s queue, in the order given; their results in that order.
    private func inOneGroup<R: Sendable>(
        _ store: SQLiteVerificationStore, _ calls: [@Sendable () async throws -> R]
    ) async throws -> [Result<R, any Error>] {
        let database = store.database
        let gate = DispatchSemaphore(value: 0)
        let holding = Atomic(false)
        let holder = Task {
            try await database.perform { (_) throws(SQLiteError) in
                holding.store(true, ordering: .sequentiallyConsistent)
                gate.wait()
            }
        }
        try await waitUntil { holding.load(ordering: .sequentiallyConsistent) }
        var tasks: [Task<R, any Error>] = []
        for (index, call) in calls.enumerated() {
            tasks.append(Task { try await call() })
            try await waitUntil { database.queuedCalls == index + 1 }
        }
        gate.signal()
        try await holder.value
        var results: [Result<R, any Error>] = []
        for task in tasks { results.append(await task.result) }
        return results
    }

    private func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)  // against a hang, not a speed figure: CI shares two cores
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Rows of `verifications` as another connection to the file sees them.
    private func storedIDs() throws -> Set<String> {
        let connection = try SQLiteConnection(path: path(), synchronous: .full)
        defer { connection.close() }
        return Set(
            try connection.query("SELECT id FROM verifications") { (row) throws(SQLiteError) in row.text(0) ?? "" })
    }

    private func record(_ index: Int) throws -> VerificationRecord {
        try StoreConformance.phoneRecord(id: "VEgroup\(1000 + index)")
    }

    @Test("Calls queued together are committed as one group, and each is in the file when it is answered")
    func oneGroup() async throws {
        let store = try store()
        let records = try (0..<30).map(record)
        let before = store.database.groupCounters
        let results = try await inOneGroup(
            store, records.map { record in { @Sendable in try await store.insert(record) } })
        for result in results { try result.get() }
        let after = store.database.groupCounters
        // The holding call alone, then the thirty together.
        #expect(after.groups - before.groups == 2)
        #expect(after.calls - before.calls == 31)
        #expect(after.largestGroup == 30)
        #expect(try storedIDs() == Set(records.map(\.id)))
    }

    @Test("The store counts each operation's calls and statements, and a group of writes as one commit")
    func callCounts() async throws {
        let store = try store()
        let before = store.callCounts.commits
        let first = try record(0)
        try await store.insert(first)  // alone: its own transaction, one commit
        #expect(try await store.record(id: first.id) == first)  // a read commits nothing
        #expect(store.callCounts.commits - before == 1)
        let records = try (1...10).map(record)
        let results = try await inOneGroup(
            store, records.map { record in { @Sendable in try await store.insert(record) } })
        for result in results { try result.get() }
        // Ten inserts in one group: one commit.
        #expect(store.callCounts.commits - before == 2)
        let counts = store.callCounts.snapshot
        #expect(counts["insert"]?.calls == 11)
        #expect(counts["insert"]?.statements == 11)  // a record without events: one statement each
        #expect(counts["record"] == StoreCallCounts.Tally(calls: 1, statements: 1))
    }

    @Test("A call that fails in a group is rolled back alone; the others are committed")
    func failureIsolated() async throws {
        let store = try store()
        let first = try record(0)
        try await store.insert(first)
        let second = try record(1)
        let third = try record(2)
        let stale = StoreConformance.nextVersion(of: first, attempts: 3)
        let event = VerificationEvent(verificationID: second.id, kind: .providerCall, at: StoreConformance.epoch)
        let results = try await inOneGroup(
            store,
            [
                { @Sendable in
                    try await store.insert(second, events: [event])
                    return "inserted"
                },
                { @Sendable in
                    try await store.insert(first)
                    return "inserted again"
                },
                { @Sendable in try await store.update(stale) ? "updated" : "not updated" },
                { @Sendable in try await store.update(stale) ? "updated" : "not updated" },
                { @Sendable in
                    try await store.insert(third)
                    return "inserted"
                },
            ])
        #expect(try results[0].get() == "inserted")
        #expect(throws: GatewayError.self) { try results[1].get() }
        // Two updates from one version in one group (a double tap): exactly one wins.
        #expect(try results[2].get() == "updated")
        #expect(try results[3].get() == "not updated")
        #expect(try results[4].get() == "inserted")
        #expect(try storedIDs() == [first.id, second.id, third.id])
        #expect(try await store.record(id: first.id) == stale)
        #expect(try await store.events(verificationID: second.id) == [event])
    }

    @Test("A read in a group sees the writes queued before it, and not those after it")
    func readsInOrder() async throws {
        let store = try store()
        let first = try record(0)
        let second = try record(1)
        let results = try await inOneGroup(
            store,
            [
                { @Sendable in
                    try await store.insert(first)
                    return ""
                },
                { @Sendable in try await store.record(id: first.id)?.id ?? "none" },
                { @Sendable in try await store.record(id: second.id)?.id ?? "none" },
                { @Sendable in
                    try await store.insert(second)
                    return ""
                },
            ])
        #expect(try results[1].get() == first.id)
        #expect(try results[2].get() == "none")
        #expect(try storedIDs() == [first.id, second.id])
    }

    @Test("A failed commit fails every call of its group, reads included, and stores none of it")
    func failedCommit() async throws {
        let store = try store()
        let kept = try record(0)
        try await store.insert(kept)
        try store.database.performSync { (connection) throws(SQLiteError) in connection.vetoCommits(true) }
        let lost = try (1...3).map(record)
        let results = try await inOneGroup(
            store,
            lost.map { record in
                { @Sendable in
                    try await store.insert(record)
                    return ""
                }
            }
                + [{ @Sendable in try await store.record(id: kept.id)?.id ?? "none" }])
        for result in results {
            #expect(throws: GatewayError.self) { try result.get() }
        }
        try store.database.performSync { (connection) throws(SQLiteError) in connection.vetoCommits(false) }
        #expect(try storedIDs() == [kept.id])
        // The queue goes on: the same writes succeed now.
        for record in lost { try await store.insert(record) }
        #expect(try storedIDs() == Set(([kept] + lost).map(\.id)))
    }

    @Test("A group that cannot take the write lock fails its calls; the next group works")
    func lockedFile() async throws {
        let store = try store()
        try store.database.performSync { (connection) throws(SQLiteError) in
            try connection.execute("PRAGMA busy_timeout=50")
        }
        let other = try SQLiteConnection(path: path(), synchronous: .full)
        defer { other.close() }
        try other.execute("BEGIN IMMEDIATE")
        let records = try (0..<2).map(record)
        let results = try await inOneGroup(
            store, records.map { record in { @Sendable in try await store.insert(record) } })
        for result in results {
            #expect(throws: GatewayError.self) { try result.get() }
        }
        try other.execute("COMMIT")
        let again = try await inOneGroup(
            store, records.map { record in { @Sendable in try await store.insert(record) } })
        for result in again { try result.get() }
        #expect(try storedIDs() == Set(records.map(\.id)))
    }

    @Test("Provisional writes grouped alone or with answered ones leave the file at synchronous=FULL")
    func provisionalGroups() async throws {
        let store = try store()
        let records = try (0..<4).map(record)
        for record in records { try await store.insert(record) }
        let provisional = records.map { record in
            { @Sendable in try await store.update(StoreConformance.nextVersion(of: record), durability: .provisional) }
        }
        for result in try await inOneGroup(store, Array(provisional[0..<2])) { #expect(try result.get()) }
        let mixed: [@Sendable () async throws -> Bool] = [
            provisional[2], { @Sendable in try await store.update(StoreConformance.nextVersion(of: records[3])) },
        ]
        for result in try await inOneGroup(store, mixed) { #expect(try result.get()) }
        let mode = try await store.database.perform { (connection) throws(SQLiteError) in
            try connection.query("PRAGMA synchronous") { (row) throws(SQLiteError) in row.int64(0) }.first ?? nil
        }
        #expect(mode == 2)  // FULL
        for record in records { #expect(try await store.record(id: record.id)?.version == record.version + 1) }
    }

    @Test("Many concurrent writers: every answered write is stored, and groups form under load")
    func concurrentLoad() async throws {
        let store = try store()
        let records = try (0..<400).map(record)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for record in records { group.addTask { try await store.insert(record) } }
            try await group.waitForAll()
        }
        #expect(try storedIDs().count == records.count)
        #expect(store.database.groupCounters.calls == records.count)
    }

    @Test(
        "A check reads and leases in one store call: two calls per check, and double checks still settle one at a time")
    func checkLeaseIsOneCall() async throws {
        let store = try store()
        let provider = ScriptedProvider(id: "alpha")
        provider.setFallbackStart(.succeed(ProviderStartResult(reference: "VEalpha0001")))
        let gate = ScriptedGate()
        provider.setFallbackCheck(
            .run { () throws(GatewayError) -> ProviderCheckResult in
                await gate.wait()
                return ProviderCheckResult(status: .pending)
            })
        let service = VerificationService(
            registry: try makeRegistry([provider]), routing: RoutingTable(routes: [:], defaultOrder: ["alpha"]),
            store: store, clock: SystemClock(), logger: .quiet)
        let start = StartVerification(destination: .phone(try PhoneNumber(parsing: "+16505553434")), channel: .sms)
        let started = try await service.start(start)
        let check = CheckVerification(verificationID: started.id, code: "000000")

        // Two checks at once: the first holds the lease at the vendor; the second waits for it.
        let before = store.database.groupCounters
        let first = Task { try await service.check(check) }
        let second = Task { try await service.check(check) }
        try await waitUntil { provider.calls.filter { $0.operation == .check }.count == 1 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(provider.calls.filter { $0.operation == .check }.count == 1)
        gate.open()
        for task in [first, second] {
            let result = await task.result
            guard case .failure(let error) = result else {
                Issue.record("a wrong code was accepted")
                continue
            }
            #expect((error as? GatewayError)?.code == .incorrectCode)
        }
        let stored = try #require(try await store.record(id: started.id))
        #expect(stored.attempts == 2)
        #expect(stored.checkLeaseUntil == nil)
        // The second check read the held lease at least once in its waiting; each check otherwise made two
        // store calls: the read with its lease, and the settle with its events.
        let calls = store.database.groupCounters.calls - before.calls
        #expect(calls >= 4)

        let alone = store.database.groupCounters
        await #expect(throws: GatewayError.self) { try await service.check(check) }
        #expect(store.database.groupCounters.calls - alone.calls == 2)
    }
}
