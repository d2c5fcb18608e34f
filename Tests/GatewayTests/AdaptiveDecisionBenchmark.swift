import Foundation
import Testing

@testable import gateway

/// Issue 35's cost figure is measured by `gateway bench-adaptive` on a release build
/// (`scripts/bench/adaptive_decision.sh`, BENCHMARKS.md, "Adaptive routing"). This runs the same measurement on a
/// small store, so the tool itself is checked: it seeds, decides (the sticky rule answering for the open
/// verifications it seeded), and the bandit prefers the provider its evidence favours.
@Suite("Adaptive decision benchmark")
struct AdaptiveDecisionBenchmark {
    @Test("bench-adaptive measures real decisions on a seeded store")
    func smallRun() async throws {
        let result = try await AdaptiveDecisionBench.run(stored: 3000, decisions: 2000)
        #expect(result.decisions == 2000)
        #expect(result.chosen.values.reduce(0, +) == 2000)
        // One seeded number in a hundred has an open verification; the decisions hit about 20 of them.
        #expect(result.sticky > 0)
        #expect(result.sticky < 200)
        #expect(result.chosen["twilio", default: 0] > result.chosen["vonage", default: 0])
        #expect(result.cpuPerDecision > 0)
        #expect(result.line.hasPrefix("RESULT stored=3000 "))
    }
}
