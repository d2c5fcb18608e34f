import Foundation

/// An adaptive route's settings: the providers a bandit chooses between, what it maximises, the context it
/// learns in, the share every healthy provider keeps, and how fast old evidence fades (docs/routing.md §3a).
///
/// ```yaml
/// adaptive:
///   providers: [twilio, sinch, vonage]
///   objective: conversions_per_cost   # or conversions, deliveries, deliveries_per_cost
///   per: [country, channel]
///   min_share: 0.05
///   window: 24h
/// ```
public struct AdaptivePolicy: Sendable, Equatable {
    /// What a start is assigned to maximise.
    public enum Objective: String, Sendable, Equatable, CaseIterable {
        /// The approval rate of verifications started at the provider.
        case conversions
        /// The approval rate divided by the provider's price for the destination country (`prices`).
        case conversionsPerCost = "conversions_per_cost"
        /// For providers that send the gateway's own codes: the rate at which a start's first message is
        /// delivered, by the vendors' receipts (an approval stands for a delivery when no receipt came first).
        case deliveries
        /// The delivery rate divided by the provider's price for the destination country.
        case deliveriesPerCost = "deliveries_per_cost"

        /// Whether a provider's score is its sampled rate over its price.
        public var isPerCost: Bool { self == .conversionsPerCost || self == .deliveriesPerCost }
        /// Whether the evidence is delivery receipts rather than approvals.
        public var countsDeliveries: Bool { self == .deliveries || self == .deliveriesPerCost }
    }

    /// A part of the context a decision is learned in.
    public enum Dimension: String, Sendable, Equatable, CaseIterable {
        case country
        case channel
    }

    /// The providers the bandit chooses between, in configured order (which breaks ties).
    public var providers: [String]
    /// What the bandit maximises.
    public var objective: Objective
    /// The context's parts, in the order of ``Dimension/allCases`` whatever order the file gives.
    public var dimensions: Set<Dimension>
    /// The share of starts each eligible provider keeps at least, whatever the evidence: the exploration
    /// that notices a provider's recovery.
    public var minShare: Double
    /// The half-life of the evidence, in seconds: an outcome this old counts half, twice as old a quarter.
    public var window: TimeInterval
    /// How long after a start an unapproved verification counts as a failure although its code is still
    /// valid (users who will type a code mostly do so within a minute or two); `nil`: when the code expires.
    /// A later approval still counts: the evidence is read, not rewritten.
    public var settleAfter: TimeInterval?

    /// A policy over `providers`, with the defaults of docs/routing.md: conversions per country and channel, a 5%
    /// floor, a one-day window and no `settle_after`.
    public init(
        providers: [String], objective: Objective = .conversions, dimensions: Set<Dimension> = [.country, .channel],
        minShare: Double = 0.05, window: TimeInterval = 86_400, settleAfter: TimeInterval? = nil
    ) {
        self.settleAfter = settleAfter
        self.providers = providers
        self.objective = objective
        self.dimensions = dimensions
        self.minShare = minShare
        self.window = window
    }

    /// The shortest window accepted: its buckets (``bucketSeconds``) are whole seconds.
    public static let minimumWindow: TimeInterval = 8

    /// Evidence is counted in buckets of this many seconds, by the time the verification started: an eighth
    /// of the window, so that the decay between a bucket's first and last start is under 9%.
    public var bucketSeconds: Int { max(1, Int(window / 8)) }

    /// A provider's newest outcomes that count in full whatever their age (``AdaptiveModel/posterior``).
    public static let memory = 20

    /// Buckets older than this many windows are neither read nor kept: they weigh under 1/64.
    public static let horizonWindows = 6.0

    /// The context key of a start: `GB/sms`, `GB`, `sms`, or `*` when the route learns one context.
    public func context(country: String?, channel: Channel) -> String {
        var parts: [String] = []
        if dimensions.contains(.country) { parts.append(country ?? "-") }
        if dimensions.contains(.channel) { parts.append(channel.rawValue) }
        return parts.isEmpty ? "*" : parts.joined(separator: "/")
    }

    /// Everything wrong with the settings by themselves (the providers are checked against the registry
    /// with the rest of the routing).
    public func problems(route: String) -> [String] {
        var problems: [String] = []
        let label = "routing: route `\(route)`: adaptive"
        if providers.count < 2 { problems.append("\(label): needs at least two providers to choose between") }
        if Set(providers).count != providers.count { problems.append("\(label): a provider is listed twice") }
        if !(0..<1).contains(minShare) || minShare * Double(max(1, providers.count)) >= 1 {
            problems.append(
                "\(label): `min_share` must be at least 0 and below 1/\(max(1, providers.count)) (one over the "
                    + "number of providers), or the floor leaves nothing to learn with")
        }
        if let settleAfter, !(settleAfter > 0) {
            problems.append("\(label): `settle_after` must be a positive duration")
        }
        if !(window >= Self.minimumWindow) {
            problems.append("\(label): `window` must be at least \(Int(Self.minimumWindow)) seconds")
        }
        return problems
    }
}
