import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Testing

@testable import gateway

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 35's cost figure: the CPU an adaptive decision adds to a start, with 1,000,000 verifications stored
/// (SQLite). Run by `scripts/bench/adaptive_decision.sh` (BENCHMARKS.md, "Adaptive routing"); skipped unless
/// `GATEWAY_BENCH_ADAPTIVE` is set, since seeding takes a while and the figure means nothing under a parallel
/// test run.
@Suite(
    "Adaptive decision benchmark", .enabled(if: ProcessInfo.processInfo.environment["GATEWAY_BENCH_ADAPTIVE"] != nil))
struct AdaptiveDecisionBenchmark {
    static var stored: Int { Int(ProcessInfo.processInfo.environment["GATEWAY_BENCH_STORED"] ?? "") ?? 1_000_000 }
    static var decisions: Int { Int(ProcessInfo.processInfo.environment["GATEWAY_BENCH_DECISIONS"] ?? "") ?? 20_000 }

    /// User plus system CPU seconds of this process (every thread: the store's queue included).
    static func cpuSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    @Test("CPU per adaptive decision (open-verification lookup + cached evidence + Thompson draw) at 1M stored")
    func decisionCost() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gateway-adaptive-bench-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteVerificationStore(
            path: directory.appendingPathComponent("gateway.sqlite").path,
            logger: Logger(label: "bench.adaptive") { _ in SwiftLogNoOpLogHandler() })
        defer { store.close() }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let seeding = Date()
        // A million verifications on the adaptive route, a third approved, the rest expired, one number each.
        try store.database.performSync { (connection) throws(SQLiteError) in
            try connection.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.stored))
                INSERT INTO verifications (id, destination_kind, destination_value, channel, provider_id,
                    provider_state, status, attempts, max_attempts, sends, created_at, updated_at, expires_at,
                    locales, metadata, version, route, adaptive_context)
                SELECT printf('vf_%032x', i), 'phone', printf('+44740%07d', i), 'sms',
                    CASE i % 3 WHEN 0 THEN 'twilio' WHEN 1 THEN 'sinch' ELSE 'vonage' END, '{}',
                    CASE WHEN i % 3 = 0 THEN 'approved' ELSE 'expired' END, 1, 5, 1,
                    1800000000.0 - i, 1800000000.0 - i, 1800000600.0 - i, '[]', '{}', 2, 'adaptive-sms', 'GB/sms'
                FROM n
                """)
        }
        let seeded = Date().timeIntervalSince(seeding)
        let policy = AdaptivePolicy(providers: ["twilio", "sinch", "vonage"], window: 86_400)
        let table = RoutingTable(
            defaultOrder: ["twilio"], rules: [Route(name: "adaptive-sms", channels: [.sms], target: .adaptive(policy))])
        let clock = ManualClock(now)
        let router = AdaptiveRouter(store: store, routing: table, clock: clock, random: AdaptiveRandom(seed: 1))
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
            // Numbers spread over the stored ones: each lookup finds that number's closed verification.
            let destination = "+44740" + String(format: "%07d", 1 + (index &* 7919) % Self.stored)
            let sticky = try await store.openProvider(destination: destination, route: "adaptive-sms", at: now)
            return await router.choose(
                route: "adaptive-sms", adaptive: adaptive, country: "GB", eligible: eligible, sticky: sticky)
        }
        for index in 0..<1000 { _ = try await decide(index) }  // warm the caches
        var chosen: [String: Int] = [:]
        let began = Self.cpuSeconds()
        let wall = Date()
        for index in 0..<Self.decisions {
            chosen[try await decide(index).providerID, default: 0] += 1
            // The evidence is read again once a second of the gateway's clock: here every 1,000 decisions.
            if index % 1000 == 999 { clock.advance(by: 1) }
        }
        let perDecision = (Self.cpuSeconds() - began) / Double(Self.decisions) * 1e6
        let wallPerDecision = Date().timeIntervalSince(wall) / Double(Self.decisions) * 1e6
        // The sampling alone, without the store.
        let posteriors = await router.posteriors(
            route: "adaptive-sms", policy: policy, context: "GB/sms", providers: eligible)
        let sampling = Self.cpuSeconds()
        for _ in 0..<Self.decisions {
            _ = AdaptiveModel.choose(
                eligible: eligible, posteriors: posteriors, prices: [:], objective: .conversions, minShare: 0.05,
                random: router.random)
        }
        let perDraw = (Self.cpuSeconds() - sampling) / Double(Self.decisions) * 1e6
        // The write each start and each outcome adds: one upsert of its cell.
        let writes = min(Self.decisions, 5000)
        let writing = Self.cpuSeconds()
        for _ in 0..<writes {
            await router.countStart(
                route: "adaptive-sms", policy: policy, context: "GB/sms", providerID: "twilio", at: clock.now)
        }
        let perWrite = (Self.cpuSeconds() - writing) / Double(writes) * 1e6
        let line =
            "RESULT stored=\(Self.stored) seeded_s=\(String(format: "%.1f", seeded)) decisions=\(Self.decisions) "
            + "cpu_us_per_decision=\(String(format: "%.1f", perDecision)) "
            + "wall_us_per_decision=\(String(format: "%.1f", wallPerDecision)) "
            + "cpu_us_per_thompson_draw=\(String(format: "%.2f", perDraw)) "
            + "cpu_us_per_evidence_write=\(String(format: "%.1f", perWrite)) chosen=\(chosen.sorted { $0.key < $1.key })"
        print(line)
        #expect(chosen["twilio", default: 0] > chosen["vonage", default: 0])
    }
}
