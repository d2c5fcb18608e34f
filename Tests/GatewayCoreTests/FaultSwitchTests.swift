import GatewayCore
import Testing

@Suite("FaultSwitch")
struct FaultSwitchTests {
    @Test("a new switch injects no fault")
    func startsClear() {
        let faults = FaultSwitch()
        #expect(faults.current == .none)
        #expect(faults.take() == .none)
    }

    @Test("faults without a count stay until changed")
    func persistentFaults() {
        let faults = FaultSwitch()
        let outage = FaultSwitch.Faults(serverErrorStatus: 503)
        faults.set(outage)
        for _ in 0..<5 { #expect(faults.take() == FaultSwitch.Fault(outcome: .serverError(503))) }
        #expect(faults.current == outage)
        faults.clear()
        #expect(faults.take() == .none)
    }

    @Test("the switches skip the handler; resets and malformed bodies from rates come after it")
    func whereFaultsHappen() {
        let cases: [(FaultSwitch.Faults, FaultSwitch.Fault.Outcome)] = [
            (.init(connectionReset: true), .reset(afterHandling: false)),
            (.init(malformedBody: true), .malformed(afterHandling: false)),
            (.init(errorRate: 1, errorStatus: 502), .serverError(502)),
            (.init(resetRate: 1), .reset(afterHandling: true)),
            (.init(malformedRate: 1), .malformed(afterHandling: true)),
        ]
        for (set, outcome) in cases {
            let faults = FaultSwitch()
            faults.set(set)
            #expect(faults.take().outcome == outcome, "\(set)")
        }
    }

    @Test("remaining counts down with each request and the faults clear after the last one")
    func remainingCountsDown() {
        let faults = FaultSwitch()
        faults.set(FaultSwitch.Faults(latencyMilliseconds: 10, connectionReset: true, remaining: 3))

        let first = faults.take()
        #expect(first.outcome == .reset(afterHandling: false))
        #expect(faults.current.remaining == 2)
        let second = faults.take()
        #expect(second.outcome == .reset(afterHandling: false))
        #expect(faults.current.remaining == 1)
        let third = faults.take()
        #expect(third.outcome == .reset(afterHandling: false))
        #expect(third.latencyMilliseconds == 10)
        #expect(faults.current == .none, "after the last affected request the switch is clear")
        #expect(faults.take() == .none)
    }

    @Test("remaining also bounds the requests that rates are drawn for")
    func remainingWithRates() {
        let faults = FaultSwitch()
        faults.set(FaultSwitch.Faults(errorRate: 1, remaining: 4))
        let outcomes = (0..<6).map { _ in faults.take().outcome }
        #expect(outcomes == Array(repeating: .serverError(503), count: 4) + [.none, .none])
    }

    @Test("a count of zero affects no request")
    func zeroRemaining() {
        let faults = FaultSwitch()
        faults.set(FaultSwitch.Faults(serverErrorStatus: 500, remaining: 0))
        #expect(faults.take() == .none, "`remaining: 0` means the next 0 requests are affected")
    }

    @Test("concurrent requests consume exactly the counted faults")
    func concurrentTakes() async {
        let faults = FaultSwitch()
        faults.set(FaultSwitch.Faults(serverErrorStatus: 502, remaining: 10))
        let affected = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { faults.take().outcome != .none } }
            var count = 0
            for await hit in group where hit { count += 1 }
            return count
        }
        #expect(affected == 10)
        #expect(faults.current == .none)
    }

    static let flaky = FaultSwitch.Faults(
        latencyMilliseconds: 20, latencyJitterMilliseconds: 80, errorRate: 0.3, resetRate: 0.1, malformedRate: 0.05,
        seed: 42)

    static func draws(_ set: FaultSwitch.Faults, count: Int) -> [FaultSwitch.Fault] {
        let faults = FaultSwitch()
        faults.set(set)
        return (0..<count).map { _ in faults.take() }
    }

    @Test("the same seed replays the same faults, setting them again starts over, another seed differs")
    func seedReplays() {
        let first = Self.draws(Self.flaky, count: 500)
        #expect(Self.draws(Self.flaky, count: 500) == first)

        let faults = FaultSwitch()
        faults.set(Self.flaky)
        _ = (0..<37).map { _ in faults.take() }
        faults.set(Self.flaky)
        #expect((0..<500).map { _ in faults.take() } == first, "a new PUT replays from the first request")

        var other = Self.flaky
        other.seed = 43
        #expect(Self.draws(other, count: 500) != first)
    }

    /// Whether `observed` of `count` Bernoulli(`p`) draws lies within `sigmas` standard deviations of the
    /// mean. With 20,000 draws and 5σ an honest generator misses with probability under 1e-6 per rate.
    static func withinTolerance(_ observed: Int, of count: Int, rate p: Double, sigmas: Double = 5) -> Bool {
        let mean = p * Double(count)
        let sigma = (Double(count) * p * (1 - p)).squareRoot()
        return abs(Double(observed) - mean) <= sigmas * sigma
    }

    @Test("each rate hits its share of requests, within five standard deviations over 20,000 draws")
    func ratesObserved() {
        let count = 20_000
        let draws = Self.draws(Self.flaky, count: count)
        let errors = draws.filter { $0.outcome == .serverError(503) }.count
        let resets = draws.filter { $0.outcome == .reset(afterHandling: true) }.count
        let malformed = draws.filter { $0.outcome == .malformed(afterHandling: true) }.count
        let clean = draws.filter { $0.outcome == .none }.count
        #expect(errors + resets + malformed + clean == count)
        #expect(Self.withinTolerance(errors, of: count, rate: 0.3), "errors: \(errors)")
        #expect(Self.withinTolerance(resets, of: count, rate: 0.1), "resets: \(resets)")
        #expect(Self.withinTolerance(malformed, of: count, rate: 0.05), "malformed: \(malformed)")
        #expect(Self.withinTolerance(clean, of: count, rate: 0.55), "clean: \(clean)")
    }

    @Test("the rates are spread over the sequence, not bunched: each quarter sees its share of errors")
    func ratesSpread() {
        let count = 20_000
        let draws = Self.draws(Self.flaky, count: count)
        for quarter in 0..<4 {
            let slice = draws[(quarter * count / 4)..<((quarter + 1) * count / 4)]
            let errors = slice.filter { $0.outcome == .serverError(503) }.count
            #expect(Self.withinTolerance(errors, of: slice.count, rate: 0.3), "quarter \(quarter): \(errors)")
        }
    }

    @Test("latency is the base plus a uniform draw up to the jitter, both ends reached")
    func latencyJitter() {
        let count = 20_000
        let latencies = Self.draws(Self.flaky, count: count).map(\.latencyMilliseconds)
        #expect(latencies.allSatisfy { (20...100).contains($0) })
        #expect(latencies.contains(20) && latencies.contains(100))
        // Uniform over the 81 whole values 20...100: mean 60, variance (81² − 1) / 12.
        let mean = Double(latencies.reduce(0, +)) / Double(count)
        let sigma = ((81.0 * 81.0 - 1) / 12 / Double(count)).squareRoot()
        #expect(abs(mean - 60) <= 5 * sigma, "mean latency \(mean)")
        #expect(Self.draws(.init(latencyMilliseconds: 7), count: 10).allSatisfy { $0.latencyMilliseconds == 7 })
    }

    @Test("a switch that hits every request wins over the rates")
    func switchesWinOverRates() {
        let draws = Self.draws(.init(serverErrorStatus: 500, errorRate: 0.2, resetRate: 0.5), count: 100)
        #expect(draws.allSatisfy { $0.outcome == .serverError(500) })
    }

    @Test(
        "faults that cannot be set name their problem",
        arguments: [
            (FaultSwitch.Faults(errorRate: 1.5), "`error_rate` must be a number from 0 to 1."),
            (FaultSwitch.Faults(resetRate: -0.1), "`reset_rate` must be a number from 0 to 1."),
            (FaultSwitch.Faults(malformedRate: .nan), "`malformed_rate` must be a number from 0 to 1."),
            (
                FaultSwitch.Faults(errorRate: 0.6, resetRate: 0.3, malformedRate: 0.2),
                "`error_rate`, `reset_rate` and `malformed_rate` must add up to at most 1."
            ),
            (FaultSwitch.Faults(errorStatus: 429), "`error_status` must be from 500 to 599."),
            (FaultSwitch.Faults(serverErrorStatus: 200), "`server_error_status` must be from 500 to 599."),
            (
                FaultSwitch.Faults(latencyMilliseconds: 50_000, latencyJitterMilliseconds: 10_001),
                "`latency_ms` and `latency_jitter_ms` must be at least 0 and add up to at most 60000."
            ),
            (
                FaultSwitch.Faults(latencyJitterMilliseconds: -1),
                "`latency_ms` and `latency_jitter_ms` must be at least 0 and add up to at most 60000."
            ),
            (FaultSwitch.Faults(seed: -1), "`seed` must be at least 0."),
        ])
    func problems(_ faults: FaultSwitch.Faults, _ problem: String) {
        #expect(faults.problems == [problem])
    }

    @Test("rates that add up to exactly 1 and the latency bound itself are accepted")
    func boundsAccepted() {
        #expect(FaultSwitch.Faults(errorRate: 0.3, resetRate: 0.6, malformedRate: 0.1).problems == [])
        #expect(FaultSwitch.Faults(latencyMilliseconds: 30_000, latencyJitterMilliseconds: 30_000).problems == [])
        #expect(Self.flaky.problems == [])
    }
}
