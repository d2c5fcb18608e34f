import Foundation
import Synchronization

/// The evidence of one provider in one context of an adaptive route, for the verifications started in one
/// time bucket (``AdaptivePolicy/bucketSeconds``): what the store keeps, one row each.
public struct AdaptiveCell: Sendable, Equatable {
    /// The adaptive route's name.
    public var route: String
    /// The context the starts were learned in (``AdaptivePolicy/context(country:channel:)``, `GB/sms`).
    public var context: String
    /// The provider that accepted the starts.
    public var providerID: String
    /// Unix seconds, a multiple of ``bucketSeconds``.
    public var bucketStart: Int
    /// The bucket's length in seconds, the policy's ``AdaptivePolicy/bucketSeconds`` when it was counted.
    public var bucketSeconds: Int
    /// Starts the provider accepted in the bucket.
    public var starts: Int
    /// Verifications of those starts that were approved.
    public var approvals: Int
    /// Verifications that ended without an approval, as the gateway saw them end (denied, canceled, too many
    /// wrong codes, failed, blocked, expired when read).
    public var failures: Int

    /// A cell of the given bucket; the counts default to zero (an addition sets only the ones it adds).
    public init(
        route: String, context: String, providerID: String, bucketStart: Int, bucketSeconds: Int, starts: Int = 0,
        approvals: Int = 0, failures: Int = 0
    ) {
        self.route = route
        self.context = context
        self.providerID = providerID
        self.bucketStart = bucketStart
        self.bucketSeconds = bucketSeconds
        self.starts = starts
        self.approvals = approvals
        self.failures = failures
    }

    /// Whether `other` counts the same verifications (same route, context, provider and bucket).
    public func sameBucket(as other: AdaptiveCell) -> Bool {
        route == other.route && context == other.context && providerID == other.providerID
            && bucketStart == other.bucketStart && bucketSeconds == other.bucketSeconds
    }
}

/// A Beta posterior of a provider's approval rate in a context, from decayed evidence.
public struct AdaptivePosterior: Sendable, Equatable {
    /// 1 + the decayed approvals.
    public var alpha: Double
    /// 1 + the decayed failures.
    public var beta: Double
    /// Raw counts over the buckets read (no decay): starts, approvals, and the starts not yet known either way.
    public var starts: Int
    /// Raw approvals over the buckets read.
    public var approvals: Int
    /// Raw failures over the buckets read, every unapproved start of a settled bucket among them.
    public var failures: Int
    /// Raw starts not yet known either way.
    public var pending: Int
    /// The decayed starts (each weighted as its cell's outcomes are): what the exploration floor compares
    /// between providers to find one below `min_share` of the context's recent starts.
    public var recentStarts: Double

    /// A posterior from its parts; the defaults are the uniform prior Beta(1, 1) with no evidence.
    public init(
        alpha: Double = 1, beta: Double = 1, starts: Int = 0, approvals: Int = 0, failures: Int = 0, pending: Int = 0,
        recentStarts: Double = 0
    ) {
        self.alpha = alpha
        self.beta = beta
        self.starts = starts
        self.approvals = approvals
        self.failures = failures
        self.pending = pending
        self.recentStarts = recentStarts
    }

    /// The posterior mean, `alpha / (alpha + beta)`: the believed approval rate.
    public var mean: Double { alpha / (alpha + beta) }

    /// The central 95% interval of the posterior (its 2.5% and 97.5% quantiles).
    public var interval95: (low: Double, high: Double) {
        (AdaptiveModel.betaQuantile(0.025, alpha, beta), AdaptiveModel.betaQuantile(0.975, alpha, beta))
    }
}

/// Where an adaptive start goes and why.
public struct AdaptiveChoice: Sendable, Equatable {
    /// Why the provider was put first.
    public enum Reason: String, Sendable, Equatable {
        /// The highest Thompson sample (divided by the price for `conversions_per_cost`).
        case sampled
        /// The exploration floor (`min_share`) sent the start to a provider under its share of recent starts.
        case floor
        /// An open verification to the same destination went to this provider.
        case sticky
        /// Only one provider was eligible.
        case only
    }

    /// The provider the start goes to first.
    public var providerID: String
    /// Why it was chosen.
    public var reason: Reason
    /// The eligible providers, the chosen one first, then by their score.
    public var order: [String]
    /// Each eligible provider's sampled approval rate, by provider (empty for `sticky` and `only`).
    public var samples: [String: Double]
    /// What the timeline and the dry-run show: `sampled twilio 0.81 vs sinch 0.64, vonage 0.55`.
    public var explanation: String
}

/// The bandit: Thompson sampling over Beta posteriors, with an exploration floor (docs/routing.md §3a).
/// Pure functions of the evidence and a random source, so tests can replay them.
public enum AdaptiveModel {
    /// The posterior of one provider from its cells at `now`.
    ///
    /// A cell weighs `0.5^(age / window)`, its age taken from the middle of its bucket. Its approvals are
    /// successes. Once the bucket's last start is older than `codeValidity` (the code's validity, or the
    /// route's shorter `settle_after`), every start not approved is a failure (`starts − approvals`): that is
    /// how an expiry nobody read is counted, without a sweeper; a late approval moves one back. Before that,
    /// the failures seen ending count, and so does each verification still pending, as the fraction of a
    /// failure that its age is of `codeValidity`: an approval counts the moment it happens, so leaving the
    /// pending ones out until they settle would flatter a provider whose failures end late (a vendor that
    /// refuses an early cancel), and counting them as failures at once would punish every provider for the
    /// codes still being typed.
    ///
    /// The `memory` newest outcomes of the provider count in full whatever their age (within the horizon):
    /// the decay is there so that a change is noticed, and a provider that gets few starts (the floor's
    /// share) would otherwise forget everything it showed and look as uncertain as a new one, drawing starts
    /// it has already shown it does not deserve. Its newest outcomes are also the first to show a change.
    public static func posterior(
        _ cells: [AdaptiveCell], now: Date, window: TimeInterval, codeValidity: TimeInterval,
        memory: Int = AdaptivePolicy.memory
    ) -> AdaptivePosterior {
        posterior(
            newestFirst: cells.sorted(by: { $0.bucketStart > $1.bucketStart }), now: now, window: window,
            codeValidity: codeValidity, memory: memory)
    }

    /// ``posterior(_:now:window:codeValidity:memory:)`` of cells already in order, newest bucket first (how
    /// ``AdaptiveRouter`` keeps them), without sorting or copying them.
    static func posterior(
        newestFirst cells: [AdaptiveCell], now: Date, window: TimeInterval, codeValidity: TimeInterval,
        memory: Int = AdaptivePolicy.memory
    ) -> AdaptivePosterior {
        var posterior = AdaptivePosterior()
        let nowSeconds = now.timeIntervalSince1970
        var remembered = 0.0
        for cell in cells {
            let middle = Double(cell.bucketStart) + Double(cell.bucketSeconds) / 2
            let age = max(0, nowSeconds - middle)
            let decay = pow(0.5, age / window)
            let settled = Double(cell.bucketStart + cell.bucketSeconds) + codeValidity <= nowSeconds
            let approvals = max(0, cell.approvals)
            let failures = settled ? max(0, cell.starts - approvals) : max(0, cell.failures)
            let pending = max(0, cell.starts - approvals - failures)
            let leaning = codeValidity > 0 ? min(1, age / codeValidity) : 1
            let outcomes = Double(approvals + failures) + Double(pending) * leaning
            let weight = remembered < Double(memory) ? 1 : decay
            remembered += outcomes
            posterior.alpha += weight * Double(approvals)
            posterior.beta += weight * (Double(failures) + Double(pending) * leaning)
            posterior.recentStarts += decay * Double(max(0, cell.starts))
            posterior.starts += cell.starts
            posterior.approvals += approvals
            posterior.failures += failures
            posterior.pending += pending
        }
        return posterior
    }

    /// The score a provider is ranked by: its sampled rate, divided by its price for `conversions_per_cost`.
    static func score(_ sample: Double, price: Double?, objective: AdaptivePolicy.Objective) -> Double {
        guard objective.isPerCost, let price else { return sample }
        return sample / max(price, 1e-9)
    }

    /// The prices used for `conversions_per_cost`: a provider without one is taken as the most expensive of
    /// the others (an unknown price never wins on price); none known: all alike.
    static func effectivePrices(_ eligible: [String], _ prices: [String: Double]) -> [String: Double] {
        let highest = eligible.compactMap { prices[$0] }.max() ?? 1
        return Dictionary(uniqueKeysWithValues: eligible.map { ($0, prices[$0] ?? highest) })
    }

    /// Chooses among `eligible` (at least one): the provider below `minShare` of the context's recent starts
    /// if there is one (the floor, ``belowFloor(eligible:posteriors:minShare:)``), else the one with the
    /// highest Thompson score. `prices` are the providers'
    /// prices for the destination's country, used by `conversions_per_cost`.
    public static func choose(
        eligible: [String], posteriors: [String: AdaptivePosterior], prices: [String: Double],
        objective: AdaptivePolicy.Objective, minShare: Double, random: AdaptiveRandom
    ) -> AdaptiveChoice {
        precondition(!eligible.isEmpty, "an adaptive choice needs a provider")
        guard eligible.count > 1 else {
            return AdaptiveChoice(
                providerID: eligible[0], reason: .only, order: eligible, samples: [:],
                explanation: "only \(eligible[0]) is eligible")
        }
        let priced = effectivePrices(eligible, prices)
        var samples: [String: Double] = [:]
        var scores: [String: Double] = [:]
        for id in eligible {
            let posterior = posteriors[id] ?? AdaptivePosterior()
            let sample = random.beta(posterior.alpha, posterior.beta)
            samples[id] = sample
            scores[id] = score(sample, price: priced[id], objective: objective)
        }
        // Ties (rare with continuous samples) keep the configured order.
        let ranked = eligible.enumerated().sorted {
            (scores[$0.element]!, -$0.offset) > (scores[$1.element]!, -$1.offset)
        }.map(\.element)
        var chosen = ranked[0]
        var reason = AdaptiveChoice.Reason.sampled
        if let short = belowFloor(eligible: eligible, posteriors: posteriors, minShare: minShare) {
            chosen = short
            reason = .floor
        }
        let order = [chosen] + ranked.filter { $0 != chosen }
        func describe(_ id: String) -> String {
            let sample = twoDecimals(samples[id]!)
            guard objective.isPerCost else { return "\(id) \(sample)" }
            return "\(id) \(sample)/\(String(format: "%.4g", priced[id]!))"
        }
        let others = ranked.filter { $0 != chosen }.map(describe).joined(separator: ", ")
        let sampled = "sampled \(describe(chosen)) vs \(others)"
        let explanation =
            reason == .floor
            ? "exploration floor (min_share \(String(format: "%g", minShare))) raised \(chosen), under it in recent "
                + "starts; \(sampled)" : sampled
        return AdaptiveChoice(
            providerID: chosen, reason: reason, order: order, samples: samples, explanation: explanation)
    }

    /// `value` (a sampled rate, 0…1) with two decimals, for the explanation: `%.2f`'s text except that a value
    /// within a rounding error of a half hundredth (0.995) may round the other way. `String(format:)` cost
    /// more than the rest of the explanation together.
    static func twoDecimals(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return String(format: "%.2f", value) }
        let hundredths = Int((abs(value) * 100).rounded(.toNearestOrEven))
        let sign = value < 0 && hundredths > 0 ? "-" : ""
        let fraction = hundredths % 100
        return "\(sign)\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// The floor, applied only as needed: the eligible provider with the smallest share of the context's
    /// recent (decayed) starts, when that share is below `minShare`. Thompson sampling already sends an
    /// uncertain provider its share; the floor tops up only a provider the evidence has pushed below it.
    static func belowFloor(eligible: [String], posteriors: [String: AdaptivePosterior], minShare: Double) -> String? {
        guard minShare > 0, eligible.count > 1 else { return nil }
        let recent = eligible.map { ($0, posteriors[$0]?.recentStarts ?? 0) }
        let total = recent.reduce(0) { $0 + $1.1 }
        guard total > 0, let lowest = recent.min(by: { $0.1 < $1.1 }), lowest.1 < minShare * total else { return nil }
        return lowest.0
    }

    /// Each eligible provider's expected share of starts under ``choose``: its chance of the highest score,
    /// estimated from `draws` Thompson draws, raised to `minShare` when below it (the floor), the others'
    /// chances scaled down to make room.
    public static func shares(
        eligible: [String], posteriors: [String: AdaptivePosterior], prices: [String: Double],
        objective: AdaptivePolicy.Objective, minShare: Double, draws: Int = 2000, random: AdaptiveRandom
    ) -> [String: Double] {
        guard eligible.count > 1 else { return Dictionary(uniqueKeysWithValues: eligible.map { ($0, 1.0) }) }
        let priced = effectivePrices(eligible, prices)
        var wins = Dictionary(uniqueKeysWithValues: eligible.map { ($0, 0) })
        for _ in 0..<draws {
            var best: (id: String, score: Double)?
            for id in eligible {
                let posterior = posteriors[id] ?? AdaptivePosterior()
                let value = score(random.beta(posterior.alpha, posterior.beta), price: priced[id], objective: objective)
                if value > best?.score ?? -.infinity { best = (id, value) }
            }
            wins[best!.id, default: 0] += 1
        }
        // The floor tops up the providers that Thompson sampling would send less than `minShare`; the others
        // share the rest in proportion to their chances.
        var shares = wins.mapValues { Double($0) / Double(draws) }
        var fixed: Set<String> = []
        while true {
            let short = shares.filter { !fixed.contains($0.key) && $0.value < minShare }.map(\.key)
            if short.isEmpty { break }
            fixed.formUnion(short)
            let rest = shares.filter { !fixed.contains($0.key) }
            let restTotal = rest.values.reduce(0, +)
            let left = 1 - minShare * Double(fixed.count)
            for id in fixed { shares[id] = minShare }
            for (id, value) in rest {
                shares[id] = restTotal > 0 ? value / restTotal * left : left / Double(rest.count)
            }
        }
        return shares
    }

    // MARK: - The Beta distribution

    /// The regularized incomplete beta function I_x(a, b) (continued fraction, Numerical Recipes' `betacf`).
    public static func regularizedBeta(_ x: Double, _ a: Double, _ b: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let logNorm: Double = lgamma(a + b) - lgamma(a) - lgamma(b)
        let logPowers: Double = a * log(x) + b * log(1 - x)
        let logFront = logNorm + logPowers
        if x < (a + 1) / (a + b + 2) {
            return exp(logFront) * continuedFraction(x, a, b) / a
        }
        return 1 - exp(logFront) * continuedFraction(1 - x, b, a) / b
    }

    private static func continuedFraction(_ x: Double, _ a: Double, _ b: Double) -> Double {
        let tiny = 1e-300
        var c = 1.0
        var d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        for m in 1...300 {
            let m = Double(m)
            let even: Double = (a + 2 * m - 1) * (a + 2 * m)
            var numerator: Double = m * (b - m) * x / even
            d = 1 + numerator * d
            if abs(d) < tiny { d = tiny }
            c = 1 + numerator / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            h *= d * c
            let odd: Double = (a + 2 * m) * (a + 2 * m + 1)
            numerator = -(a + m) * (a + b + m) * x / odd
            d = 1 + numerator * d
            if abs(d) < tiny { d = tiny }
            c = 1 + numerator / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let step = d * c
            h *= step
            if abs(step - 1) < 1e-14 { break }
        }
        return h
    }

    /// The `p` quantile of Beta(a, b), by bisection on ``regularizedBeta(_:_:_:)`` (to 1e-10).
    public static func betaQuantile(_ p: Double, _ a: Double, _ b: Double) -> Double {
        var low = 0.0
        var high = 1.0
        for _ in 0..<60 {
            let middle = (low + high) / 2
            if regularizedBeta(middle, a, b) < p { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }
}

/// The random source of the bandit: SplitMix64 behind a lock, seeded from the system's generator unless a
/// test gives a seed. A decision draws a handful of numbers; a system call for each would cost more than the
/// decision itself.
public final class AdaptiveRandom: Sendable {
    private let state: Mutex<UInt64>

    /// A generator seeded with `seed`, so a test replays the same draws, or from the system's generator when `nil`.
    public init(seed: UInt64? = nil) {
        var system = SystemRandomNumberGenerator()
        state = Mutex(seed ?? system.next())
    }

    /// A uniform number in [0, 1).
    public func unit() -> Double {
        let bits = state.withLock { state -> UInt64 in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        return Double(bits >> 11) * 0x1p-53
    }

    /// A standard normal number (Box–Muller).
    func normal() -> Double {
        let u1 = max(unit(), 1e-300)
        let u2 = unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }

    /// A Gamma(shape, 1) number (Marsaglia and Tsang; a shape below 1 boosted by `u^(1/shape)`).
    func gamma(_ shape: Double) -> Double {
        if shape < 1 { return gamma(shape + 1) * pow(max(unit(), 1e-300), 1 / shape) }
        let d = shape - 1.0 / 3
        let c = 1 / (9 * d).squareRoot()
        while true {
            var x: Double
            var v: Double
            repeat {
                x = normal()
                v = 1 + c * x
            } while v <= 0
            v = v * v * v
            let u = unit()
            if u < 1 - 0.0331 * x * x * x * x { return d * v }
            if log(max(u, 1e-300)) < 0.5 * x * x + d * (1 - v + log(v)) { return d * v }
        }
    }

    /// A Beta(a, b) number.
    public func beta(_ a: Double, _ b: Double) -> Double {
        let x = gamma(a)
        let y = gamma(b)
        return x + y > 0 ? x / (x + y) : 0.5
    }
}
