import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Synchronization
import Testing

@testable import gateway

/// Each test gets its own directory of temporary database files, removed when the test ends.
@Suite("SQLite store")
final class SQLiteStoreTests: Sendable {
    let directory: URL
    let conformance: StoreConformance

    init() {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gateway-sqlite-store-tests-\(UUID().uuidString)", isDirectory: true)
        self.directory = directory
        conformance = StoreConformance {
            try SQLiteVerificationStore(
                path: directory.appendingPathComponent("\(UUID().uuidString).sqlite").path, logger: Logger.quiet)
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String = "store.sqlite") -> String {
        directory.appendingPathComponent(name).path
    }

    @Test("Rate counters survive closing and reopening the file")
    func rateCountersSurviveRestart() async throws {
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let first = try SQLiteVerificationStore(path: path("limits.sqlite"), logger: Logger.quiet)
        #expect(try await first.hit("start:to:+447400123456", limit: 2, window: 3600, at: at) == .allowed)
        #expect(try await first.hit("start:to:+447400123456", limit: 2, window: 3600, at: at) == .allowed)
        first.close()
        let second = try SQLiteVerificationStore(path: path("limits.sqlite"), logger: Logger.quiet)
        #expect(
            try await second.hit("start:to:+447400123456", limit: 2, window: 3600, at: at.addingTimeInterval(10))
                == .refused(retryAfter: 3590))
    }

    // MARK: - Conformance

    @Test("Every check of the store conformance suite", arguments: StoreConformance.Check.allCases)
    func conforms(_ check: StoreConformance.Check) async throws { try await conformance.run(check) }

    // MARK: - Webhook queue conformance

    private var webhooks: WebhookQueueConformance {
        let directory = directory
        return WebhookQueueConformance {
            try SQLiteVerificationStore(
                path: directory.appendingPathComponent("\(UUID().uuidString).sqlite").path, logger: Logger.quiet)
        }
    }

    @Test("Every check of the webhook queue conformance suite", arguments: WebhookQueueConformance.Check.allCases)
    func webhookQueue(_ check: WebhookQueueConformance.Check) async throws { try await webhooks.run(check) }

    @Test(
        "Every check of the delivery deadline conformance suite", arguments: DeliveryDeadlineConformance.Check.allCases)
    func deliveryDeadlines(_ check: DeliveryDeadlineConformance.Check) async throws {
        let directory = directory
        try await DeliveryDeadlineConformance {
            try SQLiteVerificationStore(
                path: directory.appendingPathComponent("\(UUID().uuidString).sqlite").path, logger: Logger.quiet)
        }.run(check)
    }

    @Test("Every check of the delivery stats conformance suite", arguments: DeliveryStatsConformance.Check.allCases)
    func deliveryStats(_ check: DeliveryStatsConformance.Check) async throws {
        let directory = directory
        try await DeliveryStatsConformance {
            try SQLiteVerificationStore(
                path: directory.appendingPathComponent("\(UUID().uuidString).sqlite").path, logger: Logger.quiet)
        }.run(check)
    }

    // MARK: - Durability

    @Test("A record, its events and a completed key survive closing and reopening the file")
    func restart() async throws {
        let record = try StoreConformance.phoneRecord()
        let events = [
            VerificationEvent(
                verificationID: record.id, kind: .started, at: StoreConformance.epoch, detail: ["a": "1"]),
            VerificationEvent(verificationID: record.id, kind: .providerCall, at: StoreConformance.epoch),
        ]
        let key = IdempotencyKey(scope: "key_live_1", key: "restart")
        let response = StoredResponse(status: 201, body: Data("done".utf8))

        let first = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        try await first.insert(record)
        for event in events { try await first.append(event) }
        #expect(try await StoreConformance.claim(first, key, "fp") == .claimed)
        try await first.completeIdempotencyKey(key, token: StoreConformance.token, response: response)
        first.close()

        let second = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        #expect(try await second.record(id: record.id) == record)
        #expect(try await second.events(verificationID: record.id) == events)
        #expect(
            try await StoreConformance.claim(second, key, "fp", token: "token-2") == .replay(response))
        let next = StoreConformance.nextVersion(of: record, status: .approved)
        #expect(try await second.update(next))
        #expect(try await second.update(next) == false)
        second.close()

        let third = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        #expect(try await third.record(id: record.id) == next)
    }

    @Test("A provisional update and append are written, and the connection is back to synchronous=FULL")
    func provisionalWrites() async throws {
        let record = try StoreConformance.phoneRecord()
        let event = VerificationEvent(verificationID: record.id, kind: .providerCall, at: StoreConformance.epoch)
        let first = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        let mode = { @Sendable () async throws -> Int64? in
            try await first.database.perform { (connection) throws(SQLiteError) in
                try connection.query("PRAGMA synchronous") { (row) throws(SQLiteError) in row.int64(0) }.first ?? nil
            }
        }
        #expect(try await mode() == 2)  // FULL
        try await first.insert(record)
        let next = StoreConformance.nextVersion(of: record, status: .pending)
        #expect(try await first.update(next, durability: .provisional))
        #expect(try await mode() == 2)
        // A lost compare-and-set changes nothing and restores the mode as well.
        #expect(try await first.update(next, durability: .provisional) == false)
        #expect(try await mode() == 2)
        try await first.append(contentsOf: [event], durability: .provisional)
        #expect(try await mode() == 2)
        #expect(try await first.record(id: record.id) == next)
        first.close()

        let second = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        #expect(try await second.record(id: record.id) == next)
        #expect(try await second.events(verificationID: record.id) == [event])
        second.close()

        // A store opened with sqlite_sync: normal stays NORMAL.
        let normal = try SQLiteVerificationStore(path: path(), synchronous: .normal, logger: Logger.quiet)
        let after = StoreConformance.nextVersion(of: next, status: .approved)
        #expect(try await normal.update(after, durability: .provisional))
        let normalMode = try await normal.database.perform { (connection) throws(SQLiteError) in
            try connection.query("PRAGMA synchronous") { (row) throws(SQLiteError) in row.int64(0) }.first ?? nil
        }
        #expect(normalMode == 1)
        #expect(try await normal.record(id: record.id) == after)
    }

    @Test("Dropping the last reference closes the file, and the data stays")
    func deinitCloses() async throws {
        let record = StoreConformance.emailRecord()
        do {
            let store = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
            try await store.insert(record)
        }
        let reopened = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        #expect(try await reopened.record(id: record.id) == record)
    }

    @Test("A closed store fails with internal instead of crashing")
    func closedStore() async throws {
        let store = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        store.close()
        store.close()
        let error = await #expect(throws: GatewayError.self) { try await store.record(id: "VEphone0001") }
        #expect(error == GatewayError(.internal, "storage failure"))
    }

    // MARK: - Schema

    @Test("Opening a file twice applies each migration once")
    func migrationsAreIdempotent() async throws {
        let record = StoreConformance.identityRecord()
        let first = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        try await first.insert(record)
        first.close()
        let second = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        let alongside = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        #expect(try await second.record(id: record.id) == record)
        #expect(try await alongside.record(id: record.id) == record)

        let connection = try SQLiteConnection(path: path(), synchronous: .full)
        let rows = try connection.query("SELECT version FROM schema_migrations ORDER BY version") {
            (row) throws(SQLiteError) in row.int64(0)
        }
        #expect(rows == SQLiteMigration.all.map { Int64($0.version) })
        #expect(try SQLiteMigration.migrate(connection) == SQLiteMigration.all.count)
    }

    /// The versions before claims had leases (the fixtures' rows are such a gateway's): the first, and the
    /// last of PostgreSQL's baseline.
    @Test(
        "A file left at an earlier schema version opens with the later ones applied, its rows as they were",
        arguments: [1, StoreSchema.postgresBaseline.steps])
    func upgradesEarlierVersions(_ version: Int) async throws {
        let connection = try SQLiteConnection(path: path(), synchronous: .full)
        try connection.transaction { () throws(SQLiteError) in
            try connection.execute(StoreSchema.migrationsTable.create(.sqlite))
            for step in SQLiteMigration.all.prefix(version) {
                for statement in step.statements { try connection.execute(statement) }
                try connection.run(StoreSchema.recordVersion.sqlite, [.int(step.version), .text(step.name), .real(0)])
            }
        }
        for (statement, values) in try StoreUpgradeFixtures.oldRows() { try connection.run(statement.sqlite, values) }
        connection.close()

        let store = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        try await StoreUpgradeFixtures.expectUpgraded(store)
        let reader = try SQLiteConnection(path: path(), synchronous: .full)
        let versions = try reader.query("SELECT version FROM schema_migrations ORDER BY version") {
            (row) throws(SQLiteError) in row.int(0)
        }
        #expect(versions == SQLiteMigration.all.map(\.version))
    }

    @Test("The file is in WAL mode with foreign keys on")
    func pragmas() throws {
        _ = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        let connection = try SQLiteConnection(path: path(), synchronous: .full)
        let mode = try connection.query("PRAGMA journal_mode") { (row) throws(SQLiteError) in row.text(0) }
        #expect(mode == ["wal"])
        let foreignKeys = try connection.query("PRAGMA foreign_keys") { (row) throws(SQLiteError) in row.int64(0) }
        #expect(foreignKeys == [1])
    }

    @Test("The store syncs every commit unless told `normal`; the sandbox emulators' file syncs at checkpoints")
    func synchronousModes() async throws {
        func mode(of store: SQLiteVerificationStore) throws -> [Int64?] {
            try store.database.performSync { (connection) throws(SQLiteError) in
                try connection.query("PRAGMA synchronous") { (row) throws(SQLiteError) in row.int64(0) }
            }
        }
        // SQLite reports FULL as 2 and NORMAL as 1.
        #expect(try mode(of: SQLiteVerificationStore(path: path("full.sqlite"), logger: Logger.quiet)) == [2])
        let normal = try SQLiteVerificationStore(
            path: path("normal.sqlite"), synchronous: .normal, logger: Logger.quiet)
        #expect(try mode(of: normal) == [1])
        let record = StoreConformance.identityRecord()
        try await normal.insert(record)
        #expect(try await normal.record(id: record.id) == record)
    }

    @Test("`sqlite_sync` in the configuration: full by default, normal on request, nothing else, not with PostgreSQL")
    func synchronousSetting() throws {
        func parse(_ extra: [String: JSONValue]) throws -> GatewayConfiguration {
            try GatewayConfiguration.parse(
                .object(["sandbox": .bool(true)].merging(extra) { $1 }), plugins: [], environment: [:])
        }
        #expect(try parse([:]).sqliteSynchronous == .full)
        #expect(try parse(["sqlite_sync": .string("normal")]).sqliteSynchronous == .normal)
        #expect(try parse(["sqlite_sync": .string("full")]).sqliteSynchronous == .full)
        for bad: [String: JSONValue] in [
            ["sqlite_sync": .string("off")], ["sqlite_sync": .bool(true)],
            ["sqlite_sync": .string("normal"), "store": .string("postgres://gw@127.0.0.1:5433/verify")],
        ] {
            let error = #expect(throws: ConfigurationError.self) { try parse(bad) }
            #expect(error?.problems.joined().contains("sqlite_sync") == true)
        }
    }

    @Test("`sqlite_commit_delay_ms` and `sqlite_commit_siblings`: 2 ms and 5 by default, 0 turns the delay off")
    func commitDelaySetting() throws {
        func parse(_ extra: [String: JSONValue]) throws -> GatewayConfiguration {
            try GatewayConfiguration.parse(
                .object(["sandbox": .bool(true)].merging(extra) { $1 }), plugins: [], environment: [:])
        }
        let standard = try parse([:])
        #expect(standard.sqliteCommitDelay == .milliseconds(2))
        #expect(standard.sqliteCommitSiblings == 5)
        let set = try parse(["sqlite_commit_delay_ms": .number(0.5), "sqlite_commit_siblings": .number(12)])
        #expect(set.sqliteCommitDelay == .microseconds(500))
        #expect(set.sqliteCommitSiblings == 12)
        #expect(try parse(["sqlite_commit_delay_ms": .number(0)]).sqliteCommitDelay == .zero)
        for (bad, key): ([String: JSONValue], String) in [
            (["sqlite_commit_delay_ms": .number(101)], "sqlite_commit_delay_ms"),
            (["sqlite_commit_delay_ms": .number(-1)], "sqlite_commit_delay_ms"),
            (["sqlite_commit_delay_ms": .string("2ms")], "sqlite_commit_delay_ms"),
            (["sqlite_commit_siblings": .number(0)], "sqlite_commit_siblings"),
            (
                ["sqlite_commit_delay_ms": .number(1), "store": .string("postgres://gw@127.0.0.1:5433/verify")],
                "sqlite_commit_delay_ms"
            ),
        ] {
            let error = #expect(throws: ConfigurationError.self) { try parse(bad) }
            #expect(error?.problems.joined().contains(key) == true)
        }
    }

    @Test("The console's and /v1/admin/stats' queries read the window by created_at, never the whole store")
    func windowQueryPlans() throws {
        _ = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        let connection = try SQLiteConnection(path: path(), synchronous: .full)
        defer { connection.close() }
        let since = StoreValue.date(Date())
        let statements: [(String, StoreStatement, [StoreValue])] = [
            ("stats", ConsoleRows.stats, [since, .real(300)]), ("countries", ConsoleRows.countries, [since]),
            ("segments", ConsoleRows.segments, [since]), ("signals", ConsoleRows.signals, [since]),
            ("latencies", ConsoleRows.latencies, [since]),
        ]
        for (name, statement, values) in statements {
            let plan = try connection.query("EXPLAIN QUERY PLAN " + statement.sqlite, values) {
                (row) throws(SQLiteError) in row.text(3) ?? ""
            }
            // The window by its index; each event, where one is read, by its verification; no full scan.
            #expect(plan.contains { $0.contains("USING INDEX verifications_created_at") }, "\(name): \(plan)")
            #expect(
                !plan.contains {
                    $0.hasPrefix("SCAN verifications") || $0.hasPrefix("SCAN v") || $0.hasPrefix("SCAN e")
                },
                "\(name): \(plan)")
            if statement.sqlite.contains("verification_events") {
                #expect(
                    plan.contains { $0.contains("USING INDEX verification_events_verification_id") }, "\(name): \(plan)"
                )
            }
        }
    }

    @Test("A database from a newer gateway is refused")
    func newerSchema() throws {
        _ = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        let connection = try SQLiteConnection(path: path(), synchronous: .full)
        try connection.run(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)")
        connection.close()
        #expect(throws: GatewayError.self) { try SQLiteVerificationStore(path: self.path(), logger: Logger.quiet) }
    }

    @Test("Missing directories are created")
    func createsDirectories() async throws {
        let nested = directory.appendingPathComponent("a/b/c/store.sqlite").path
        let store = try SQLiteVerificationStore(path: nested, logger: Logger.quiet)
        try await store.insert(StoreConformance.emailRecord())
        #expect(FileManager.default.fileExists(atPath: nested))
    }

    // MARK: - Two processes

    @Test("Two stores on one file: concurrent updates from one version have one winner")
    func crossConnectionRace() async throws {
        let left = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        let right = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        let base = try StoreConformance.phoneRecord()
        try await left.insert(base)
        let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                let store = index.isMultiple(of: 2) ? left : right
                let candidate = StoreConformance.nextVersion(of: base, attempts: 100 + index)
                group.addTask { try await store.update(candidate) }
            }
            var wins = 0
            for try await won in group where won { wins += 1 }
            return wins
        }
        #expect(wins == 1)
        #expect(try await left.record(id: base.id) == right.record(id: base.id))
    }

    @Test("Two stores on one file: concurrent claims of one key have one winner")
    func crossConnectionClaims() async throws {
        let left = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        let right = try SQLiteVerificationStore(path: path(), logger: Logger.quiet)
        let key = IdempotencyKey(scope: "key_live_1", key: "race")
        let claims = try await withThrowingTaskGroup(of: IdempotencyClaim.self) { group in
            for index in 0..<20 {
                let store = index.isMultiple(of: 2) ? left : right
                group.addTask {
                    try await StoreConformance.claim(store, key, "fp", token: "token-\(index)")
                }
            }
            var claims: [IdempotencyClaim] = []
            for try await claim in group { claims.append(claim) }
            return claims
        }
        #expect(claims.filter { $0 == .claimed }.count == 1)
        #expect(claims.filter { $0 == .inProgress(owner: nil) }.count == 19)
    }

    // MARK: - Failures

    @Test("A file that is not a database gives a thrown error, not a crash")
    func corruptFile() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path()))
        let logs = CapturedLogs()
        let error = #expect(throws: GatewayError.self) {
            try SQLiteVerificationStore(path: self.path(), logger: logs.logger())
        }
        #expect(error == GatewayError(.internal, "storage failure"))
        #expect(logs.messages.contains { $0.contains("not a database") })
    }

    @Test("A path that cannot be created gives a thrown error, not a crash")
    func unwritablePath() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("a file, not a directory".utf8).write(to: URL(fileURLWithPath: path("blocker")))
        #expect(throws: GatewayError.self) {
            try SQLiteVerificationStore(path: self.path("blocker/store.sqlite"), logger: Logger.quiet)
        }
        #expect(throws: GatewayError.self) {
            try SQLiteVerificationStore(path: self.directory.path, logger: Logger.quiet)
        }
    }

    @Test("A row the store cannot decode is a storage failure, logged with SQLite's side of the story")
    func undecodableRow() async throws {
        let logs = CapturedLogs()
        let store = try SQLiteVerificationStore(path: path(), logger: logs.logger())
        var record = StoreConformance.emailRecord()
        try await store.insert(record)
        let connection = try SQLiteConnection(path: path(), synchronous: .full)
        try connection.run("UPDATE verifications SET destination_kind = 'pigeon' WHERE id = ?", [.text(record.id)])
        let error = await #expect(throws: GatewayError.self) { try await store.record(id: record.id) }
        #expect(error == GatewayError(.internal, "storage failure"))
        #expect(error?.message.contains("pigeon") == false)
        #expect(logs.messages.contains { $0.contains("unknown destination kind") })
        record.id = "VEother0001"
        try await store.insert(record)
        #expect(try await store.record(id: record.id) == record)
    }
}

/// Storage failures the tests provoke on purpose need not reach the test output.
