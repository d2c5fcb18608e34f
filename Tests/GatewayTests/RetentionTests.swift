import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Synchronization
import Testing

@testable import gateway

/// Retention's store operations and service (docs/operations.md, "Retention"), run on SQLite here and on
/// PostgreSQL by ``PostgresStoreTests``.
struct RetentionChecks: Sendable {
    enum Check: String, CaseIterable, Sendable {
        case deletesOldVerificationsInBatches
        case deletesEventsBeforeShorterHorizon
        case anonymizesNumbers
        case serviceRound
        case twoInstancesAtOnce
    }

    let make: @Sendable () async throws -> any SQLStore
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400
    static let key = DestinationAnonymizer(secret: Array("retention-test-key-0123456789abcdef".utf8))!

    func run(_ check: Check) async throws {
        switch check {
        case .deletesOldVerificationsInBatches: try await deletesOldVerificationsInBatches()
        case .deletesEventsBeforeShorterHorizon: try await deletesEventsBeforeShorterHorizon()
        case .anonymizesNumbers: try await anonymizesNumbers()
        case .serviceRound: try await serviceRound()
        case .twoInstancesAtOnce: try await twoInstancesAtOnce()
        }
    }

    /// `count` verifications created `age` days before ``now`` (a second apart), each with two events and a
    /// delivery deadline; their ids.
    @discardableResult
    static func seed(
        _ store: any SQLStore, prefix: String, count: Int, age: Double, number: Int = 0
    ) async throws -> [String] {
        var ids: [String] = []
        for index in 0..<count {
            var record = try StoreConformance.phoneRecord(id: "VE\(prefix)\(String(format: "%06d", index))")
            record.destination = .phone(try PhoneNumber(parsing: String(format: "+4474009%05d", number + index)))
            record.createdAt = now.addingTimeInterval(-age * day + Double(index))
            record.updatedAt = record.createdAt
            record.expiresAt = record.createdAt.addingTimeInterval(600)
            record.status = .approved
            let events = [
                VerificationEvent(verificationID: record.id, kind: .started, at: record.createdAt),
                VerificationEvent(verificationID: record.id, kind: .providerCall, at: record.createdAt),
            ]
            try await store.insert(record, events: events)
            try await store.scheduleDeliveryDeadline(
                DeliveryDeadline(
                    verificationID: record.id, send: 1, providerID: "twilio_messaging", messageID: "SM\(index)",
                    dueAt: record.createdAt.addingTimeInterval(30)))
            ids.append(record.id)
        }
        return ids
    }

    func deletesOldVerificationsInBatches() async throws {
        let store = try await make()
        let old = try await Self.seed(store, prefix: "old", count: 25, age: 40)
        let recent = try await Self.seed(store, prefix: "new", count: 5, age: 10, number: 100)
        let horizon = Self.now.addingTimeInterval(-30 * Self.day)
        var batches: [RetentionBatch] = []
        while true {
            let batch = try await store.deleteVerifications(createdBefore: horizon, now: Self.now, limit: 10)
            batches.append(batch)
            if batch.verifications < 10 { break }
        }
        // 25 in batches of at most 10, the oldest first: 10, 10, 5.
        #expect(batches.map(\.verifications) == [10, 10, 5])
        #expect(batches.map(\.events).reduce(0, +) == 50)
        #expect(batches.map(\.other).reduce(0, +) == 25)
        for id in old {
            #expect(try await store.record(id: id) == nil)
            #expect(try await store.events(verificationID: id).isEmpty)
        }
        for id in recent {
            #expect(try await store.record(id: id) != nil)
            #expect(try await store.events(verificationID: id).count == 2)
        }
        // A verification not yet expired stays, however old its creation (a clock moved back, say).
        var live = try StoreConformance.phoneRecord(id: "VElive000001")
        live.createdAt = Self.now.addingTimeInterval(-40 * Self.day)
        live.expiresAt = Self.now.addingTimeInterval(60)
        try await store.insert(live)
        #expect(
            try await store.deleteVerifications(createdBefore: horizon, now: Self.now, limit: 10).verifications == 0)
        #expect(try await store.record(id: live.id) != nil)
    }

    func deletesEventsBeforeShorterHorizon() async throws {
        let store = try await make()
        let old = try await Self.seed(store, prefix: "ev", count: 12, age: 10)
        let recent = try await Self.seed(store, prefix: "rc", count: 3, age: 1, number: 100)
        let horizon = Self.now.addingTimeInterval(-7 * Self.day)
        let first = try await store.deleteEvents(createdBefore: horizon, limit: 5)
        let second = try await store.deleteEvents(createdBefore: horizon, limit: 5)
        let third = try await store.deleteEvents(createdBefore: horizon, limit: 5)
        let fourth = try await store.deleteEvents(createdBefore: horizon, limit: 5)
        #expect([first, second, third, fourth].map(\.verifications) == [5, 5, 2, 0])
        #expect([first, second, third, fourth].map(\.events) == [10, 10, 4, 0])
        for id in old {
            #expect(try await store.record(id: id) != nil)  // the verification stays
            #expect(try await store.events(verificationID: id).isEmpty)
        }
        for id in recent { #expect(try await store.events(verificationID: id).count == 2) }
        // The mark moved past what was done: a later horizon takes only the verifications after it.
        let later = try await store.deleteEvents(createdBefore: Self.now, limit: 50)
        #expect(later.verifications == 3)
    }

    func anonymizesNumbers() async throws {
        let store = try await make()
        let ids = try await Self.seed(store, prefix: "an", count: 4, age: 10)
        let recent = try await Self.seed(store, prefix: "ak", count: 1, age: 1, number: 100)
        let key = Self.key
        let before = try #require(try await store.record(id: ids[0]))
        let batch = try await store.anonymize(createdBefore: Self.now.addingTimeInterval(-7 * Self.day), limit: 10) {
            key.anonymize(kind: $0, value: $1)
        }
        #expect(batch.verifications == 4)
        // An update made from the record as read before (a late receipt racing the batch) no longer matches its
        // version, so it cannot write the number back.
        var stale = before
        stale.version += 1
        stale.updatedAt = Self.now
        #expect(try await store.update(stale) == false)
        let number = "+447400900000"
        let record = try #require(try await store.record(id: ids[0]))
        #expect(record.destination == .anonymized(masked: "+4474******00", digest: key.digest(of: number)))
        #expect(record.destination.value == "+4474******00")
        #expect(record.status == .approved)
        #expect(try await store.events(verificationID: ids[0]).count == 2)
        // Found by the number's hash, not by the number alone.
        let found = try await store.verifications(destination: number, digest: key.digest(of: number), limit: 10)
        #expect(found.map(\.id) == [ids[0]])
        #expect(try await store.verifications(destination: number, digest: nil, limit: 10).isEmpty)
        // The recent one keeps its number; nothing stored holds the old numbers.
        #expect(try await store.record(id: recent[0])?.destination.phoneNumber?.e164 == "+447400900100")
        let again = try await store.anonymize(createdBefore: Self.now.addingTimeInterval(-7 * Self.day), limit: 10) {
            key.anonymize(kind: $0, value: $1)
        }
        #expect(again.verifications == 0)
        // A record read back anonymized writes back as it was (a late update keeps the hash).
        var updated = record
        updated.version += 1
        #expect(try await store.update(updated))
        #expect(try await store.record(id: ids[0])?.destination == record.destination)
    }

    func serviceRound() async throws {
        let store = try await make()
        let old = try await Self.seed(store, prefix: "sv", count: 30, age: 40)
        let middle = try await Self.seed(store, prefix: "sm", count: 6, age: 10, number: 100)
        let recent = try await Self.seed(store, prefix: "sr", count: 2, age: 1, number: 200)
        var settings = RetentionSettings(verifications: 30 * Self.day, events: 7 * Self.day)
        settings.anonymizeAfter = 5 * Self.day
        settings.anonymizer = Self.key
        var service = RetentionService(
            store: store, settings: settings, clock: ManualClock(Self.now), logger: Logger.quiet)
        service.batch = 8
        service.pause = .zero
        let round = await service.round()
        #expect(round.deletedVerifications == 30)
        #expect(round.deletedEvents == 60 + 12)
        #expect(round.anonymized == 6)
        #expect(!round.more)
        // Each batch took at most 8 rows: 30 deleted in 4, the events of 6 in 1, nothing to prune, 6 anonymized in 1.
        #expect(round.batches == 4 + 1 + 1 + 1)
        #expect(round.longestBatch > .zero)
        for id in old { #expect(try await store.record(id: id) == nil) }
        for id in middle {
            let record = try #require(try await store.record(id: id))
            #expect(record.destination.phoneNumber == nil)
            #expect(try await store.events(verificationID: id).isEmpty)
        }
        for id in recent { #expect(try await store.record(id: id)?.destination.phoneNumber != nil) }
        // A round with its batches used up says there is more.
        _ = try await Self.seed(store, prefix: "sx", count: 20, age: 40, number: 300)
        service.batchesPerRound = 2
        let capped = await service.round()
        #expect(capped.more)
        #expect(capped.deletedVerifications == 16)
    }

    func twoInstancesAtOnce() async throws {
        let store = try await make()
        let other = try await make()
        _ = try await Self.seed(store, prefix: "tw", count: 60, age: 40)
        let recent = try await Self.seed(store, prefix: "tr", count: 3, age: 1, number: 100)
        let horizon = Self.now.addingTimeInterval(-30 * Self.day)
        let deleted = try await withThrowingTaskGroup(of: Int.self) { group in
            for instance in [store, other] {
                group.addTask {
                    var total = 0
                    while true {
                        let batch = try await instance.deleteVerifications(
                            createdBefore: horizon, now: Self.now, limit: 7)
                        total += batch.verifications
                        if batch.verifications == 0 { return total }
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        // Each old verification deleted by one of them, once; the recent ones untouched.
        #expect(deleted == 60)
        for id in recent { #expect(try await store.record(id: id) != nil) }
    }
}

@Suite("Retention on SQLite")
struct RetentionSQLiteTests {
    let directory = TemporaryDirectory("gateway-retention-tests")

    @Test("Every retention check", arguments: RetentionChecks.Check.allCases)
    func check(_ check: RetentionChecks.Check) async throws {
        let path = directory.path("store.sqlite")
        let opened = Mutex<SQLiteVerificationStore?>(nil)
        try await RetentionChecks {
            // Two stores on one file stand for two instances (twoInstancesAtOnce); one file per check.
            let store = try SQLiteVerificationStore(path: path, logger: Logger.quiet)
            opened.withLock { $0 = store }
            return store
        }.run(check)
    }
}

@Suite("Retention settings")
struct RetentionSettingsTests {
    private func read(_ yaml: String, environment: [String: String] = [:]) throws -> ConfigurationReading {
        let (root, _) = try ConfigYAML.parse(yaml)
        return GatewayConfiguration.read(root, plugins: InstalledPlugins.all, environment: environment)
    }

    @Test("Defaults: 30 days for verifications and events, no anonymizing; `retention: off` keeps everything")
    func defaults() throws {
        let plain = try read("sandbox: true\n")
        #expect(plain.problems.isEmpty)
        #expect(plain.configuration.retention.verifications == TimeInterval(30 * 86_400))
        #expect(plain.configuration.retention.events == TimeInterval(30 * 86_400))
        #expect(plain.configuration.retention.anonymizeAfter == nil)
        let off = try read("sandbox: true\nretention: off\n")
        #expect(off.problems.isEmpty)
        #expect(!off.configuration.retention.isActive)
    }

    @Test("Horizons, events shorter than verifications, anonymizing with a key from the environment")
    func horizons() throws {
        let reading = try read(
            """
            sandbox: true
            retention: {verifications: 90d, events: 14d, anonymize_after: 7d, anonymize_key_env: ANON_KEY}
            """, environment: ["ANON_KEY": String(repeating: "k", count: 32)])
        #expect(reading.problems.isEmpty)
        let settings = reading.configuration.retention
        #expect(settings.verifications == TimeInterval(90 * 86_400))
        #expect(settings.events == TimeInterval(14 * 86_400))
        #expect(settings.anonymizeAfter == TimeInterval(7 * 86_400))
        #expect(settings.anonymizer != nil)
        let eventsOff = try read("sandbox: true\nretention: {verifications: off, events: 30d}\n")
        #expect(eventsOff.problems.isEmpty)
        #expect(eventsOff.configuration.retention.verifications == nil)
    }

    @Test(
        "Refused: a horizon under two days, events outliving verifications, anonymizing without a key, a key in clear")
    func refused() throws {
        let messages = [
            ("retention: {verifications: 1d}", "at least 2d"),
            ("retention: {verifications: soon}", "at least 2d"),
            ("retention: {verifications: 10d, events: 30d}", "cannot be longer"),
            ("retention: {anonymize_after: 7d}", "needs `anonymize_key_env`"),
            ("retention: {anonymize_after: 7d, anonymize_key_env: MISSING}", "MISSING is not set"),
            ("retention: {anonymize_key: abc}", "anonymize_key_env: VARIABLE"),
            ("retention: [30d]", "must be a mapping"),
        ]
        for (yaml, expected) in messages {
            let reading = try read("sandbox: true\n" + yaml + "\n")
            #expect(
                reading.problems.contains { $0.message.contains(expected) },
                "\(yaml): \(reading.problems.map(\.message))")
        }
    }
}
