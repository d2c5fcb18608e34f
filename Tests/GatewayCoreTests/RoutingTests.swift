import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@Suite("Routing: rules, experiments, breakers, test numbers")
struct RoutingTests {
    static func numbers(_ count: Int) -> [String] { (0..<count).map { "+4474\(String(format: "%08d", $0))" } }

    static func experiment(_ weights: (Int, Int), salt: String = "s1") -> Experiment {
        Experiment(
            name: "ab", salt: salt,
            arms: [
                Experiment.Arm(name: "a", providerID: "alpha", weight: weights.0, isControl: true),
                Experiment.Arm(name: "b", providerID: "beta", weight: weights.1),
            ])
    }

    // MARK: experiments

    @Test("assignment is sticky: the same number always gets the same arm, from any instance")
    func sticky() {
        let numbers = Self.numbers(2_000)
        let first = numbers.map { Self.experiment((50, 50)).assign($0)?.name }
        let again = numbers.map { Self.experiment((50, 50)).assign($0)?.name }
        #expect(first == again)
        let share = Double(first.filter { $0 == "a" }.count) / Double(numbers.count)
        #expect((0.46...0.54).contains(share), "\(share)")
        let other = numbers.map { Self.experiment((50, 50), salt: "s2").assign($0)?.name }
        #expect(first != other, "a new salt reshuffles")
    }

    @Test("changing a weight moves as few people as possible, and only out of the shrinking arm")
    func minimalMovement() {
        let numbers = Self.numbers(10_000)
        let before = numbers.map { Self.experiment((50, 50)).assign($0)!.name }
        let after = numbers.map { Self.experiment((60, 40)).assign($0)!.name }
        let moved = zip(before, after).filter { $0 != $1 }
        let share = Double(moved.count) / Double(numbers.count)
        // The least possible is 10%: b shrinks from 50% to 40%.
        #expect((0.08...0.12).contains(share), "\(share)")
        #expect(moved.allSatisfy { $0.0 == "b" && $0.1 == "a" })
        let weighted = Double(after.filter { $0 == "a" }.count) / Double(numbers.count)
        #expect((0.57...0.63).contains(weighted), "\(weighted)")
    }

    @Test("an arm of weight zero gets nobody")
    func zeroWeight() {
        #expect(Self.numbers(500).allSatisfy { Self.experiment((0, 1)).assign($0)?.name == "b" })
    }

    @Test("experiment problems: control count, weights, providers")
    func experimentProblems() {
        let known: Set<String> = ["alpha", "beta"]
        #expect(Self.experiment((50, 50)).problems(knownProviders: known).isEmpty)
        let noControl = Experiment(
            name: "x",
            arms: [.init(name: "a", providerID: "alpha", weight: 1), .init(name: "b", providerID: "beta", weight: 1)])
        #expect(
            noControl.problems(knownProviders: known).contains { $0.contains("exactly one arm must be the control") })
        let bad = Experiment(
            name: "x",
            arms: [
                .init(name: "a", providerID: "alpha", weight: 0, isControl: true),
                .init(name: "a", providerID: "gamma", weight: -1),
            ])
        let problems = bad.problems(knownProviders: known)
        #expect(problems.contains { $0.contains("negative weight") })
        #expect(problems.contains { $0.contains("used twice") })
        #expect(problems.contains { $0.contains("unknown provider `gamma`") })
        #expect(problems.contains { $0.contains("every weight is zero") })
        #expect(problems.contains { $0.contains("control arm `a` has weight 0") })
    }

    // MARK: rules

    @Test("the first matching rule wins; channel, country and API key all narrow it")
    func ruleMatching() throws {
        let alpha = ScriptedProvider(id: "alpha", channels: [.sms, .voice])
        let beta = ScriptedProvider(id: "beta", channels: [.sms, .voice])
        let gamma = ScriptedProvider(id: "gamma", channels: [.sms, .voice])
        let table = RoutingTable(
            defaultOrder: ["gamma"],
            rules: [
                Route(name: "backend-uk", countries: ["GB"], apiKeys: ["backend"], target: .providers(["beta"])),
                Route(
                    name: "uk-sms", channels: [.sms], countries: ["GB"], target: .providers(["alpha"]),
                    fallbacks: ["beta"]),
                Route(name: "us", countries: ["US", "CA"], target: .providers(["beta"])),
            ])
        let registry = try makeRegistry([alpha, beta, gamma])
        func decide(_ to: String, _ channel: Channel = .sms, key: String? = nil) throws -> RoutingTable.Decision {
            table.decide(
                StartVerification(destination: .phone(try PhoneNumber(parsing: to)), channel: channel), apiKey: key,
                registry: registry)
        }
        let uk = try decide("+447400123456")
        #expect(uk.route == "uk-sms")
        #expect(uk.candidates.map(\.id) == ["alpha", "beta"])
        #expect(uk.country == "GB")
        #expect(try decide("+447400123456", key: "backend").route == "backend-uk")
        #expect(try decide("+447400123456", .voice).route == "default")
        #expect(try decide("+16505553434").candidates.map(\.id) == ["beta"])
        #expect(try decide("+33612345678").route == "default")
        #expect(table.problems(against: registry).isEmpty)
    }

    @Test("configuration problems: shadowed routes, unknown providers and experiments, channel support")
    func ruleProblems() throws {
        let alpha = ScriptedProvider(id: "alpha", channels: [.sms])
        let registry = try makeRegistry([alpha])
        let table = RoutingTable(
            defaultOrder: ["alpha"],
            rules: [
                Route(name: "all-sms", channels: [.sms], target: .providers(["alpha"])),
                Route(name: "uk-sms", channels: [.sms], countries: ["GB"], target: .providers(["alpha"])),
                Route(name: "voice", channels: [.voice], target: .providers(["alpha", "zeta"])),
                Route(name: "ab", channels: [.whatsapp], target: .experiment("missing")),
            ])
        let problems = table.problems(against: registry)
        #expect(problems.contains { $0.contains("`uk-sms` is unreachable: route `all-sms`") })
        #expect(problems.contains { $0.contains("unknown provider `zeta`") })
        #expect(problems.contains { $0.contains("provider `alpha` cannot send voice") })
        #expect(problems.contains { $0.contains("unknown experiment `missing`") })
        #expect(!problems.contains { $0.contains("`voice` is unreachable") })
    }

    @Test("an experiment route records the arm and sends to its provider, then to the fallbacks")
    func experimentRoute() async throws {
        let alpha = ScriptedProvider(id: "alpha")
        let beta = ScriptedProvider(id: "beta")
        let table = RoutingTable(
            defaultOrder: ["alpha"],
            rules: [
                Route(name: "ab-route", channels: [.sms], target: .experiment("ab"), fallbacks: ["alpha", "beta"])
            ],
            experiments: ["ab": Self.experiment((50, 50))])
        let h = try ServiceHarness([alpha, beta], table: table)
        var arms: [String: Int] = [:]
        for number in Self.numbers(200) {
            let record = try await h.service.start(try .sms(number))
            let expected = Self.experiment((50, 50)).assign(number)!
            #expect(record.experimentArm == expected.name)
            #expect(record.experiment == "ab")
            #expect(record.route == "ab-route")
            #expect(record.providerID == expected.providerID)
            arms[expected.name, default: 0] += 1
        }
        #expect(arms["a"]! > 60 && arms["b"]! > 60)
        #expect(alpha.callCount(.start) + beta.callCount(.start) == 200, "one call per start")
    }

    @Test("a start the experiment assigned but no vendor accepted still counts in its arm")
    func failedStartCounts() async throws {
        let alpha = ScriptedProvider(id: "alpha")
        let beta = ScriptedProvider(id: "beta")
        alpha.setFallbackStart(.fail(GatewayError(.providerUnavailable, "down")))
        let experiment = Experiment(
            name: "ab", arms: [.init(name: "a", providerID: "alpha", weight: 1, isControl: true)])
        let table = RoutingTable(
            defaultOrder: ["beta"], rules: [Route(name: "r", target: .experiment("ab"))],
            experiments: ["ab": experiment])
        let h = try ServiceHarness([alpha, beta], table: table, breakers: .init(consecutiveFailures: 1_000))
        for number in Self.numbers(3) {
            await expectAsyncGatewayError(.providerUnavailable) { try await h.service.start(try .sms(number)) }
        }
        let records = try await h.store.records(experiment: "ab", from: nil, to: nil)
        #expect(records.count == 3)
        #expect(records.allSatisfy { $0.status == .failed && $0.experimentArm == "a" && $0.sends == 0 })
        #expect(records.first?.failovers == ["alpha:provider_unavailable"])
        let report = ExperimentReport.build(experiment: experiment, records: records, prices: PriceTable())
        #expect(report.arms.first?.starts == 3)
        #expect(report.arms.first?.approvals == 0)
        #expect(report.arms.first?.errors == ["provider_unavailable": 3, "start_failed": 3])
    }

    @Test("an ambiguous timeout is failed over only when the route says so")
    func failoverOnTimeout() async throws {
        for allowed in [false, true] {
            let alpha = ScriptedProvider(id: "alpha")
            let beta = ScriptedProvider(id: "beta")
            alpha.scriptStart(.fail(GatewayError(.providerTimeout, "read timeout", sendMayHaveHappened: true)))
            let table = RoutingTable(
                defaultOrder: ["alpha"],
                rules: [Route(name: "r", target: .providers(["alpha", "beta"]), failoverOnTimeout: allowed)])
            let h = try ServiceHarness([alpha, beta], table: table)
            if allowed {
                let record = try await h.service.start(try .sms())
                #expect(record.providerID == "beta")
                #expect(record.failovers == ["alpha:provider_timeout"])
            } else {
                await expectAsyncGatewayError(.providerTimeout) { try await h.service.start(try .sms()) }
                #expect(beta.callCount(.start) == 0)
            }
        }
    }

    // MARK: breakers

    @Test("breaker: consecutive failures open it, the cooldown half-opens it, a probe closes or reopens it")
    func breakerStateMachine() {
        let clock = ManualClock()
        let breakers = CircuitBreakers(
            settings: .init(
                consecutiveFailures: 3, failureRate: 1, window: 60, minimumRequests: 100, cooldown: 30,
                maximumCooldown: 100),
            clock: clock)
        for _ in 0..<2 { breakers.record("alpha", country: "GB", failure: true) }
        #expect(breakers.state("alpha", country: "GB") == .closed)
        breakers.record("alpha", country: "GB", failure: true)
        #expect(breakers.state("alpha", country: "GB") == .open)
        #expect(!breakers.allow("alpha", country: "GB"))
        #expect(breakers.allow("alpha", country: "US"), "per country")
        #expect(breakers.allow("beta", country: "GB"), "per provider")
        clock.advance(by: 30)
        #expect(breakers.allow("alpha", country: "GB"), "the half-open probe")
        #expect(breakers.state("alpha", country: "GB") == .halfOpen)
        #expect(!breakers.allow("alpha", country: "GB"), "one probe at a time")
        breakers.abandon("alpha", country: "GB")
        #expect(breakers.allow("alpha", country: "GB"), "a probe given back is taken again")
        breakers.abandon("beta", country: "GB")
        #expect(breakers.allow("beta", country: "GB"), "giving back where no breaker stands changes nothing")
        breakers.record("alpha", country: "GB", failure: true)
        #expect(breakers.state("alpha", country: "GB") == .open)
        clock.advance(by: 59)
        #expect(!breakers.allow("alpha", country: "GB"), "the cooldown doubled to 60 s")
        clock.advance(by: 1)
        #expect(breakers.allow("alpha", country: "GB"))
        breakers.record("alpha", country: "GB", failure: false)
        #expect(breakers.state("alpha", country: "GB") == .closed)
        #expect(breakers.allow("alpha", country: "GB"))
        // After closing, the cooldown is back to 30 s.
        for _ in 0..<3 { breakers.record("alpha", country: "GB", failure: true) }
        clock.advance(by: 30)
        #expect(breakers.allow("alpha", country: "GB"))
    }

    @Test("breaker: a failure rate over the window opens it; old outcomes leave the window")
    func breakerFailureRate() {
        let clock = ManualClock()
        let breakers = CircuitBreakers(
            settings: .init(consecutiveFailures: 100, failureRate: 0.5, window: 60, minimumRequests: 10, cooldown: 30),
            clock: clock)
        for index in 0..<9 { breakers.record("alpha", country: nil, failure: index % 2 == 0) }
        #expect(breakers.state("alpha", country: nil) == .closed, "fewer than min_requests")
        breakers.record("alpha", country: nil, failure: true)
        #expect(breakers.state("alpha", country: nil) == .open, "6 of 10 failed")
        let other = CircuitBreakers(
            settings: .init(consecutiveFailures: 100, failureRate: 0.5, window: 60, minimumRequests: 4), clock: clock)
        for _ in 0..<3 { other.record("beta", country: nil, failure: true) }
        clock.advance(by: 61)
        other.record("beta", country: nil, failure: false)
        other.record("beta", country: nil, failure: true)
        #expect(other.state("beta", country: nil) == .closed, "the old failures left the window")
    }

    @Test("breaker: Retry-After keeps it open at least that long")
    func breakerRetryAfter() {
        let clock = ManualClock()
        let breakers = CircuitBreakers(settings: .init(cooldown: 30), clock: clock)
        breakers.record("alpha", country: "GB", failure: true, retryAfter: 120)
        #expect(breakers.state("alpha", country: "GB") == .open)
        clock.advance(by: 119)
        #expect(!breakers.allow("alpha", country: "GB"))
        clock.advance(by: 1)
        #expect(breakers.allow("alpha", country: "GB"))
    }

    @Test("an open breaker skips its provider, the skip is recorded, and the next candidate sends")
    func breakerInTheService() async throws {
        let alpha = ScriptedProvider(id: "alpha")
        let beta = ScriptedProvider(id: "beta")
        alpha.setFallbackStart(.fail(GatewayError(.providerUnavailable, "down")))
        let h = try ServiceHarness([alpha, beta], breakers: .init(consecutiveFailures: 3, cooldown: 30))
        for _ in 0..<3 { _ = try await h.service.start(try .sms()) }
        #expect(alpha.callCount(.start) == 3)
        let record = try await h.service.start(try .sms())
        #expect(alpha.callCount(.start) == 3, "skipped while open")
        #expect(record.providerID == "beta")
        let started = try #require(try await h.events(record.id, .started).first)
        #expect(started.detail["skipped"] == "alpha:breaker_open")
        #expect(h.service.breakers.statuses.first?.state == .open)
        // Caller errors do not count against a provider.
        let gamma = ScriptedProvider(id: "gamma")
        gamma.setFallbackStart(.fail(GatewayError(.invalidPhoneNumber, "bad")))
        let g = try ServiceHarness([gamma], breakers: .init(consecutiveFailures: 2))
        for _ in 0..<3 { _ = try? await g.service.start(try .sms()) }
        #expect(gamma.callCount(.start) == 3)
    }

    @Test("a half-open probe that never reached the vendor is given back: the next start probes")
    func abandonedProbe() async throws {
        let alpha = ScriptedProvider(id: "alpha")
        alpha.setFallbackStart(.fail(GatewayError(.providerUnavailable, "down")))
        let h = try ServiceHarness([alpha], breakers: .init(consecutiveFailures: 1, cooldown: 30))
        await expectAsyncGatewayError(.providerUnavailable) { try await h.service.start(try .sms()) }
        #expect(h.service.breakers.state("alpha", country: "US") == .open)
        h.clock.advance(by: 30)
        // A start whose claim another request holds takes the probe, then stops before the vendor call:
        // recording its progress finds the claim not its own.
        let key = IdempotencyKey(scope: "key_test", key: "held")
        #expect(
            try await h.store.claimIdempotencyKey(
                key, fingerprint: "f", token: "other", owner: nil, at: h.clock.now, lease: 60, deadOwner: nil)
                == .claimed)
        await expectAsyncGatewayError(.idempotencyConflict) {
            try await h.service.start(try .sms(), idempotency: IdempotentStart(key: key))
        }
        #expect(alpha.callCount(.start) == 1, "the stopped start called nobody")
        #expect(h.service.breakers.wouldAllow("alpha", country: "US"), "the probe was given back")
        alpha.setFallbackStart(nil)
        let record = try await h.service.start(try .sms())
        #expect(record.providerID == "alpha")
        #expect(alpha.callCount(.start) == 2)
        #expect(h.service.breakers.state("alpha", country: "US") == .closed, "the probe closed it")
    }

    @Test("when every candidate's breaker is open the answer is no_provider_available")
    func allBreakersOpen() async throws {
        let alpha = ScriptedProvider(id: "alpha")
        alpha.setFallbackStart(.fail(GatewayError(.providerUnavailable, "down")))
        let h = try ServiceHarness([alpha], breakers: .init(consecutiveFailures: 1))
        await expectAsyncGatewayError(.providerUnavailable) { try await h.service.start(try .sms()) }
        await expectAsyncGatewayError(.noProviderAvailable) { try await h.service.start(try .sms()) }
        #expect(alpha.callCount(.start) == 1)
    }

    // MARK: test numbers

    @Test("a test number never reaches a vendor, says so, and takes its fixed code")
    func testNumbers() async throws {
        let alpha = ScriptedProvider(id: "alpha")
        let h = try ServiceHarness([alpha], policy: VerificationPolicy(testNumbers: ["+15005550006": "424242"]))
        let record = try await h.service.start(try .sms("+15005550006"))
        #expect(record.isTestNumber)
        #expect(record.providerID == "test_numbers")
        #expect(alpha.calls.isEmpty)
        await expectAsyncGatewayError(.incorrectCode) { try await h.check(record.id, "000000") }
        let resent = try await h.service.resend(id: record.id)
        #expect(record.sends == 0 && resent.sends == 0, "nothing was sent")
        let outcome = try await h.check(record.id, "424242")
        #expect(outcome.record.status == .approved)
        #expect(outcome.record.attempts == 2)
        #expect(alpha.calls.isEmpty)
        let dry = try await h.service.dryRun(try .sms("+15005550006"))
        #expect(dry.isTestNumber)
    }

    @Test("dry-run names the provider and why, and sends nothing")
    func dryRun() async throws {
        let alpha = ScriptedProvider(id: "alpha")
        let beta = ScriptedProvider(id: "beta")
        let h = try ServiceHarness([alpha, beta], breakers: .init(consecutiveFailures: 1))
        h.service.breakers.record("alpha", country: "US", failure: true)
        let dry = try await h.service.dryRun(try .sms())
        #expect(dry.route == "default")
        #expect(dry.country == "US")
        #expect(dry.provider == "beta")
        #expect(dry.candidates.map(\.skipReason) == ["breaker_open", nil])
        #expect(alpha.calls.isEmpty && beta.calls.isEmpty)
        #expect(h.service.breakers.state("alpha", country: "US") == .open, "a dry-run takes no probe")
    }
}

@Suite("Experiment statistics against known values")
struct StatisticsTests {
    @Test("normal distribution and its inverse")
    func normal() {
        #expect(abs(Statistics.normalCDF(1.96) - 0.9750021048517796) < 1e-12)
        #expect(abs(Statistics.normalQuantile(0.975) - 1.9599639845400536) < 1e-9)
        #expect(abs(Statistics.normalQuantile(0.8) - 0.8416212335729144) < 1e-9)
        #expect(abs(Statistics.normalQuantile(0.001) + 3.090232306167813) < 1e-9)
        #expect(Statistics.normalQuantile(0) == -.infinity && Statistics.normalQuantile(1) == .infinity)
        #expect(Statistics.normalQuantile(.nan).isNaN)
    }

    @Test("Wilson interval")
    func wilson() throws {
        let half = try #require(Statistics.wilsonInterval(successes: 50, trials: 100))
        #expect(abs(half.low - 0.4038315303659957) < 1e-9 && abs(half.high - 0.5961684696340044) < 1e-9)
        let none = try #require(Statistics.wilsonInterval(successes: 0, trials: 10))
        #expect(none.low < 1e-12 && abs(none.high - 0.27753279986288915) < 1e-9)
        #expect(Statistics.wilsonInterval(successes: 0, trials: 0) == nil)
    }

    @Test("two-proportion z-test")
    func zTest() throws {
        let test = try #require(
            Statistics.twoProportionTest(successesA: 120, trialsA: 1000, successesB: 150, trialsB: 1000))
        #expect(abs(test.z - 1.963049807622355) < 1e-9)
        #expect(abs(test.pValue - 0.04964038686536881) < 1e-9)
        #expect(Statistics.twoProportionTest(successesA: 5, trialsA: 5, successesB: 5, trialsB: 5)?.pValue == 1)
    }

    @Test("sample size per arm and percentiles")
    func sampleSize() {
        #expect(Statistics.sampleSizePerArm(baseline: 0.5, effect: 0.05) == 1565)
        #expect(Statistics.sampleSizePerArm(baseline: 0.85, effect: -0.05) == 906)
        #expect(Statistics.percentile([4, 1, 3, 2], 0.5) == 2.5)
        #expect(Statistics.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9) == 9.1)
        #expect(Statistics.percentile([], 0.5) == nil)
    }

    @Test("the report counts per arm, converts, prices and tests against control")
    func report() throws {
        let experiment = RoutingTests.experiment((50, 50))
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var records: [VerificationRecord] = []
        func add(_ arm: String, _ provider: String, approved: Bool, seconds: Double, failover: Bool = false) throws {
            var record = VerificationRecord(
                id: VerificationService.newID(), destination: .phone(try PhoneNumber(parsing: "+447400123456")),
                channel: .sms, providerID: provider, providerReference: nil, status: approved ? .approved : .expired,
                maxAttempts: 5, createdAt: start, updatedAt: start.addingTimeInterval(seconds), expiresAt: start,
                experiment: "ab", experimentArm: arm)
            if failover { record.failovers = ["beta:provider_unavailable"] }
            records.append(record)
        }
        for index in 0..<1000 { try add("a", "alpha", approved: index < 120, seconds: Double(index)) }
        for index in 0..<1000 { try add("b", "beta", approved: index < 150, seconds: 10, failover: index == 0) }
        var prices = PriceTable()
        prices.set(0.05, provider: "alpha", country: nil)
        prices.set(0.02, provider: "beta", country: "GB")
        let report = ExperimentReport.build(experiment: experiment, records: records, prices: prices)
        let a = try #require(report.arms.first { $0.name == "a" })
        let b = try #require(report.arms.first { $0.name == "b" })
        #expect(a.starts == 1000 && a.approvals == 120 && b.approvals == 150)
        #expect(abs((b.pValue ?? 0) - 0.04964038686536881) < 1e-9)
        #expect(a.pValue == nil)
        #expect(abs((a.cost ?? 0) - 50) < 1e-9 && abs((b.cost ?? 0) - 20) < 1e-9)
        #expect(a.timeToApproveP50 == 59.5)
        #expect(b.failovers == 1 && b.errors["provider_unavailable"] == 1 && b.errors["expired"] == 850)
        let gbOnly = ExperimentReport.build(experiment: experiment, records: records, prices: prices, country: "US")
        #expect(gbOnly.arms.allSatisfy { $0.starts == 0 })
    }
}
