import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Synchronization
import Testing

@testable import gateway

/// The store conformance suite (and the webhook queue's) against PostgreSQL: a throwaway cluster started
/// by ``PostgresTestServer`` (or `GATEWAY_TEST_POSTGRES_URL`). Each store gets its own schema.
@Suite("PostgreSQL store", .enabled(if: PostgresTestServer.isAvailable))
final class PostgresStoreTests: Sendable {
    let conformance: StoreConformance
    let webhooks: WebhookQueueConformance
    private let opened = OpenedStores()

    init() {
        let opened = opened
        let make: @Sendable () async throws -> PostgresVerificationStore = {
            let store = try await Self.store()
            opened.add(store)
            return store
        }
        conformance = StoreConformance { try await make() }
        webhooks = WebhookQueueConformance { try await make() }
    }

    deinit {
        opened.closeAll()
    }

    /// The test cluster's settings. The default deadline is a bound against a hang, not a speed figure: dozens
    /// of stores connect and migrate at once here, beside the rest of the suite, on CI's two shared cores.
    static func settings(timeout: Duration = .seconds(60)) async throws -> PostgresStoreSettings {
        var settings = try PostgresStoreSettings.parse(
            try await PostgresTestServer.url(), passwordVariable: nil, environment: ProcessInfo.processInfo.environment)
        settings.poolSize = 3
        settings.timeout = timeout
        settings.tls = .disable
        return settings
    }

    /// A store in a new schema.
    static func store(schema: String = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))
        async throws -> PostgresVerificationStore
    {
        try await PostgresVerificationStore(settings: try await settings(), searchPath: schema, logger: Logger.quiet)
    }

    // MARK: - Conformance

    @Test("Every check of the store conformance suite", arguments: StoreConformance.Check.allCases)
    func conforms(_ check: StoreConformance.Check) async throws { try await conformance.run(check) }

    @Test("Every check of the webhook queue conformance suite", arguments: WebhookQueueConformance.Check.allCases)
    func webhookQueue(_ check: WebhookQueueConformance.Check) async throws { try await webhooks.run(check) }

    @Test(
        "Every check of the delivery deadline conformance suite", arguments: DeliveryDeadlineConformance.Check.allCases)
    func deliveryDeadlines(_ check: DeliveryDeadlineConformance.Check) async throws {
        let opened = opened
        try await DeliveryDeadlineConformance {
            let store = try await Self.store()
            opened.add(store)
            return store
        }.run(check)
    }

    @Test("Every check of the delivery stats conformance suite", arguments: DeliveryStatsConformance.Check.allCases)
    func deliveryStats(_ check: DeliveryStatsConformance.Check) async throws {
        let opened = opened
        try await DeliveryStatsConformance {
            let store = try await Self.store()
            opened.add(store)
            return store
        }.run(check)
    }

    @Test("The store counts each operation's calls and statements, and each transaction or lone statement as a commit")
    func callCounts() async throws {
        let store = try await Self.store()
        opened.add(store)
        let record = try StoreConformance.phoneRecord(id: "VEcounts1000")
        let event = VerificationEvent(verificationID: record.id, kind: .providerCall, at: StoreConformance.epoch)
        let before = store.callCounts.commits
        try await store.insert(record, events: [event])  // one transaction: the record, the lock, the event
        #expect(store.callCounts.commits - before == 1)
        #expect(try await store.record(id: record.id) == record)  // one statement, committing by itself
        #expect(store.callCounts.commits - before == 2)
        let counts = store.callCounts.snapshot
        #expect(counts["insert"]?.calls == 1)
        #expect((counts["insert"]?.statements ?? 0) >= 3)
        #expect(counts["record"] == StoreCallCounts.Tally(calls: 1, statements: 1))
    }

    @Test("Every retention check", arguments: RetentionChecks.Check.allCases)
    func retention(_ check: RetentionChecks.Check) async throws {
        let opened = opened
        // One schema per check; a second store on it stands for a second instance.
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await RetentionChecks {
            let store = try await Self.store(schema: schema)
            opened.add(store)
            return store
        }.run(check)
    }

    // MARK: - Several instances on one database

    @Test("Two stores (two instances) on one schema: one migration, one winner per version, one claim per key")
    func twoInstances() async throws {
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        async let a = Self.store(schema: schema)
        async let b = Self.store(schema: schema)
        let (first, second) = try await (a, b)
        defer {
            first.close()
            second.close()
        }
        #expect(try await first.schemaVersion() == PostgresMigration.all.count)
        let record = try StoreConformance.phoneRecord()
        try await first.insert(record)
        let next = StoreConformance.nextVersion(of: record, status: .approved)
        let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
            for store in [first, second, first, second] { group.addTask { try await store.update(next) } }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(wins == 1)
        #expect(try await second.record(id: record.id) == next)
        let key = IdempotencyKey(scope: "key", key: "k")
        async let claimA = StoreConformance.claim(first, key, "f", token: "a")
        async let claimB = StoreConformance.claim(second, key, "f", token: "b")
        let claims = try await [claimA, claimB]
        #expect(claims.filter { $0 == .claimed }.count == 1)
        #expect(claims.filter { $0 == .inProgress(owner: nil) }.count == 1)
        // Once its lease has run out, two instances retrying at once: one takes it over.
        let later = StoreConformance.epoch + 60
        async let takeA = StoreConformance.claim(first, key, "f", token: "c", at: later)
        async let takeB = StoreConformance.claim(second, key, "f", token: "d", at: later)
        let takes = try await [takeA, takeB]
        #expect(takes.filter { $0 == .takenOver(IdempotencyProgress(stage: .claimed)) }.count == 1)
        #expect(takes.filter { $0 == .inProgress(owner: nil) }.count == 1)
    }

    @Test("A schema left at the first version opens with the later ones applied, its rows as they were")
    func upgradesTheFirstVersion() async throws {
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let first = try await Self.store(schema: schema)
        opened.add(first)
        // The schema as a gateway of the first version left it (the connection's search path is `schema`).
        try await first.transaction("first version") { connection in
            let baseline = PostgresMigration.all[0]
            let statements: [(String, [StoreValue])] =
                [
                    ("DROP SCHEMA \(schema) CASCADE", []), ("CREATE SCHEMA \(schema)", []),
                    (StoreSchema.migrationsTable.create(.postgres), []),
                ]
                + baseline.statements.map { ($0, []) }
                + [(StoreSchema.recordVersion.postgres, [.int(1), .text(baseline.name), .real(0)])]
                + (try StoreUpgradeFixtures.oldRows().map { ($0.0.postgres, $0.1) })
            for (sql, values) in statements { _ = try await connection.execute(sql, values, logger: Logger.quiet) }
        }
        first.close()

        let second = try await Self.store(schema: schema)
        opened.add(second)
        try await StoreUpgradeFixtures.expectUpgraded(second)
        #expect(try await second.schemaVersion() == PostgresMigration.all.count)
    }

    @Test("Event sequence numbers of concurrent writers from two instances are unique and increasing")
    func eventSequence() async throws {
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let first = try await Self.store(schema: schema)
        let second = try await Self.store(schema: schema)
        defer {
            first.close()
            second.close()
        }
        let start = try await first.webhookCursor()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<40 {
                let store = n.isMultiple(of: 2) ? first : second
                group.addTask {
                    try await store.append(
                        contentsOf: [
                            VerificationEvent(verificationID: "VE\(n)", kind: .started, at: StoreConformance.epoch),
                            VerificationEvent(verificationID: "VE\(n)", kind: .checked, at: StoreConformance.epoch),
                        ])
                }
            }
            try await group.waitForAll()
        }
        let events = try await second.events(after: start, limit: 1000)
        #expect(events.count == 80)
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
        // Each writer's two events are adjacent: the event-log lock serializes whole transactions.
        for pair in stride(from: 0, to: events.count, by: 2) {
            #expect(events[pair].event.verificationID == events[pair + 1].event.verificationID)
        }
    }

    // MARK: - Faults

    @Test("A server that is not there answers store_unavailable within the deadline, never a hang")
    func unreachable() async throws {
        var settings = try await Self.settings(timeout: .seconds(1))
        settings.port = 1  // nothing listens on port 1
        settings.connectTimeout = .milliseconds(500)
        let clock = ContinuousClock()
        let began = clock.now
        let error = await #expect(throws: GatewayError.self) {
            _ = try await PostgresVerificationStore(settings: settings, logger: Logger.quiet)
        }
        #expect(error?.code == .storeUnavailable)
        #expect(error?.httpStatus == 503)
        // A bound against a hang, not a speed figure: generous, since CI builds and tests share two cores.
        #expect(clock.now - began < .seconds(20))
    }

    @Test("Once an operation failed as unavailable, a server that refuses connections answers at once")
    func refusedFailsFast() async throws {
        let live = try await Self.settings()  // the first use starts the test cluster: not timed
        let clock = ContinuousClock()
        let began = clock.now
        // A refusal on loopback is immediate, but a probe whose event loop does not run within its 250 ms reads
        // as "no answer" (not refused): on a starved machine a refusal is asked for a few times.
        // port 1: nothing listens there
        #expect(await Self.eventually { await PostgresReachability.refuses(host: "127.0.0.1", port: 1) })
        #expect(await PostgresReachability.refuses(host: live.host, port: live.port) == false)
        let refused = PostgresReachability(host: "127.0.0.1", port: 1)
        #expect(await refused.refusesConnections() == false)  // no failure seen yet: no probe
        refused.noteUnavailable()
        #expect(await Self.eventually { await refused.refusesConnections() })
        refused.noteSuccess()
        #expect(await refused.refusesConnections() == false)
        let reachable = PostgresReachability(host: live.host, port: live.port)
        reachable.noteUnavailable()
        #expect(await reachable.refusesConnections() == false)
        // Against a hang, not a speed figure (the probes connect to loopback): generous for a loaded machine,
        // where this took 14.5 s beside four builds and a CPU hog.
        #expect(clock.now - began < .seconds(60))
    }

    /// Whether `condition` holds within 20 tries a quarter of a second apart.
    static func eventually(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<20 {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(250))
        }
        return false
    }

    @Test("When the server stops, the first operation answers store_unavailable at once, not at the deadline")
    func stoppedServerFailsFast() async throws {
        let live = try await Self.settings()
        let forwarder = try LoopbackForwarder(to: live.port)
        defer { forwarder.stop() }
        var settings = try await Self.settings(timeout: .seconds(180))
        settings.port = forwarder.port
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let store = try await PostgresVerificationStore(settings: settings, searchPath: schema, logger: Logger.quiet)
        opened.add(store)
        #expect(try await store.record(id: "VEphone0001") == nil)

        forwarder.stop()  // the server's port now refuses connections, and the pool's connection is gone
        let clock = ContinuousClock()
        let began = clock.now
        let error = await #expect(throws: GatewayError.self) { try await store.record(id: "VEphone0001") }
        #expect(error?.code == .storeUnavailable)
        // Well under the 180-second store deadline the pool would otherwise hold it for; generous for a
        // loaded machine (the probes connect to loopback, every 200 ms until one is refused).
        #expect(clock.now - began < .seconds(60))
    }

    @Test("A closed pool answers store_unavailable")
    func closedPool() async throws {
        let store = try await Self.store()
        store.close()
        let error = await #expect(throws: GatewayError.self) { try await store.record(id: "VEphone0001") }
        #expect(error?.code == .storeUnavailable)
    }

    // MARK: - Commands

    @Test("`gateway keys` keeps keys in the PostgreSQL store with --store or --config")
    func keysCommand() async throws {
        let url = try await PostgresTestServer.url() + "?sslmode=disable"
        let name = "ci-" + UUID().uuidString.prefix(8).lowercased()
        // Store deadlines against a hang, not speed figures: the suite's other stores connect and migrate
        // meanwhile, on machines as busy as CI's shared cores (the default 5 s once ended in exit 69 there).
        // `--store` wins over the file's store (which nothing listens to) and takes the file's store_timeout.
        let timeoutOnly = try Self.configFile("store: \"postgres://gateway@127.0.0.1:1/nowhere\"\nstore_timeout: 60\n")
        let file = try Self.configFile("store: \"\(url)\"\nstore_timeout: 60\n")
        defer {
            try? FileManager.default.removeItem(at: timeoutOnly)
            try? FileManager.default.removeItem(at: file)
        }
        var create =
            try Keys.Create.parseAsRoot(
                ["--name", name, "--scopes", "verify,read", "--store", url, "--config", timeoutOnly.path])
            as? Keys.Create
        var said = await CommandOutput.collecting { try await create?.run() }
        #expect(said.error == nil)
        #expect(said.lines.first?.hasPrefix("created key_") == true)
        #expect(said.lines.last?.hasPrefix("secret (shown once; only its SHA-256 is kept): sk_live_") == true)
        create = try Keys.Create.parseAsRoot(["--name", name + "-file", "--config", file.path]) as? Keys.Create
        said = await CommandOutput.collecting { try await create?.run() }
        #expect(said.error == nil && said.lines.count == 2)
        #expect(create != nil)

        var settings = try await Self.settings()
        settings.tls = .disable
        let store = try await PostgresVerificationStore(settings: settings, logger: Logger.quiet)
        opened.add(store)
        let keys = try await store.apiKeys().filter { $0.key.name.hasPrefix(name) }
        #expect(keys.map(\.key.name).sorted() == [name, name + "-file"])
        #expect(keys.first { $0.key.name == name }?.key.scopes == [.verify, .read])
        let id = try #require(keys.first?.key.id)
        let revoke = try Keys.Revoke.parseAsRoot([id, "--store", url, "--config", timeoutOnly.path]) as? Keys.Revoke
        said = await CommandOutput.collecting { try await revoke?.run() }
        #expect(said.error == nil && said.lines == ["revoked \(id)"])
        #expect(try await store.apiKeys().first { $0.key.id == id }?.revokedAt != nil)
        #expect(throws: (any Error).self) { try Keys.Create.parseAsRoot(["--name", "x", "--store", "mysql://a@b/c"]) }
    }

    /// A sandbox configuration file with `lines` added, in the temporary directory.
    static func configFile(_ lines: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).yaml")
        try ("sandbox: true\n" + lines).write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    // MARK: - Configuration

    @Test("store URLs: the password never comes from the file; PGPASSWORD or store_password_env give it")
    func configuration() throws {
        let plain = try PostgresStoreSettings.parse(
            "postgres://gw@db.internal:6543/verify?sslmode=require", passwordVariable: nil,
            environment: ["PGPASSWORD": "from-env"])
        #expect(plain.host == "db.internal")
        #expect(plain.port == 6543)
        #expect(plain.username == "gw")
        #expect(plain.database == "verify")
        #expect(plain.password == "from-env")
        #expect(plain.tls == .require)
        #expect(plain.displayURL == "postgres://gw@db.internal:6543/verify")
        let named = try PostgresStoreSettings.parse(
            "postgresql://gw@127.0.0.1/verify", passwordVariable: "DB_PW", environment: ["DB_PW": "s3cret"])
        #expect(named.password == "s3cret")
        #expect(named.port == 5432)
        for (url, variable, problem) in [
            ("postgres://gw:secret@127.0.0.1/verify", nil, "holds a password"),
            ("postgres://127.0.0.1/verify", nil, "needs a user"),
            ("postgres://gw@127.0.0.1/", nil, "needs a database"),
            ("postgres://gw@127.0.0.1/verify?pool=3", nil, "unknown URL parameter"),
            ("postgres://gw@127.0.0.1/verify", "MISSING", "is not set"),
            ("mysql://gw@127.0.0.1/verify", nil, "is not a postgres"),
        ] as [(String, String?, String)] {
            let error = #expect(throws: ConfigurationError.self) {
                try PostgresStoreSettings.parse(url, passwordVariable: variable, environment: [:])
            }
            #expect(error?.problems.joined().contains(problem) == true, "\(url)")
        }
    }

    @Test("The configuration file selects PostgreSQL with `store`; SQLite stays the default")
    func configurationFile() throws {
        let base: [String: JSONValue] = ["sandbox": .bool(true)]
        #expect(try GatewayConfiguration.parse(.object(base), plugins: [], environment: [:]).store == nil)
        var file = base
        file["store"] = .string("postgres://gw@127.0.0.1:5433/verify")
        file["store_password_env"] = .string("GW_DB")
        file["store_pool_size"] = .number(4)
        file["store_timeout"] = .number(2.5)
        let parsed = try GatewayConfiguration.parse(.object(file), plugins: [], environment: ["GW_DB": "pw"]).store
        #expect(parsed?.password == "pw")
        #expect(parsed?.poolSize == 4)
        #expect(parsed?.timeout == .milliseconds(2500))
        var bad = base
        bad["store"] = .string("sqlite:///tmp/x")
        bad["store_pool_size"] = .number(0)
        #expect(throws: ConfigurationError.self) {
            try GatewayConfiguration.parse(.object(bad), plugins: [], environment: [:])
        }
    }
}

/// The stores a suite instance opened, closed when it ends so their pools do not outlive the test.
final class OpenedStores: Sendable {
    private let stores = Mutex<[PostgresVerificationStore]>([])

    func add(_ store: PostgresVerificationStore) { stores.withLock { $0.append(store) } }

    func closeAll() {
        for store in stores.withLock({ $0 }) { store.close() }
    }
}

@Suite("PostgreSQL tests run where CI requires them")
struct PostgresRequiredTests {
    @Test("GATEWAY_TEST_POSTGRES_REQUIRED=1 means the PostgreSQL suite cannot skip")
    func required() {
        if PostgresTestServer.isRequired { #expect(PostgresTestServer.isAvailable) }
    }
}
