import ArgumentParser
import Foundation
import GatewayCore
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// `gateway bench-adaptive`: issue 35's cost figure, the CPU an adaptive routing decision adds to a start with
/// `--stored` verifications in a SQLite store (BENCHMARKS.md, "Adaptive routing: the cost of a decision").
/// Hidden: a measuring tool for `scripts/bench/adaptive_decision.sh`, run on a release build; it works in a
/// temporary directory and touches no gateway data.
struct BenchAdaptive: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-adaptive",
        abstract: "Time adaptive routing decisions against a seeded SQLite store (scripts/bench).",
        shouldDisplay: false)

    @Option(help: "Verifications to seed.") var stored = 1_000_000
    @Option(help: "Decisions to time.") var decisions = 20_000

    func validate() throws {
        guard (1...50_000_000).contains(stored) else { throw ValidationError("--stored must be 1 to 50,000,000.") }
        guard (1...10_000_000).contains(decisions) else {
            throw ValidationError("--decisions must be 1 to 10,000,000.")
        }
    }

    func run() async throws {
        let result = try await AdaptiveDecisionBench.run(stored: stored, decisions: decisions)
        CommandOutput.write(result.line)
    }
}

/// The measurement behind `gateway bench-adaptive` (and its small test).
enum AdaptiveDecisionBench {
    struct Result {
        var stored: Int
        var seededSeconds: Double
        var decisions: Int
        var cpuPerDecision: Double
        var wallPerDecision: Double
        var cpuPerDraw: Double
        var cpuPerWrite: Double
        var chosen: [String: Int]
        /// Decisions the sticky rule answered (an open verification to the number).
        var sticky: Int

        var line: String {
            "RESULT stored=\(stored) seeded_s=\(String(format: "%.1f", seededSeconds)) decisions=\(decisions) "
                + "cpu_us_per_decision=\(String(format: "%.1f", cpuPerDecision)) "
                + "wall_us_per_decision=\(String(format: "%.1f", wallPerDecision)) "
                + "cpu_us_per_thompson_draw=\(String(format: "%.2f", cpuPerDraw)) "
                + "cpu_us_per_evidence_write=\(String(format: "%.1f", cpuPerWrite)) sticky=\(sticky) "
                + "chosen=\(chosen.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ","))"
        }
    }

    /// User plus system CPU seconds of this process (every thread: the store's queue included).
    static func cpuSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Seeds `stored` verifications on an adaptive route (one number each, a third approved, the rest expired,
    /// one in a hundred still pending) and evidence in every bucket of the horizon, then times `decisions`
    /// decisions as a start makes them (the open-verification lookup, the context's evidence, the draw), the
    /// draw alone, and the evidence write each start and each outcome adds.
    static func run(stored: Int, decisions: Int) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gateway-adaptive-bench-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The benchmark prints its own figures; the store and the router it times log nothing.
        let logger = Logger(label: "bench.adaptive") { _ in SwiftLogNoOpLogHandler() }
        let store = try SQLiteVerificationStore(
            path: directory.appendingPathComponent("gateway.sqlite").path, logger: logger)
        defer { store.close() }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let seeding = Date()
        try store.database.performSync { (connection) throws(SQLiteError) in
            try connection.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(stored))
                INSERT INTO verifications (id, destination_kind, destination_value, channel, provider_id,
                    provider_state, status, attempts, max_attempts, sends, created_at, updated_at, expires_at,
                    locales, metadata, version, route, adaptive_context)
                SELECT printf('vf_%032x', i), 'phone', printf('+44740%07d', i), 'sms',
                    CASE i % 3 WHEN 0 THEN 'twilio' WHEN 1 THEN 'sinch' ELSE 'vonage' END, '{}',
                    CASE WHEN i % 100 = 7 THEN 'pending' WHEN i % 3 = 0 THEN 'approved' ELSE 'expired' END, 1, 5, 1,
                    1800000000.0 - (i % 300), 1800000000.0 - (i % 300), 1800000600.0 - (i % 300), '[]', '{}', 2,
                    'adaptive-sms', 'GB/sms'
                FROM n
                """)
        }
        let seeded = Date().timeIntervalSince(seeding)
        let policy = AdaptivePolicy(providers: ["twilio", "sinch", "vonage"], window: 86_400)
        let table = RoutingTable(
            defaultOrder: ["twilio"], rules: [Route(name: "adaptive-sms", channels: [.sms], target: .adaptive(policy))])
        let clock = ManualClock(now)  // the benchmark moves it by hand
        let router = AdaptiveRouter(
            store: store, routing: table, clock: clock, random: AdaptiveRandom(seed: 1), logger: logger)
        // Evidence in every bucket of the horizon (6 windows of 8 buckets), for every provider.
        for bucket in 0..<48 {
            for (index, id) in policy.providers.enumerated() {
                try await store.addAdaptiveEvidence(
                    AdaptiveCell(
                        route: "adaptive-sms", context: "GB/sms", providerID: id,
                        bucketStart: 1_800_000_000 - (bucket + 1) * policy.bucketSeconds,
                        bucketSeconds: policy.bucketSeconds, starts: 1000, approvals: 900 - 100 * index,
                        failures: 100 + 100 * index))
            }
        }
        let adaptive = RoutingTable.Decision.Adaptive(policy: policy, context: "GB/sms")
        let eligible = policy.providers
        func decide(_ index: Int) async throws -> AdaptiveChoice {
            // Numbers spread over the stored ones: each lookup finds that number's verification.
            let destination = "+44740" + String(format: "%07d", 1 + (index &* 7919) % stored)
            let sticky = try await store.openProvider(destination: destination, route: "adaptive-sms", at: now)
            return await router.choose(
                route: "adaptive-sms", adaptive: adaptive, country: "GB", eligible: eligible, sticky: sticky)
        }
        for index in 0..<min(1000, decisions) { _ = try await decide(index) }  // warm the caches
        var chosen: [String: Int] = [:]
        var sticky = 0
        let began = cpuSeconds()
        let wall = Date()
        for index in 0..<decisions {
            let choice = try await decide(index)
            // The start counted into the kept evidence, as a start does (its store write is timed below).
            router.countStartLocally(
                route: "adaptive-sms", policy: policy, context: "GB/sms", providerID: choice.providerID, at: clock.now)
            chosen[choice.providerID, default: 0] += 1
            if choice.reason == .sticky { sticky += 1 }
            // The evidence is read again once a second of the gateway's clock: here every 1,000 decisions.
            if index % 1000 == 999 { clock.advance(by: 1) }
        }
        let perDecision = (cpuSeconds() - began) / Double(decisions) * 1e6
        let wallPerDecision = Date().timeIntervalSince(wall) / Double(decisions) * 1e6
        // The sampling alone, without the store.
        let posteriors = await router.posteriors(
            route: "adaptive-sms", policy: policy, context: "GB/sms", providers: eligible)
        let sampling = cpuSeconds()
        for _ in 0..<decisions {
            _ = AdaptiveModel.choose(
                eligible: eligible, posteriors: posteriors, prices: [:], objective: .conversions, minShare: 0.05,
                random: router.random)
        }
        let perDraw = (cpuSeconds() - sampling) / Double(decisions) * 1e6
        // The write each start and each outcome adds: one upsert of its cell.
        let writes = min(decisions, 5000)
        let writing = cpuSeconds()
        for _ in 0..<writes {
            await router.countStart(
                route: "adaptive-sms", policy: policy, context: "GB/sms", providerID: "twilio", at: clock.now)
        }
        let perWrite = (cpuSeconds() - writing) / Double(writes) * 1e6
        return Result(
            stored: stored, seededSeconds: seeded, decisions: decisions, cpuPerDecision: perDecision,
            wallPerDecision: wallPerDecision, cpuPerDraw: perDraw, cpuPerWrite: perWrite, chosen: chosen,
            sticky: sticky)
    }
}
