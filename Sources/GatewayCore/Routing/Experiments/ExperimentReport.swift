import Foundation

/// Price per verification started, by provider and country, for the experiment report's cost.
public struct PriceTable: Sendable, Equatable {
    private var prices: [String: [String: Double]] = [:]

    /// An empty table: every price unknown.
    public init() {}

    /// Sets a provider's price for a country, or its default when `country` is nil.
    public mutating func set(_ price: Double, provider: String, country: String?) {
        prices[provider, default: [:]][country ?? "*"] = price
    }

    /// The provider's price for `country`, or its default when it has none there; `nil` when neither is set.
    public func price(provider: String, country: String?) -> Double? {
        guard let table = prices[provider] else { return nil }
        return country.flatMap { table[$0] } ?? table["*"]
    }
}

/// Per-arm results of an experiment, computed from the stored verifications (docs/design.md §6).
public struct ExperimentReport: Sendable {
    /// One arm's results.
    public struct Arm: Sendable {
        /// The arm's name.
        public var name: String
        /// The provider the arm sends to.
        public var providerID: String
        /// Whether the arm is the control.
        public var isControl: Bool
        /// The arm's configured weight.
        public var weight: Int
        /// Verifications assigned to the arm, pending and failed ones included.
        public var starts: Int
        /// The approved ones.
        public var approvals: Int
        /// Approvals per start; `nil` without starts.
        public var conversion: Double?
        /// The 95% Wilson interval of ``conversion``; `nil` without starts.
        public var conversionInterval: (low: Double, high: Double)?
        /// The median seconds from a start to its record's last update, over approved verifications; `nil` without
        /// approvals.
        public var timeToApproveP50: Double?
        /// The 90th percentile of the same times.
        public var timeToApproveP90: Double?
        /// Starts on which the arm's provider failed and a fallback sent instead.
        public var failovers: Int
        /// Verifications that ended without approval, by final status, and failed provider calls, by code.
        public var errors: [String: Int]
        /// Price of every start, by the provider that actually sent; nil when a price is missing.
        public var cost: Double?
        /// ``cost`` per approval; `nil` without a cost or an approval.
        public var costPerApproval: Double?
        /// Against the control arm (nil for the control itself).
        public var zScore: Double?
        /// The two-sided p-value of the test that gives ``zScore``; `nil` for the control.
        public var pValue: Double?
        /// Users per arm still needed to detect ``minimumEffect`` against the control's conversion.
        public var sampleSizeNeeded: Int?
    }

    /// The experiment's name.
    public var experiment: String
    /// The earliest start the records were read from, if the caller limited it.
    public var from: Date?
    /// The latest start the records were read to, if the caller limited it.
    public var to: Date?
    /// The region the report is narrowed to, if any.
    public var country: String?
    /// The absolute difference in conversion ``Arm/sampleSizeNeeded`` is computed for (0.05: five points).
    public var minimumEffect: Double
    /// The arms, in configured order.
    public var arms: [Arm]

    /// Builds the report. Verifications still pending count as starts that have not (yet) converted.
    public static func build(
        experiment: Experiment, records: [VerificationRecord], prices: PriceTable, from: Date? = nil,
        to: Date? = nil, country: String? = nil, minimumEffect: Double = 0.05
    ) -> ExperimentReport {
        let relevant = records.filter { record in
            record.experiment == experiment.name
                && (country == nil || record.destination.phoneNumber?.region == country)
        }
        var arms: [Arm] = experiment.arms.map { arm in
            let mine = relevant.filter { $0.experimentArm == arm.name }
            let approved = mine.filter { $0.status == .approved }
            var errors: [String: Int] = [:]
            for record in mine {
                for failure in record.failovers {
                    let code = failure.split(separator: ":").last.map(String.init) ?? failure
                    errors[code, default: 0] += 1
                }
                if record.status == .failed {
                    // Its failovers already name the vendor errors; count the start itself once more.
                    errors["start_failed", default: 0] += 1
                } else if record.status != .approved && record.status != .pending {
                    errors[record.status.rawValue, default: 0] += 1
                }
            }
            // Nil as soon as one start has no price: a partial sum would look like a real cost.
            let priced = mine.filter { $0.status != .failed }.map { $0.cost(prices) }
            let cost: Double? = priced.contains(nil) ? nil : priced.reduce(0) { $0 + ($1 ?? 0) }
            let times = approved.map { $0.updatedAt.timeIntervalSince($0.createdAt) }
            return Arm(
                name: arm.name, providerID: arm.providerID, isControl: arm.isControl, weight: arm.weight,
                starts: mine.count, approvals: approved.count,
                conversion: mine.isEmpty ? nil : Double(approved.count) / Double(mine.count),
                conversionInterval: Statistics.wilsonInterval(successes: approved.count, trials: mine.count),
                timeToApproveP50: Statistics.percentile(times, 0.5),
                timeToApproveP90: Statistics.percentile(times, 0.9),
                failovers: mine.filter { !$0.failovers.isEmpty && $0.status != .failed }.count, errors: errors,
                cost: cost,
                costPerApproval: cost.flatMap { approved.isEmpty ? nil : $0 / Double(approved.count) })
        }
        if let control = arms.first(where: \.isControl) {
            for index in arms.indices where !arms[index].isControl {
                if let test = Statistics.twoProportionTest(
                    successesA: control.approvals, trialsA: control.starts, successesB: arms[index].approvals,
                    trialsB: arms[index].starts)
                {
                    arms[index].zScore = test.z
                    arms[index].pValue = test.pValue
                }
                if let baseline = control.conversion {
                    arms[index].sampleSizeNeeded =
                        Statistics.sampleSizePerArm(baseline: baseline, effect: -minimumEffect)
                        ?? Statistics.sampleSizePerArm(baseline: baseline, effect: minimumEffect)
                }
            }
        }
        return ExperimentReport(
            experiment: experiment.name, from: from, to: to, country: country, minimumEffect: minimumEffect, arms: arms)
    }
}
