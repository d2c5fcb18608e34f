import Dispatch
import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Synchronization
import Testing

@testable import gateway

/// `SQLiteDatabase.read`: a read on a read-only connection on the caller's thread, beside the writer's queue
/// (the adaptive routes' sticky lookup takes it on every start).
@Suite("SQLite reads beside the queue")
struct SQLiteReaderTests {
    let directory = TemporaryDirectory("gateway-sqlite-reader-tests")

    private func store() throws -> SQLiteVerificationStore {
        try SQLiteVerificationStore(
            path: directory.path("store.sqlite"), logger: .quiet)
    }

    /// The stored status of `VEreader0001`, as `connection` sees it.
    private static func status(_ connection: SQLiteConnection) throws(SQLiteError) -> String {
        try connection.query("SELECT status FROM verifications WHERE id = 'VEreader0001'") {
            (row) throws(SQLiteError) in row.text(0) ?? "?"
        }.first ?? "none"
    }

    private func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)  // against a hang, not a speed figure
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test(
        "A read is answered while the writer's queue is busy, and sees what is committed, not a transaction still open",
        .timeLimit(.minutes(2)))
    func besideTheQueue() async throws {
        let store = try store()
        defer { store.close() }
        try await store.insert(try StoreConformance.phoneRecord(id: "VEreader0001"))
        let database = store.database
        let gate = DispatchSemaphore(value: 0)
        let holding = Atomic(false)
        // Holds the queue inside a write transaction that has changed the row and not committed it.
        let holder = Task {
            try await database.perform { (connection) throws(SQLiteError) in
                try connection.transaction { () throws(SQLiteError) in
                    try connection.run("UPDATE verifications SET status = 'approved' WHERE id = 'VEreader0001'")
                    holding.store(true, ordering: .sequentiallyConsistent)
                    gate.wait()
                }
            }
        }
        try await waitUntil { holding.load(ordering: .sequentiallyConsistent) }
        // Through the queue this read would wait for the gate, which opens only after it: the test would hang.
        #expect(try await database.read(Self.status) == "pending")
        gate.signal()
        try await holder.value
        #expect(try await database.read(Self.status) == "approved")
    }

    @Test("An in-memory database reads through its queue, and a closed one fails the read")
    func inMemoryAndClosed() async throws {
        let store = try SQLiteVerificationStore(
            path: ":memory:", logger: .quiet)
        try await store.insert(try StoreConformance.phoneRecord(id: "VEreader0001"))
        #expect(try await store.database.read(Self.status) == "pending")
        store.close()
        await #expect(throws: SQLiteError.self) { try await store.database.read(Self.status) }
    }

    @Test("Reads at once each get a connection; the idle ones kept are bounded")
    func manyAtOnce() async throws {
        let store = try store()
        defer { store.close() }
        try await store.insert(try StoreConformance.phoneRecord(id: "VEreader0001"))
        let database = store.database
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<64 { group.addTask { try await database.read(Self.status) } }
            for try await status in group { #expect(status == "pending") }
        }
        #expect(database.idleReaders <= SQLiteReaders.idleLimit)
        #expect(database.idleReaders >= 1)
    }
}
