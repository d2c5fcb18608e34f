import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Testing

@testable import gateway

/// WAL checkpoints off the writer's queue (``SQLiteCheckpointer``; docs/performance.md, "Checkpoints off the
/// writer"), with thresholds lowered so that a few hundred commits cross them.
@Suite("SQLite checkpoints")
struct SQLiteCheckpointTests {
    let directory = TemporaryDirectory("gateway-sqlite-checkpoint-tests")

    private static let small = SQLiteCheckpointer.Thresholds(afterPages: 16, tailPages: 8, inlineAfterPages: 400)

    private func open(_ name: String, thresholds: SQLiteCheckpointer.Thresholds = small) throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: directory.path(name), synchronous: .full, checkpoints: thresholds)
        try database.performSync { (connection) throws(SQLiteError) in
            try connection.execute("CREATE TABLE IF NOT EXISTS items (n INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        }
        return database
    }

    /// `count` commits of one row each (a row fills most of a page: two frames per commit), numbered from `from`, each its own call (so its own commit).
    private func insert(_ database: SQLiteDatabase, from: Int, count: Int) async throws {
        for n in from..<(from + count) {
            try await database.perform { (connection) throws(SQLiteError) in
                try connection.run(
                    "INSERT INTO items (n, body) VALUES (?, ?)", [.int(n), .text(String(repeating: "x", count: 3_000))])
            }
        }
    }

    private func walBytes(_ name: String) -> Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: directory.path(name) + "-wal")
        return (attributes?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// What another connection reads from the file: the row count and `PRAGMA integrity_check`.
    private func readBack(_ name: String) throws -> (rows: Int, integrity: String) {
        let connection = try SQLiteConnection(path: directory.path(name), synchronous: .full)
        defer { connection.close() }
        let rows = try connection.query("SELECT count(*) FROM items") { (row) throws(SQLiteError) in
            Int(row.int64(0) ?? -1)
        }
        let integrity = try connection.query("PRAGMA integrity_check") { (row) throws(SQLiteError) in row.text(0) ?? ""
        }
        return (rows.first ?? -1, integrity.first ?? "")
    }

    /// Another connection finds `rows` rows in the file, and `PRAGMA integrity_check` says ok.
    private func expectIntact(_ name: String, rows: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let read = try readBack(name)
        #expect(read.rows == rows, sourceLocation: sourceLocation)
        #expect(read.integrity == "ok", sourceLocation: sourceLocation)
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)  // against a hang, not a speed figure: CI shares two cores
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test("Commits hand their checkpoints to the background, and the WAL starts over instead of growing")
    func background() async throws {
        let database = try open("background.sqlite")
        try await insert(database, from: 0, count: 600)
        try await waitUntil { database.checkpointCounters.background > 0 }
        let counters = database.checkpointCounters
        #expect(counters.background > 0)
        #expect(counters.framesCopied > 0)
        // 600 commits write well over 400 frames: only a WAL that started over stays under the inline limit
        // (a page is 4,096 bytes, each frame has a 24-byte header, the file a 32-byte one).
        #expect(walBytes("background.sqlite") <= (400 + 64) * (4_096 + 24) + 32)
        try expectIntact("background.sqlite", rows: 600)
        database.close()
    }

    @Test("A reader that holds an old snapshot stops the checkpoints; the writer checkpoints itself once it is gone")
    func inlineFallback() async throws {
        let name = "reader.sqlite"
        let database = try open(name)
        try await insert(database, from: 0, count: 10)
        // Another connection reading from an old snapshot: no checkpoint may copy a frame written after it.
        let reader = try SQLiteConnection(path: directory.path(name), synchronous: .full)
        try reader.execute("BEGIN")
        let seen = try reader.query("SELECT count(*) FROM items") { (row) throws(SQLiteError) in Int(row.int64(0) ?? -1)
        }
        #expect(seen == [10])
        try await insert(database, from: 10, count: 300)
        // Past 400 frames the writer tried to checkpoint itself, as SQLite would by default.
        #expect(database.checkpointCounters.inline > 0)
        try reader.execute("COMMIT")
        reader.close()
        let held = walBytes(name)
        #expect(held > 400 * (4_096 + 24))
        // Now the next commit's checkpoint completes and the WAL starts over: the file, never truncated, grows by
        // that commit's frames at most, where 400 more commits without a restart would add some 800 frames.
        try await insert(database, from: 310, count: 400)
        #expect(walBytes(name) <= held + 8 * (4_096 + 24))
        try expectIntact(name, rows: 710)
        database.close()
    }

    @Test("Closing the database closes the checkpointer's connection first, so the WAL is checkpointed and removed")
    func closeRemovesWAL() async throws {
        let name = "close.sqlite"
        let database = try open(name)
        try await insert(database, from: 0, count: 200)
        try await waitUntil { database.checkpointCounters.background > 0 }
        #expect(FileManager.default.fileExists(atPath: directory.path(name) + "-wal"))
        database.close()
        #expect(!FileManager.default.fileExists(atPath: directory.path(name) + "-wal"))
        #expect(try readBack(name).rows == 200)
    }

    @Test("Writes and reads racing the background checkpoints lose nothing")
    func concurrentWriters() async throws {
        let name = "race.sqlite"
        let database = try open(name)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask { try await insert(database, from: writer * 1_000, count: 150) }
            }
            group.addTask {
                // Reads in between see a count that only grows.
                var last = 0
                for _ in 0..<200 {
                    let count = try await database.perform { (connection) throws(SQLiteError) in
                        try connection.query("SELECT count(*) FROM items") { (row) throws(SQLiteError) in
                            Int(row.int64(0) ?? -1)
                        }
                    }
                    #expect((count.first ?? -1) >= last)
                    last = count.first ?? last
                }
            }
            try await group.waitForAll()
        }
        #expect(database.checkpointCounters.background > 0)
        try expectIntact(name, rows: 1_200)
        database.close()
    }

    @Test("/metrics counts the store's checkpoints by who ran them")
    func metrics() async throws {
        let store = try SQLiteVerificationStore(
            path: directory.path("metrics.sqlite"), logger: .quiet)
        let metrics = MetricsRegistry()
        // A record and its indexes write several frames, one commit each: a few hundred pass the store's
        // 1,000-frame threshold.
        var n = 0
        while store.database.checkpointCounters.background == 0 && n < 5_000 {
            try await store.insert(try StoreConformance.phoneRecord(id: "VEckpt\(n)"))
            n += 1
        }
        try await waitUntil { store.database.checkpointCounters.background > 0 }
        let text = String(
            decoding: metrics.scrape(breakers: CircuitBreakers(clock: SystemClock()), store: store), as: UTF8.self)
        let value = try #require(Self.sample(text, kind: "background"))
        #expect(value >= 1)
        for kind in ["tail", "inline", "skipped"] {
            #expect(Self.sample(text, kind: kind) != nil)
        }
        // A second scrape adds only what happened since the first: the counter equals the checkpointer's count.
        let again = String(
            decoding: metrics.scrape(breakers: CircuitBreakers(clock: SystemClock()), store: store), as: UTF8.self)
        let total = try #require(Self.sample(again, kind: "background"))
        #expect(total >= value && total <= store.database.checkpointCounters.background)
        store.close()
    }

    /// The value of `gateway_store_checkpoints_total{kind="…"}` in an exposition text.
    private static func sample(_ text: String, kind: String) -> Int? {
        let prefix = "gateway_store_checkpoints_total{kind=\"\(kind)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
    }

    @Test(
        "The standard thresholds: SQLite's 1,000 frames when commits sync, a tenth when the checkpoint flushes the WAL")
    func standardThresholds() {
        #expect(SQLiteCheckpointer.Thresholds.standard(for: .full).afterPages == 1_000)
        #expect(SQLiteCheckpointer.Thresholds.standard(for: .normal).afterPages == 100)
        let checkpointer = SQLiteCheckpointer(
            path: directory.path("unused.sqlite"), synchronous: .full,
            thresholds: .init(afterPages: 50, tailPages: 4, inlineAfterPages: 20))
        // The inline limit is never below the point where the tail checkpoints begin.
        #expect(checkpointer.restartAfterPages == 100)
        #expect(checkpointer.inlineAfterPages == 100)
    }
}
