import Foundation
import GatewayCore
import GatewayTestSupport
import Synchronization
import Testing

@Suite("Adaptive routing: the bandit's statistics")
struct AdaptiveModelTests {
    @Test("Beta quantiles against closed forms, and the sampler's mean and spread")
    func betaDistribution() {
        // Beta(1, 1) is uniform; Beta(2, 1) has CDF x², so its p quantile is √p.
        #expect(abs(AdaptiveModel.betaQuantile(0.025, 1, 1) - 0.025) < 1e-8)
        #expect(abs(AdaptiveModel.betaQuantile(0.5, 2, 1) - 0.5.squareRoot()) < 1e-8)
        #expect(abs(AdaptiveModel.betaQuantile(0.975, 2, 1) - 0.975.squareRoot()) < 1e-8)
        // Beta(1, 3) has CDF 1 − (1 − x)³.
        #expect(abs(AdaptiveModel.regularizedBeta(0.2, 1, 3) - (1 - pow(0.8, 3))) < 1e-10)
        let random = AdaptiveRandom(seed: 7)
        let draws = (0..<20_000).map { _ in random.beta(3, 7) }
        let mean = draws.reduce(0, +) / Double(draws.count)
        let variance = draws.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(draws.count)
        // Mean 0.3, variance ab/((a+b)²(a+b+1)) = 21/1100.
        #expect(abs(mean - 0.3) < 0.005)
        #expect(abs(variance - 21.0 / 1100) < 0.001)
        let small = (0..<20_000).map { _ in random.beta(0.5, 0.5) }
        #expect(abs(small.reduce(0, +) / 20_000 - 0.5) < 0.01, "shapes below 1 are sampled too")
    }

    @Test("evidence decays by half per window; a bucket past the code's validity counts its unapproved starts")
    func posteriorDecayAndExpiry() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        func cell(_ start: Int, starts: Int, approvals: Int, failures: Int) -> AdaptiveCell {
            AdaptiveCell(
                route: "r", context: "GB/sms", providerID: "a", bucketStart: start, bucketSeconds: 10, starts: starts,
                approvals: approvals, failures: failures)
        }
        // A bucket whose middle is one window (100 s) old weighs one half (no outcome remembered in full).
        let old = AdaptiveModel.posterior(
            [cell(1_000_000 - 105, starts: 10, approvals: 8, failures: 1)], now: now, window: 100, codeValidity: 600,
            memory: 0)
        #expect(abs(old.alpha - (1 + 4)) < 1e-9)
        // Within the code's validity the failures seen count, and the one pending verification counts as the
        // share of a failure its age (100 s) is of the validity (600 s).
        let oldBeta: Double = 1 + 0.5 + 0.5 / 6
        #expect(abs(old.beta - oldBeta) < 1e-9)
        #expect(old.pending == 1 && old.failures == 1)
        #expect(abs(old.recentStarts - 5) < 1e-9)
        // The same bucket once its codes can no longer be approved: 10 − 8 failures.
        let settled = AdaptiveModel.posterior(
            [cell(1_000_000 - 105, starts: 10, approvals: 8, failures: 1)], now: now, window: 100, codeValidity: 60,
            memory: 0)
        #expect(abs(settled.beta - (1 + 1)) < 1e-9)
        #expect(settled.failures == 2 && settled.pending == 0)
        // A pending verification as old as the validity leans fully to failure before its bucket settles.
        let leaning = AdaptiveModel.posterior(
            [cell(1_000_000 - 10, starts: 4, approvals: 0, failures: 0)], now: now, window: 100, codeValidity: 5,
            memory: 0)
        #expect(leaning.pending == 4)
        let leaningBeta: Double = 1 + 4 * pow(0.5, 0.05)
        #expect(abs(leaning.beta - leaningBeta) < 1e-9)
        // The newest outcomes are remembered in full: the old bucket's 10 count whole with a memory of 20, and
        // of two buckets only the newer is whole once it holds the memory's worth.
        let remembered = AdaptiveModel.posterior(
            [cell(1_000_000 - 105, starts: 10, approvals: 8, failures: 2)], now: now, window: 100, codeValidity: 60,
            memory: 20)
        #expect(abs(remembered.alpha - (1 + 8)) < 1e-9 && abs(remembered.beta - (1 + 2)) < 1e-9)
        let two = AdaptiveModel.posterior(
            [
                cell(1_000_000 - 205, starts: 10, approvals: 0, failures: 10),
                cell(1_000_000 - 105, starts: 30, approvals: 30, failures: 0),
            ], now: now, window: 100, codeValidity: 60, memory: 20)
        #expect(abs(two.alpha - (1 + 30)) < 1e-9)
        #expect(abs(two.beta - (1 + 10 * 0.25)) < 1e-9)
        let empty = AdaptiveModel.posterior([], now: now, window: 100, codeValidity: 60)
        #expect(empty.mean == 0.5)
        let interval = AdaptivePosterior(alpha: 81, beta: 21).interval95
        #expect(
            interval.low > 0.70 && interval.low < 0.72 && interval.high > 0.86 && interval.high < 0.87, "\(interval)")
    }

    @Test("Thompson sampling favours the better provider; the floor tops up one below min_share")
    func choiceAndFloor() {
        let random = AdaptiveRandom(seed: 42)
        // Recent starts: a 900, b 60, c 60 (each above 5% of 1,020): Thompson sampling alone decides.
        var posteriors = [
            "a": AdaptivePosterior(alpha: 901, beta: 101, recentStarts: 900),
            "b": AdaptivePosterior(alpha: 601, beta: 401, recentStarts: 60),
            "c": AdaptivePosterior(alpha: 301, beta: 701, recentStarts: 60),
        ]
        var counts: [String: Int] = [:]
        let rounds = 2_000
        for _ in 0..<rounds {
            let choice = AdaptiveModel.choose(
                eligible: ["a", "b", "c"], posteriors: posteriors, prices: [:], objective: .conversions,
                minShare: 0.05, random: random)
            counts[choice.providerID, default: 0] += 1
            #expect(choice.order.count == 3 && choice.order[0] == choice.providerID)
            #expect(choice.reason == .sampled)
        }
        #expect(counts["a"] == rounds)
        // c falls to 40 of 1,000 recent starts (4%): the floor sends it the next start, whatever the draw.
        posteriors["c"]?.recentStarts = 40
        let topped = AdaptiveModel.choose(
            eligible: ["a", "b", "c"], posteriors: posteriors, prices: [:], objective: .conversions, minShare: 0.05,
            random: random)
        #expect(topped.providerID == "c" && topped.reason == .floor)
        #expect(topped.explanation.hasPrefix("exploration floor (min_share 0.05) raised c"))
        #expect(topped.order.first == "c" && topped.order.count == 3)
        // Without recent starts (a new context) nothing is below the floor.
        let fresh = AdaptiveModel.choose(
            eligible: ["a", "b"], posteriors: [:], prices: [:], objective: .conversions, minShare: 0.05,
            random: random)
        #expect(fresh.reason == .sampled)
        let shares = AdaptiveModel.shares(
            eligible: ["a", "b", "c"], posteriors: posteriors, prices: [:], objective: .conversions, minShare: 0.05,
            random: random)
        #expect(abs(shares["a"]! - 0.9) < 0.01 && abs(shares["b"]! - 0.05) < 0.01)
        let explained = AdaptiveModel.choose(
            eligible: ["a", "b"], posteriors: posteriors, prices: [:], objective: .conversions, minShare: 0,
            random: random)
        #expect(explained.explanation.hasPrefix("sampled a 0.") && explained.explanation.contains(" vs b 0."))
    }

    @Test("conversions_per_cost divides by the country's price; an unknown price never wins on price")
    func perCost() {
        let random = AdaptiveRandom(seed: 3)
        let same = AdaptivePosterior(alpha: 801, beta: 201)
        var cheap = 0
        for _ in 0..<2000 {
            let choice = AdaptiveModel.choose(
                eligible: ["dear", "cheap", "unpriced"],
                posteriors: ["dear": same, "cheap": same, "unpriced": same],
                prices: ["dear": 0.05, "cheap": 0.01], objective: .conversionsPerCost, minShare: 0, random: random)
            if choice.providerID == "cheap" { cheap += 1 }
        }
        #expect(cheap == 2000)
    }

    @Test("a provider priced per segment costs its price times the segments of its message per start")
    func perSegmentPrice() {
        var prices = PriceTable()
        prices.set(0.01, provider: "own", country: nil)
        prices.set(0.03, provider: "verify", country: "GB")
        let table = RoutingTable(defaultOrder: ["own"], rules: [])
        let router = AdaptiveRouter(
            store: InMemoryVerificationStore(), routing: table, prices: prices, segmentsPerStart: ["own": 2],
            clock: ManualClock(), logger: .quiet)
        #expect(router.priceList(["own", "verify", "unpriced"], country: "GB") == ["own": 0.02, "verify": 0.03])
    }

    @Test("settings that make no sense are problems, each named")
    func policyProblems() {
        #expect(AdaptivePolicy(providers: ["a", "b"]).problems(route: "r").isEmpty)
        let problems = AdaptivePolicy(providers: ["a"], minShare: 1.5, window: 2).problems(route: "r")
        #expect(problems.count == 3)
        #expect(AdaptivePolicy(providers: ["a", "b", "c"], minShare: 0.34).problems(route: "r").count == 1)
        #expect(
            AdaptivePolicy(providers: ["a", "b"], dimensions: [.country]).context(country: "GB", channel: .sms) == "GB")
        #expect(AdaptivePolicy(providers: ["a", "b"]).context(country: nil, channel: .sms) == "-/sms")
        #expect(AdaptivePolicy(providers: ["a", "b"], dimensions: []).context(country: "GB", channel: .sms) == "*")
    }
}

@Suite("Adaptive routing in the engine")
struct AdaptiveEngineTests {
    static let policy = AdaptivePolicy(providers: ["good", "fair", "poor"], minShare: 0.05, window: 3600)

    static func harness(_ providers: [ScriptedProvider], store: any VerificationStore = InMemoryVerificationStore())
        throws -> ServiceHarness
    {
        let table = RoutingTable(
            defaultOrder: providers.map(\.id),
            rules: [Route(name: "adaptive-sms", channels: [.sms], target: .adaptive(policy), fallbacks: ["good"])])
        return try ServiceHarness(providers, table: table, store: store)
    }

    @Test("traffic moves to the provider whose users approve; each outcome is counted once in its context")
    func learns() async throws {
        let good = ScriptedProvider(id: "good")
        let fair = ScriptedProvider(id: "fair")
        let poor = ScriptedProvider(id: "poor")
        good.setFallbackCheck(.succeed(ProviderCheckResult(status: .approved)))
        fair.setFallbackCheck(.succeed(ProviderCheckResult(status: .approved)))
        poor.setFallbackCheck(.succeed(ProviderCheckResult(status: .approved)))
        let h = try Self.harness([good, fair, poor])
        var approvedBy: [String: Int] = [:]
        var late: [String: Int] = [:]
        var lastID = ""
        for index in 0..<400 {
            let record = try await h.service.start(try .sms("+4474000\(String(format: "%05d", index))"))
            lastID = record.id
            #expect(record.adaptiveContext == "GB/sms")
            // Users of `good` all type their code, of `fair` every other one, of `poor` none: they cancel.
            let approves = record.providerID == "good" || (record.providerID == "fair" && index % 2 == 0)
            if approves {
                _ = try await h.check(record.id, "123456")
                approvedBy[record.providerID, default: 0] += 1
            } else {
                _ = try await h.service.cancel(id: record.id)
            }
            if index >= 300 { late[record.providerID, default: 0] += 1 }
            h.clock.advance(by: 2)
        }
        #expect(late["good", default: 0] >= 80, "the last 100 starts: \(late)")
        let started = try #require(try await h.events(lastID, .started).first)
        #expect(started.detail["adaptive"] != nil)
        let cells = try await h.store.adaptiveEvidence(route: "adaptive-sms", context: "GB/sms", since: 0)
        for id in ["good", "fair", "poor"] {
            let mine = cells.filter { $0.providerID == id }
            #expect(mine.map(\.approvals).reduce(0, +) == approvedBy[id, default: 0])
            #expect(
                mine.map(\.starts).reduce(0, +) == good.callCount(.start) * (id == "good" ? 1 : 0)
                    + fair.callCount(.start) * (id == "fair" ? 1 : 0) + poor.callCount(.start) * (id == "poor" ? 1 : 0))
        }
        let report = try #require(try await h.service.adaptive?.report().first)
        let context = try #require(report.contexts.first)
        #expect(context.context == "GB/sms")
        let best = try #require(context.providers.first { $0.providerID == "good" })
        #expect(best.posteriorMean > 0.9 && best.share > 0.8 && best.interval95.low < best.posteriorMean)
        #expect(context.providers.allSatisfy { $0.share >= 0.05 - 1e-9 })
    }

    @Test("a second start to a number with an open verification sticks to its provider")
    func sticky() async throws {
        let providers = ["good", "fair", "poor"].map { ScriptedProvider(id: $0) }
        let h = try Self.harness(providers)
        let first = try await h.service.start(try .sms("+447400123456"))
        for _ in 0..<20 {
            let again = try await h.service.start(try .sms("+447400123456"))
            #expect(again.providerID == first.providerID)
            let started = try await h.events(again.id, .started)
            #expect(started.first?.detail["adaptive"]?.hasPrefix("sticky") == true)
        }
        _ = try await h.service.cancel(id: first.id)
    }

    @Test("open breakers and excluded countries filter before the bandit; failover goes on to the next")
    func guardRails() async throws {
        let good = ScriptedProvider(id: "good")
        let fair = ScriptedProvider(
            id: "fair", capabilities: ProviderCapabilities(channels: [.sms], excludedRegions: ["GB"]))
        let poor = ScriptedProvider(id: "poor")
        let h = try Self.harness([good, fair, poor])
        for _ in 0..<5 { h.service.breakers.record("good", country: "GB", failure: true) }
        for index in 0..<30 {
            let record = try await h.service.start(try .sms("+4474001\(String(format: "%05d", index))"))
            #expect(record.providerID == "poor", "good's breaker is open and fair excludes GB")
        }
        #expect(good.callCount(.start) == 0 && fair.callCount(.start) == 0)
        // A vendor that fails before sending is failed over, as on any route.
        let again = ["good", "fair", "poor"].map { ScriptedProvider(id: $0) }
        let firstCall = FirstCall()
        for provider in again {
            provider.setFallbackStart(
                .run { () async throws(GatewayError) -> ProviderStartResult in
                    if firstCall.take() {
                        throw GatewayError(.providerUnavailable, "down")
                    }
                    return ProviderStartResult(reference: "ref-\(provider.id)")
                })
        }
        let h2 = try Self.harness(again)
        let record = try await h2.service.start(try .sms("+447400999999"))
        #expect(record.failovers.count == 1, "the chosen one failed, the next sent: \(record.failovers)")
        #expect(!record.failovers[0].hasPrefix(record.providerID + ":"))
    }
}

/// True for the first caller only.
@Suite("Adaptive routing: the router's kept evidence")
struct AdaptiveRouterCacheTests {
    @Test(
        "posteriors kept between reads, with this instance's starts and outcomes added in place, equal the ones computed afresh from the store"
    )
    func keptEqualsFresh() async throws {
        let policy = AdaptivePolicy(providers: ["a", "b", "c"], minShare: 0.05, window: 3600)
        let table = RoutingTable(
            defaultOrder: ["a"], rules: [Route(name: "r", channels: [.sms], target: .adaptive(policy))])
        let store = InMemoryVerificationStore()
        let clock = ManualClock()
        let router = AdaptiveRouter(store: store, routing: table, clock: clock, refreshInterval: 60, logger: .quiet)
        let now = Int(clock.now.timeIntervalSince1970)
        let width = policy.bucketSeconds
        let newest = now - now % width
        for bucket in [1, 3, 4, 9] {
            for (index, id) in ["a", "b"].enumerated() {
                try await store.addAdaptiveEvidence(
                    AdaptiveCell(
                        route: "r", context: "GB/sms", providerID: id, bucketStart: newest - bucket * width,
                        bucketSeconds: width, starts: 40, approvals: 30 - 10 * index, failures: 5))
            }
        }
        func fresh() async throws -> [String: AdaptivePosterior] {
            let cells = try await store.adaptiveEvidence(route: "r", context: "GB/sms", since: 0)
            var found: [String: AdaptivePosterior] = [:]
            for id in ["a", "b", "c"] {
                found[id] = AdaptiveModel.posterior(
                    cells.filter { $0.providerID == id }, now: clock.now, window: policy.window,
                    codeValidity: 600)
            }
            return found
        }
        func kept() async -> [String: AdaptivePosterior] {
            await router.posteriors(route: "r", policy: policy, context: "GB/sms", providers: ["a", "b", "c"])
        }
        #expect(await kept() == (try await fresh()))
        // Starts in the current bucket (a new newest cell), and outcomes of verifications started in older
        // buckets: ones that hold a cell already, one between two cells, one older than all: each lands in its
        // bucket, in order.
        let at = clock.now
        await router.countStart(route: "r", policy: policy, context: "GB/sms", providerID: "a", at: at)
        await router.countStart(route: "r", policy: policy, context: "GB/sms", providerID: "c", at: at)
        for (id, bucket, status) in [
            ("a", 3, VerificationStatus.approved), ("b", 2, .canceled), ("b", 12, .approved), ("a", 1, .expired),
        ] {
            var record = try StoreConformance.phoneRecord(id: "VEcache\(id)\(bucket)")
            record.providerID = id
            record.route = "r"
            record.adaptiveContext = "GB/sms"
            record.createdAt = Date(timeIntervalSince1970: TimeInterval(newest - bucket * width + 5))
            record.status = status
            await router.countOutcome(previous: .pending, record)
        }
        let afterAdditions = await kept()
        #expect(afterAdditions == (try await fresh()))
        #expect(afterAdditions["c"]?.starts == 1)
        #expect(afterAdditions["a"]?.starts == 161)
        // Within the refresh interval a posterior is as of its computation; after it, read and computed again.
        clock.advance(by: 61)
        #expect(await kept() == (try await fresh()))
    }
}

private final class FirstCall: Sendable {
    private let first = Mutex(true)

    func take() -> Bool {
        first.withLock { first in
            defer { first = false }
            return first
        }
    }
}
