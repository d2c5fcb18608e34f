import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Testing

@testable import gateway

/// Console sessions and the overview's counts in both stores of the one schema: what one instance writes,
/// another on the same database reads.
@Suite("Console store")
struct ConsoleStoreTests {
    static let epoch = Date(timeIntervalSince1970: 1_900_000_000)

    /// Two stores on one database: a SQLite file opened twice, or two PostgreSQL stores on one schema.
    static func sqlitePair() throws -> (any SQLStore, any SQLStore) {
        let path = ScratchDirectories.make("console-store").appendingPathComponent("store.sqlite").path
        return (
            try SQLiteVerificationStore(path: path, logger: Logger.quiet),
            try SQLiteVerificationStore(path: path, logger: Logger.quiet)
        )
    }

    static func postgresPair() async throws -> (any SQLStore, any SQLStore) {
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let first = try await PostgresStoreTests.store(schema: schema)
        let second = try await PostgresStoreTests.store(schema: schema)
        return (first, second)
    }

    @Test("SQLite: a session made by one store is read, ended and pruned through another")
    func sqliteSessions() async throws {
        let (a, b) = try Self.sqlitePair()
        defer { Self.close(a, b) }
        try await Self.checkSessions(a, b)
    }

    @Test(
        "PostgreSQL: a session made by one instance is read, ended and pruned through another",
        .enabled(if: PostgresTestServer.isAvailable))
    func postgresSessions() async throws {
        let (a, b) = try await Self.postgresPair()
        defer { Self.close(a, b) }
        try await Self.checkSessions(a, b)
    }

    @Test("SQLite: the overview's counts by vendor, outcome, failover and bucket")
    func sqliteStats() async throws {
        let (a, b) = try Self.sqlitePair()
        defer { Self.close(a, b) }
        try await Self.checkStats(a, b)
    }

    @Test(
        "PostgreSQL: the overview's counts by vendor, outcome, failover and bucket",
        .enabled(if: PostgresTestServer.isAvailable))
    func postgresStats() async throws {
        let (a, b) = try await Self.postgresPair()
        defer { Self.close(a, b) }
        try await Self.checkStats(a, b)
    }

    @Test("SQLite: counts per vendor and country, the latency histogram, a number's verifications")
    func sqliteCountriesLatencyLookup() async throws {
        let (a, b) = try Self.sqlitePair()
        defer { Self.close(a, b) }
        try await Self.checkCountriesLatencyLookup(a, b)
    }

    @Test(
        "PostgreSQL: counts per vendor and country, the latency histogram, a number's verifications",
        .enabled(if: PostgresTestServer.isAvailable))
    func postgresCountriesLatencyLookup() async throws {
        let (a, b) = try await Self.postgresPair()
        defer { Self.close(a, b) }
        try await Self.checkCountriesLatencyLookup(a, b)
    }

    @Test("SQLite: own-code segments per vendor, country and sending vendor, and the cost they make")
    func sqliteCountrySegments() async throws {
        let (a, b) = try Self.sqlitePair()
        defer { Self.close(a, b) }
        try await Self.checkCountrySegments(a, b)
    }

    @Test(
        "PostgreSQL: own-code segments per vendor, country and sending vendor, and the cost they make",
        .enabled(if: PostgresTestServer.isAvailable))
    func postgresCountrySegments() async throws {
        let (a, b) = try await Self.postgresPair()
        defer { Self.close(a, b) }
        try await Self.checkCountrySegments(a, b)
    }

    @Test("SQLite: risk-signal calls per vendor and country, and the cost they add")
    func sqliteCountrySignals() async throws {
        let (a, b) = try Self.sqlitePair()
        defer { Self.close(a, b) }
        try await Self.checkCountrySignals(a, b)
    }

    @Test(
        "PostgreSQL: risk-signal calls per vendor and country, and the cost they add",
        .enabled(if: PostgresTestServer.isAvailable))
    func postgresCountrySignals() async throws {
        let (a, b) = try await Self.postgresPair()
        defer { Self.close(a, b) }
        try await Self.checkCountrySignals(a, b)
    }

    @Test("SQLite: refusals counted per kind and minute by two stores at once, read and pruned")
    func sqliteRefusals() async throws {
        let (a, b) = try Self.sqlitePair()
        defer { Self.close(a, b) }
        try await Self.checkRefusals(a, b)
    }

    @Test(
        "PostgreSQL: refusals counted per kind and minute by two instances at once, read and pruned",
        .enabled(if: PostgresTestServer.isAvailable))
    func postgresRefusals() async throws {
        let (a, b) = try await Self.postgresPair()
        defer { Self.close(a, b) }
        try await Self.checkRefusals(a, b)
    }

    static func close(_ stores: any SQLStore...) {
        for store in stores {
            (store as? SQLiteVerificationStore)?.close()
            (store as? PostgresVerificationStore)?.close()
        }
    }

    static func checkSessions(_ a: any SQLStore, _ b: any SQLStore) async throws {
        let live = ConsoleSession(
            id: String(repeating: "a", count: 64), keyHash: String(repeating: "1", count: 64), createdAt: epoch,
            expiresAt: epoch.addingTimeInterval(3600))
        let old = ConsoleSession(
            id: String(repeating: "b", count: 64), keyHash: live.keyHash, createdAt: epoch.addingTimeInterval(-7200),
            expiresAt: epoch.addingTimeInterval(-3600))
        try await a.insertConsoleSession(live)
        try await a.insertConsoleSession(old)
        #expect(try await b.consoleSession(id: live.id, at: epoch) == live)
        // Expired: never answered, whether or not pruned yet.
        #expect(try await b.consoleSession(id: old.id, at: epoch) == nil)
        #expect(try await b.consoleSession(id: live.id, at: epoch.addingTimeInterval(3600)) == nil)
        #expect(try await b.deleteExpiredConsoleSessions(before: epoch) == 1)
        #expect(try await a.deleteExpiredConsoleSessions(before: epoch) == 0)
        #expect(try await b.deleteConsoleSession(id: live.id))
        #expect(try await a.deleteConsoleSession(id: live.id) == false)
        #expect(try await a.consoleSession(id: live.id, at: epoch) == nil)
    }

    static func record(
        _ id: String, provider: String, status: VerificationStatus, at offset: TimeInterval, reason: String? = nil,
        failovers: [String] = [], testNumber: Bool = false
    ) throws -> VerificationRecord {
        var record = try StoreConformance.phoneRecord(id: id)
        record.providerID = provider
        record.providerReference = "ref-" + id
        record.status = status
        record.statusReason = reason
        record.failovers = failovers
        record.isTestNumber = testNumber
        record.createdAt = epoch.addingTimeInterval(offset)
        record.updatedAt = record.createdAt
        return record
    }

    static func checkStats(_ a: any SQLStore, _ b: any SQLStore) async throws {
        let since = epoch.addingTimeInterval(-3600)
        let records = [
            // Before the window: not counted.
            try record("VEold", provider: "twilio", status: .approved, at: -3601),
            // The first instant of the window is bucket 0; 299.9 s in is still bucket 0 (a floor, not a rounding).
            try record("VE1", provider: "twilio", status: .approved, at: -3600),
            try record("VE2", provider: "twilio", status: .pending, at: -3600 + 299.9),
            try record("VE3", provider: "twilio", status: .approved, at: -3600 + 300),
            try record(
                "VE4", provider: "sinch", status: .approved, at: -10, failovers: ["twilio:provider_unavailable"]),
            try record("VE5", provider: "sinch", status: .approved, at: -9, failovers: ["twilio:provider_unavailable"]),
            try record("VE6", provider: "sinch", status: .failed, at: -8, reason: "delivery_failed"),
            // Test numbers never reach a vendor: not counted.
            try record("VEtest", provider: "twilio", status: .approved, at: -5, testNumber: true),
        ]
        for record in records { try await a.insert(record) }
        let rows = try await b.verificationStats(since: since, bucketSeconds: 300)
        func count(_ provider: String, _ status: String, bucket: Int) -> Int {
            rows.filter { $0.providerID == provider && $0.status == status && $0.bucket == bucket }.map(\.count)
                .reduce(0, +)
        }
        #expect(rows.map(\.count).reduce(0, +) == 6)
        #expect(count("twilio", "approved", bucket: 0) == 1)
        #expect(count("twilio", "pending", bucket: 0) == 1)
        #expect(count("twilio", "approved", bucket: 1) == 1)
        #expect(count("sinch", "approved", bucket: 11) == 2)
        #expect(
            rows.first { $0.providerID == "sinch" && $0.status == "approved" }?.failovers
                == ["twilio:provider_unavailable"])
        #expect(rows.first { $0.status == "failed" }?.reason == "delivery_failed")

        let stats = VerificationStats.build(
            rows: rows, providers: ["twilio", "sinch", "vonage"], window: .hour, until: epoch)
        #expect(stats.order == ["twilio", "sinch", "vonage"])
        #expect(stats.vendors["twilio"]?.starts == 3)
        #expect(stats.vendors["twilio"]?.approvals == 2)
        #expect(stats.vendors["twilio"]?.errors == ["provider_unavailable": 2])
        #expect(stats.vendors["twilio"]?.errorSeries[11] == 2)
        #expect(stats.vendors["twilio"]?.startSeries.prefix(2) == [2, 1])
        #expect(stats.vendors["sinch"]?.starts == 3)
        #expect(stats.vendors["sinch"]?.errors == ["delivery_failed": 1])
        #expect(stats.vendors["vonage"]?.starts == 0)
    }
}

extension ConsoleStoreTests {
    static func numbered(
        _ id: String, _ number: String, provider: String, status: VerificationStatus, at offset: TimeInterval,
        testNumber: Bool = false
    ) throws -> VerificationRecord {
        var record = try record(id, provider: provider, status: status, at: offset, testNumber: testNumber)
        record.destination = .phone(try PhoneNumber(parsing: number))
        return record
    }

    static func call(
        _ id: String, _ provider: String, ms: String?, at offset: TimeInterval, segments: Int? = nil
    ) -> VerificationEvent {
        var detail = ["provider": provider, "operation": "start", "outcome": "ok"]
        detail["latency_ms"] = ms
        detail["segments"] = segments.map(String.init)
        return VerificationEvent(
            verificationID: id, kind: .providerCall, at: epoch.addingTimeInterval(offset), detail: detail)
    }

    static func checkCountriesLatencyLookup(_ a: any SQLStore, _ b: any SQLStore) async throws {
        let since = epoch.addingTimeInterval(-3600)
        let gb = "+447400123456"
        let records = [
            try numbered("VEc0", gb, provider: "twilio", status: .approved, at: -3700),  // before the window
            try numbered("VEc1", gb, provider: "twilio", status: .approved, at: -100),
            try numbered("VEc2", gb, provider: "twilio", status: .failed, at: -90),
            try numbered("VEc3", "+447400123457", provider: "twilio", status: .pending, at: -80),
            try numbered("VEc4", "+33612345678", provider: "sinch", status: .approved, at: -70),
            try numbered("VEc5", gb, provider: "twilio", status: .approved, at: -60, testNumber: true),
        ]
        // Vendor calls: twilio 10, 20, 30 and 400 ms (one without a latency, one of a test number, one before
        // the window, none counted), sinch 7 ms; an event that is no vendor call is never counted.
        let events: [String: [VerificationEvent]] = [
            "VEc0": [call("VEc0", "twilio", ms: "999", at: -3700)],
            "VEc1": [call("VEc1", "twilio", ms: "10", at: -100), call("VEc1", "twilio", ms: "30", at: -95)],
            "VEc2": [call("VEc2", "twilio", ms: "400", at: -90), call("VEc2", "twilio", ms: nil, at: -89)],
            "VEc3": [
                call("VEc3", "twilio", ms: "20", at: -80),
                VerificationEvent(
                    verificationID: "VEc3", kind: .started, at: epoch.addingTimeInterval(-80),
                    detail: ["provider": "twilio", "latency_ms": "5000"]),
            ],
            "VEc4": [call("VEc4", "sinch", ms: "7", at: -70)],
            "VEc5": [call("VEc5", "twilio", ms: "888", at: -60)],
        ]
        for record in records { try await a.insert(record, events: events[record.id] ?? []) }

        let countries = try await b.countryStats(since: since)
        func count(_ provider: String, _ country: String?, _ status: String) -> Int {
            countries.filter { $0.providerID == provider && $0.country == country && $0.status == status }
                .map(\.count).reduce(0, +)
        }
        #expect(countries.map(\.count).reduce(0, +) == 4)
        #expect(count("twilio", "GB", "approved") == 1)
        #expect(count("twilio", "GB", "failed") == 1)
        #expect(count("twilio", "GB", "pending") == 1)
        #expect(count("sinch", "FR", "approved") == 1)
        var prices = PriceTable()
        prices.set(0.05, provider: "twilio", country: nil)
        prices.set(0.04, provider: "twilio", country: "GB")
        let report = CountryStats.build(
            rows: countries, providers: ["sinch", "twilio"], prices: prices, window: .hour, until: epoch)
        #expect(report.cells.map(\.providerID) == ["sinch", "twilio"])
        let twilioGB = try #require(report.cells.last)
        #expect(twilioGB.starts == 3 && twilioGB.approvals == 1 && twilioGB.failed == 1)
        // The failed start is not paid: two at GB's price.
        #expect(abs((report.cost(twilioGB) ?? 0) - 0.08) < 1e-9)
        #expect(report.cost(report.cells[0]) == nil)

        let latencies = try await b.vendorLatencies(since: since)
        #expect(latencies.filter { $0.providerID == "twilio" }.map(\.count).reduce(0, +) == 4)
        let percentiles = VerificationStats.latencies(latencies)
        #expect(percentiles["twilio"] == VerificationStats.Latency(calls: 4, p50: 20, p95: 400))
        #expect(percentiles["sinch"] == VerificationStats.Latency(calls: 1, p50: 7, p95: 7))

        let found = try await b.verifications(destination: gb, digest: nil, limit: 20)
        #expect(found.map(\.id) == ["VEc5", "VEc2", "VEc1", "VEc0"])
        #expect(try await b.verifications(destination: gb, digest: nil, limit: 2).map(\.id) == ["VEc5", "VEc2"])
        #expect(try await b.verifications(destination: "+447400999999", digest: nil, limit: 20).isEmpty)
    }
}

extension ConsoleStoreTests {
    static func checkCountrySegments(_ a: any SQLStore, _ b: any SQLStore) async throws {
        let since = epoch.addingTimeInterval(-3600)
        let gb = "+447400123456"
        let own = "twilio_messaging"
        let records = [
            try numbered("VEs0", gb, provider: own, status: .approved, at: -3700),  // before the window
            try numbered("VEs1", gb, provider: own, status: .approved, at: -100),
            try numbered("VEs2", gb, provider: own, status: .failed, at: -90),
            try numbered("VEs3", "+447400123457", provider: own, status: .pending, at: -80),
            try numbered("VEs4", gb, provider: own, status: .approved, at: -70, testNumber: true),
            try numbered("VEs5", gb, provider: "twilio", status: .approved, at: -60),
        ]
        // VEs1: one segment through its own vendor, a resend of two through vonage_sms. VEs2's start failed and
        // VEs3's resend failed: no segments. A test number's and an earlier verification's are not counted; a
        // Verify vendor's call has none.
        let events: [String: [VerificationEvent]] = [
            "VEs0": [call("VEs0", own, ms: "9", at: -3700, segments: 5)],
            "VEs1": [
                call("VEs1", own, ms: "10", at: -100, segments: 1),
                call("VEs1", "vonage_sms", ms: "12", at: -95, segments: 2),
            ],
            "VEs2": [call("VEs2", own, ms: "400", at: -90)],
            "VEs3": [call("VEs3", own, ms: "20", at: -80, segments: 2), call("VEs3", own, ms: "21", at: -79)],
            "VEs4": [call("VEs4", own, ms: "8", at: -70, segments: 3)],
            "VEs5": [call("VEs5", "twilio", ms: "30", at: -60)],
        ]
        for record in records { try await a.insert(record, events: events[record.id] ?? []) }

        let segments = try await b.countrySegments(since: since)
        #expect(
            Set(segments.map { "\($0.providerID) \($0.country ?? "-") \($0.senderID) \($0.segments)" }) == [
                "twilio_messaging GB twilio_messaging 3", "twilio_messaging GB vonage_sms 2",
            ])
        var prices = PriceTable()
        prices.set(0.01, provider: own, country: "GB")
        prices.set(0.02, provider: "vonage_sms", country: nil)
        prices.set(0.05, provider: "twilio", country: nil)
        let rows = try await b.countryStats(since: since)
        let report = CountryStats.build(
            rows: rows, segments: segments, providers: [own, "vonage_sms", "twilio"], prices: prices,
            window: .hour, until: epoch)
        let cell = try #require(report.cells.first { $0.providerID == own })
        #expect(cell.starts == 3 && cell.approvals == 1 && cell.failed == 1)
        #expect(cell.segments == [own: 3, "vonage_sms": 2])
        // Three segments at 0.01 and two at vonage_sms's 0.02, not three starts at one price.
        #expect(abs((report.cost(cell) ?? 0) - 0.07) < 1e-9)
        let twilio = try #require(report.cells.first { $0.providerID == "twilio" })
        #expect(twilio.segments.isEmpty && abs((report.cost(twilio) ?? 0) - 0.05) < 1e-9)
        // The vendor that sent has no price: no cost rather than a partial one.
        var partial = PriceTable()
        partial.set(0.01, provider: own, country: "GB")
        let unpriced = CountryStats.build(
            rows: rows, segments: segments, providers: [own], prices: partial, window: .hour, until: epoch)
        #expect(unpriced.cost(try #require(unpriced.cells.first { $0.providerID == own })) == nil)
        let json = report.json
        guard case .array(let cells)? = json["cells"] else {
            Issue.record("no cells")
            return
        }
        #expect(cells.contains { $0["provider"] == .string(own) && $0["segments"] == .number(5) })
        #expect(cells.contains { $0["provider"] == .string("twilio") && $0["segments"] == .null })
    }

    static func checkRefusals(_ a: any SQLStore, _ b: any SQLStore) async throws {
        let minute = RefusalStats.bucket(epoch)
        #expect(minute % 60 == 0 && minute <= Int(epoch.timeIntervalSince1970))
        #expect(
            RefusalStats.bucket(epoch.addingTimeInterval(59.9)) == RefusalStats.bucket(epoch.addingTimeInterval(59)))
        // Twenty refusals of one kind in one minute from two stores at once: one row, none lost.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                let store = index.isMultiple(of: 2) ? a : b
                group.addTask { try await store.countRefusal(kind: "pumping_guard", bucketStart: minute) }
            }
            try await group.waitForAll()
        }
        try await a.countRefusal(kind: "geo:KP", bucketStart: minute - 3600)
        try await a.countRefusal(kind: "rate_limit:starts per destination", bucketStart: minute - 7200)
        let rows = try await b.refusalCounts(since: minute - 3600)
        #expect(
            rows == [
                RefusalCountRow(kind: "geo:KP", bucketStart: minute - 3600, count: 1),
                RefusalCountRow(kind: "pumping_guard", bucketStart: minute, count: 20),
            ])
        let report = RefusalStats.build(rows: rows, window: .hour, until: epoch.addingTimeInterval(1))
        // The hour's first minute is where `until - 1h` falls: the geo refusal an hour back is its first bucket.
        #expect(report.kinds.map(\.kind) == ["pumping_guard", "geo:KP"])
        #expect(report.kinds.first?.series.last == 20)
        #expect(report.kinds.last?.series.first == 1)
        #expect(try await b.pruneRefusalCounts(before: minute - 3600) == 1)
        #expect(try await a.refusalCounts(since: 0).count == 2)
    }
}

extension ConsoleStoreTests {
    /// A SIM-swap signal call as the risk step records it; `ms` nil for an answer from the cache.
    static func signal(_ id: String, ms: String?, at offset: TimeInterval) -> VerificationEvent {
        var detail = ["provider": "camara", "operation": "sim_swap", "outcome": "not_swapped", "max_age_hours": "72"]
        detail["latency_ms"] = ms
        if ms == nil { detail["cached"] = "true" }
        return VerificationEvent(
            verificationID: id, kind: .providerCall, at: epoch.addingTimeInterval(offset), detail: detail)
    }

    static func checkCountrySignals(_ a: any SQLStore, _ b: any SQLStore) async throws {
        let since = epoch.addingTimeInterval(-3600)
        let gb = "+447400123456"
        let records = [
            try numbered("VEg0", gb, provider: "twilio", status: .approved, at: -3700),  // before the window
            try numbered("VEg1", gb, provider: "twilio", status: .approved, at: -100),
            try numbered("VEg2", gb, provider: "twilio", status: .pending, at: -90),
            try numbered("VEg3", gb, provider: "-", status: .blocked, at: -80),
            try numbered("VEg4", gb, provider: "twilio", status: .approved, at: -70, testNumber: true),
        ]
        // VEg1 asked the signal; VEg2's answer came from the cache (no call); VEg3 was refused by it.
        let events: [String: [VerificationEvent]] = [
            "VEg0": [signal("VEg0", ms: "5", at: -3700)],
            "VEg1": [signal("VEg1", ms: "5", at: -100), call("VEg1", "twilio", ms: "30", at: -99)],
            "VEg2": [signal("VEg2", ms: nil, at: -90), call("VEg2", "twilio", ms: "30", at: -89)],
            "VEg3": [signal("VEg3", ms: "6", at: -80)],
            "VEg4": [signal("VEg4", ms: "5", at: -70)],
        ]
        for record in records { try await a.insert(record, events: events[record.id] ?? []) }
        let signals = try await b.countrySignals(since: since)
        #expect(
            Set(signals.map { "\($0.providerID) \($0.country ?? "-") \($0.senderID) \($0.segments)" }) == [
                "twilio GB camara 1", "- GB camara 1",
            ])
        var prices = PriceTable()
        prices.set(0.05, provider: "twilio", country: nil)
        prices.set(0.01, provider: "camara", country: nil)
        let report = CountryStats.build(
            rows: try await b.countryStats(since: since), signals: signals, providers: ["twilio", "camara"],
            prices: prices, window: .hour, until: epoch)
        let twilio = try #require(report.cells.first { $0.providerID == "twilio" })
        // Two starts at 0.05 and one signal call at 0.01.
        #expect(abs((report.cost(twilio) ?? 0) - 0.11) < 1e-9)
        let refused = try #require(report.cells.first { $0.providerID == "-" })
        #expect(abs((report.cost(refused) ?? 0) - 0.01) < 1e-9)
        var unpriced = prices
        unpriced = PriceTable()
        unpriced.set(0.05, provider: "twilio", country: nil)
        let partial = CountryStats.build(
            rows: try await b.countryStats(since: since), signals: signals, providers: ["twilio"], prices: unpriced,
            window: .hour, until: epoch)
        #expect(partial.cost(try #require(partial.cells.first { $0.providerID == "twilio" })) == nil)
    }
}
