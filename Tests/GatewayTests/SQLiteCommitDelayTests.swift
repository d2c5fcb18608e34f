import Dispatch
import Foundation
import GatewayTestSupport
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

@testable import gateway

/// The SQLite store's commit delay (docs/performance.md, "Commit delay"): a group that needs a sync waits for
/// the writes of other requests in flight, never when a request is alone, never past its maximum, and it stops
/// waiting as soon as enough calls have joined.
///
/// The maximum is an hour where a test shows that something does *not* wait for it: if it did, the test's
/// time limit would fail it. No test measures a duration.
@Suite("SQLite commit delay", .timeLimit(.minutes(2)))
struct SQLiteCommitDelayTests {
    let directory = TemporaryDirectory("gateway-sqlite-delay-tests")

    private func database(
        maximum: Duration, siblings: Int, synchronous: SQLiteSynchronous = .full,
        inFlight: @escaping @Sendable () -> Int
    ) throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(
            path: directory.path("delay-\(UUID().uuidString).sqlite"), synchronous: synchronous,
            commitDelay: SQLiteCommitDelay(maximum: maximum, siblings: siblings, inFlight: inFlight))
        try database.performSync { (connection) throws(SQLiteError) in
            _ = try connection.run("CREATE TABLE numbers (value INTEGER PRIMARY KEY)")
        }
        return database
    }

    private func insert(_ database: SQLiteDatabase, _ value: Int, durability: SQLiteWriteDurability = .synced)
        async throws
    {
        try await database.perform(durability: durability) { (connection) throws(SQLiteError) in
            _ = try connection.run("INSERT INTO numbers (value) VALUES (?)", [.integer(Int64(value))])
        }
    }

    private func count(_ database: SQLiteDatabase) throws -> Int {
        try database.performSync { (connection) throws(SQLiteError) -> Int in
            try connection.query("SELECT COUNT(*) FROM numbers") { (row) throws(SQLiteError) in row.int(0) ?? 0 }
                .first ?? 0
        }
    }

    private func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)  // against a hang, not a speed figure
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test("A write waits for the others in flight, and they commit with it, each still failing alone")
    func waitsForSiblings() async throws {
        // Three requests in flight, one sibling enough to wait: the first write waits until the other two are
        // queued, then they run in its transaction. The third breaks the primary key: it alone fails.
        let database = try database(maximum: .seconds(3600), siblings: 1, inFlight: { 3 })
        let before = database.groupCounters
        let first = Task { try await insert(database, 1) }
        try await waitUntil { database.isWaitingForCalls }
        let second = Task { try await insert(database, 2) }
        try await waitUntil { database.queuedCalls == 1 }
        let third = Task { try await insert(database, 1) }
        try await first.value
        try await second.value
        await #expect(throws: SQLiteError.self) { try await third.value }
        let after = database.groupCounters
        #expect(after.groups - before.groups == 1)
        #expect(after.calls - before.calls == 3)
        #expect(after.largestGroup == 3)
        #expect(after.delayed - before.delayed == 1)
        #expect(try count(database) == 2)
    }

    @Test("A group that only read commits at once, others in flight or not")
    func readDoesNotWait() async throws {
        let database = try database(maximum: .seconds(3600), siblings: 1, inFlight: { 100 })
        let read = try await database.perform { (connection) throws(SQLiteError) -> Int in
            try connection.query("SELECT value FROM numbers") { (row) throws(SQLiteError) in row.int(0) ?? 0 }.count
        }
        #expect(read == 0)
        #expect(database.groupCounters.delayed == 0)
    }

    @Test("A request alone never waits")
    func aloneDoesNotWait() async throws {
        // In flight: the request itself. It is in the group, so no one else can join.
        let database = try database(maximum: .seconds(3600), siblings: 1, inFlight: { 1 })
        let before = database.groupCounters
        for value in 1...5 { try await insert(database, value) }
        let after = database.groupCounters
        #expect(after.delayed == before.delayed)
        #expect(after.groups - before.groups == 5)
        #expect(try count(database) == 5)
    }

    @Test("Fewer requests in flight than the siblings it takes: no wait")
    func belowSiblings() async throws {
        let database = try database(maximum: .seconds(3600), siblings: 5, inFlight: { 5 })
        try await insert(database, 1)  // four others in flight: one short of five
        #expect(database.groupCounters.delayed == 0)
    }

    @Test("The wait ends at the maximum even when the others never write")
    func endsAtMaximum() async throws {
        let database = try database(maximum: .milliseconds(20), siblings: 5, inFlight: { 100 })
        let before = database.groupCounters
        try await insert(database, 1)
        let after = database.groupCounters
        #expect(after.delayed - before.delayed == 1)
        #expect(after.groups - before.groups == 1)
        #expect(try count(database) == 1)
    }

    @Test("A provisional write goes at once: its commit is not synced")
    func unsyncedDoesNotWait() async throws {
        let database = try database(maximum: .seconds(3600), siblings: 1, inFlight: { 100 })
        try await insert(database, 1, durability: .unsynced)
        #expect(database.groupCounters.delayed == 0)
        #expect(try count(database) == 1)
    }

    @Test("Without synchronous=FULL there is no sync to share, and nothing waits")
    func normalSyncDoesNotWait() async throws {
        let database = try database(maximum: .seconds(3600), siblings: 1, synchronous: .normal, inFlight: { 100 })
        try await insert(database, 1)
        #expect(database.groupCounters.delayed == 0)
    }

    @Test("Concurrent writers all commit, in groups, each answered once its group is on disk")
    func concurrentWriters() async throws {
        // The requests in flight are the writers not yet answered, as the middleware counts them.
        let writers = 64
        let open = RequestsInFlight()
        for _ in 0..<writers { open.enter() }
        // A writer answered but not yet counted out keeps the rest waiting until the maximum: ten seconds here.
        let database = try database(maximum: .seconds(10), siblings: 5, inFlight: { open.value })
        let before = database.groupCounters
        try await withThrowingTaskGroup(of: Void.self) { group in
            for value in 0..<writers {
                group.addTask {
                    defer { open.leave() }
                    try await insert(database, value)
                }
            }
            try await group.waitForAll()
        }
        let after = database.groupCounters
        #expect(after.calls - before.calls == writers)
        #expect(after.groups - before.groups < writers)  // they did share commits
        #expect(try count(database) == writers)
    }
}

/// The middleware that counts the requests the commit delay treats as its siblings.
@Suite("Requests in flight")
struct RequestsInFlightTests {
    @Test("A request that may write counts while it is served; a GET, HEAD or OPTIONS never does")
    func counted() async throws {
        let requests = RequestsInFlight()
        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: RequestsInFlightMiddleware(requests: requests))
        router.get("/probe") { _, _ in String(requests.value) }
        router.post("/probe") { _, _ in String(requests.value) }
        router.delete("/probe") { _, _ in String(requests.value) }
        let app = Application(router: router)
        try await app.test(.router) { client in
            try await client.execute(uri: "/probe", method: .get) { response in
                #expect(String(buffer: response.body) == "0")
            }
            try await client.execute(uri: "/probe", method: .post) { response in
                #expect(String(buffer: response.body) == "1")
            }
            try await client.execute(uri: "/probe", method: .delete) { response in
                #expect(String(buffer: response.body) == "1")
            }
        }
        #expect(requests.value == 0)  // each left when its answer was ready
    }
}
