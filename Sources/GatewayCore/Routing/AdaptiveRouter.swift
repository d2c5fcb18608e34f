import Foundation
import Logging
import Synchronization

/// The adaptive routes' learning: reads the evidence of a context from the store (every instance on one
/// database reads the same), keeps it for ``refreshInterval`` so that a decision costs no store read, counts
/// starts and outcomes back into the store, and reports what it believes (docs/routing.md §3a).
public final class AdaptiveRouter: Sendable {
    /// Where the evidence is read from and counted into.
    public let store: any AdaptiveEvidenceStore
    /// The time decisions, buckets and decay are reckoned by.
    public let clock: any WallClock
    /// The adaptive routes by name (from the routing table).
    public let policies: [String: AdaptivePolicy]
    /// The providers' prices, for `conversions_per_cost` and the report's cost per approval.
    public let prices: PriceTable
    /// The segments a start's message takes, for providers priced per segment (the gateway's own codes,
    /// ``ProviderCapabilities/segmentsPerMessage``): their price per start is their price times this.
    public let segmentsPerStart: [String: Int]
    /// How long a code stays valid: a bucket older than this has no verification left that can be approved.
    public let codeValidity: TimeInterval
    /// How long a context's evidence, once read, is used before it is read again. This instance's own starts
    /// and outcomes are added to it at once; other instances' arrive with the next read.
    public let refreshInterval: TimeInterval
    /// The random source of the Thompson draws.
    public let random: AdaptiveRandom
    let logger: Logger

    private struct Key: Hashable {
        var route: String
        var context: String
    }

    /// A context's evidence as last read, kept for ``refreshInterval``: each provider's cells, newest bucket
    /// first (as ``AdaptiveModel/posterior(newestFirst:now:window:codeValidity:memory:)`` reads them), and
    /// the posteriors computed from them. An addition changes its provider's cells and drops that provider's
    /// posterior, computed again by the next decision; the others are kept until the next read. A posterior
    /// is thus as of its computation, at most ``refreshInterval`` old, like the evidence it comes from.
    private struct Snapshot {
        var cells: [String: [AdaptiveCell]]
        var readAt: Date
        var posteriors: [String: AdaptivePosterior] = [:]

        init(_ cells: [AdaptiveCell], readAt: Date) {
            var byProvider: [String: [AdaptiveCell]] = [:]
            for cell in cells { byProvider[cell.providerID, default: []].append(cell) }
            for id in byProvider.keys { byProvider[id]!.sort { $0.bucketStart > $1.bucketStart } }
            self.cells = byProvider
            self.readAt = readAt
        }

        /// Counts `cell` into its bucket's cell, or adds it in bucket order.
        mutating func add(_ cell: AdaptiveCell) {
            posteriors[cell.providerID] = nil
            var list = cells[cell.providerID] ?? []
            if let index = list.firstIndex(where: { $0.sameBucket(as: cell) }) {
                list[index].starts += cell.starts
                list[index].approvals += cell.approvals
                list[index].failures += cell.failures
            } else {
                let index = list.firstIndex { $0.bucketStart < cell.bucketStart } ?? list.endIndex
                list.insert(cell, at: index)
            }
            cells[cell.providerID] = list
        }
    }

    private let cache = Mutex<[Key: Snapshot]>([:])
    private let additions = Mutex(0)
    /// Every this many additions, cells past every route's horizon are deleted.
    static let pruneInterval = 1000

    /// A router for the adaptive routes of `routing` (the first rule of a name, if a name repeats). Evidence is read at
    /// most once per second and context unless `refreshInterval` says otherwise.
    public init(
        store: any AdaptiveEvidenceStore, routing: RoutingTable, prices: PriceTable = PriceTable(),
        segmentsPerStart: [String: Int] = [:], clock: any WallClock, codeValidity: TimeInterval = 600,
        refreshInterval: TimeInterval = 1,
        random: AdaptiveRandom = AdaptiveRandom(), logger: Logger
    ) {
        var policies: [String: AdaptivePolicy] = [:]
        for rule in routing.rules {
            if case .adaptive(let policy) = rule.target, policies[rule.name] == nil { policies[rule.name] = policy }
        }
        self.policies = policies
        self.store = store
        self.prices = prices
        self.segmentsPerStart = segmentsPerStart
        self.clock = clock
        self.codeValidity = codeValidity
        self.refreshInterval = refreshInterval
        self.random = random
        self.logger = logger
    }

    /// How long after its last start a bucket's unapproved verifications count as failures: the policy's code
    /// validity, or the route's `settle_after` when shorter.
    func settle(_ policy: AdaptivePolicy) -> TimeInterval {
        min(codeValidity, policy.settleAfter ?? codeValidity)
    }

    /// The first bucket start read for `policy` at `now`: ``AdaptivePolicy/horizonWindows`` windows back.
    static func horizon(_ policy: AdaptivePolicy, now: Date) -> Int {
        let width = policy.bucketSeconds
        let earliest = Int((now.timeIntervalSince1970 - AdaptivePolicy.horizonWindows * policy.window).rounded(.down))
        return earliest - ((earliest % width) + width) % width
    }

    /// Makes sure the context's snapshot is fresh, reading it from the store when it is not. A store that
    /// cannot be read leaves the bandit with what it had (or nothing): routing goes on, logged.
    private func refresh(_ key: Key, policy: AdaptivePolicy, now: Date) async {
        let fresh = cache.withLock { cache in
            cache[key].map { now.timeIntervalSince($0.readAt) < refreshInterval && now >= $0.readAt } ?? false
        }
        guard !fresh else { return }
        do {
            let cells = try await store.adaptiveEvidence(
                route: key.route, context: key.context, since: Self.horizon(policy, now: now))
            let snapshot = Snapshot(cells, readAt: now)
            cache.withLock { $0[key] = snapshot }
        } catch {
            logger.warning(
                "adaptive evidence not read",
                metadata: ["route": "\(key.route)", "error.code": "\(error.code.rawValue)"])
        }
    }

    /// The posterior of each of `providers` in a context: from the snapshot of its evidence, computed once
    /// per snapshot and provider (see ``Snapshot``).
    public func posteriors(route: String, policy: AdaptivePolicy, context: String, providers: [String]) async
        -> [String: AdaptivePosterior]
    {
        let key = Key(route: route, context: context)
        await refresh(key, policy: policy, now: clock.now)
        let now = clock.now
        let settle = settle(policy)
        return cache.withLock { cache in
            var found: [String: AdaptivePosterior] = [:]
            found.reserveCapacity(providers.count)
            for id in providers {
                if let posterior = cache[key]?.posteriors[id] {
                    found[id] = posterior
                    continue
                }
                let posterior = AdaptiveModel.posterior(
                    newestFirst: cache[key]?.cells[id] ?? [], now: now, window: policy.window, codeValidity: settle)
                cache[key]?.posteriors[id] = posterior
                found[id] = posterior
            }
            return found
        }
    }

    /// The providers' prices per start for `country` (their default without one), for those that have one: a
    /// price per segment times ``segmentsPerStart`` for a provider priced so.
    package func priceList(_ providers: [String], country: String?) -> [String: Double] {
        var found: [String: Double] = [:]
        for id in providers {
            found[id] = prices.price(provider: id, country: country).map { $0 * Double(segmentsPerStart[id] ?? 1) }
        }
        return found
    }

    /// Chooses where a start on `route` goes among `eligible` (non-empty; breakers, excluded countries and
    /// app-verification rules already applied). `sticky`: the provider of an open verification to the same
    /// destination, which wins while it is eligible.
    public func choose(
        route: String, adaptive: RoutingTable.Decision.Adaptive, country: String?, eligible: [String],
        sticky: String?
    ) async -> AdaptiveChoice {
        if let sticky, eligible.contains(sticky) {
            return AdaptiveChoice(
                providerID: sticky, reason: .sticky, order: [sticky] + eligible.filter { $0 != sticky }, samples: [:],
                explanation: "sticky: a verification to this destination is open at \(sticky)")
        }
        let posteriors =
            eligible.count > 1
            ? await posteriors(route: route, policy: adaptive.policy, context: adaptive.context, providers: eligible)
            : [:]
        return AdaptiveModel.choose(
            eligible: eligible, posteriors: posteriors, prices: priceList(eligible, country: country),
            objective: adaptive.policy.objective, minShare: adaptive.policy.minShare, random: random)
    }

    /// Counts a start that `providerID` accepted on an adaptive route.
    public func countStart(route: String, policy: AdaptivePolicy, context: String, providerID: String, at: Date) async {
        await add(cell(route: route, policy: policy, context: context, providerID: providerID, at: at, starts: 1))
    }

    /// Counts how an adaptive verification ended: approved, or a failure for any other final status, for
    /// `providerID`, the provider its start was counted for (`record`'s own, unless a later send moved it).
    /// Only the move from pending to final is counted, once, by the writer that made it; a route whose
    /// objective counts deliveries counts them instead (``countResult(route:context:providerID:startedAt:success:)``).
    public func countOutcome(previous: VerificationStatus, _ record: VerificationRecord, providerID: String? = nil)
        async
    {
        guard previous == .pending, record.status.isFinal, let context = record.adaptiveContext,
            let route = record.route, let policy = policies[route], !policy.objective.countsDeliveries
        else { return }
        let approved = record.status == .approved
        await add(
            cell(
                route: route, policy: policy, context: context, providerID: providerID ?? record.providerID,
                at: record.createdAt, approvals: approved ? 1 : 0, failures: approved ? 0 : 1))
    }

    /// Counts one result of a start on `route` in `context` at `providerID`: a success (an approval, or for a
    /// route that learns from deliveries a delivered first message) or a failure, in the bucket of the start.
    /// The caller counts each start's result once.
    public func countResult(route: String, context: String, providerID: String, startedAt: Date, success: Bool)
        async
    {
        guard let policy = policies[route] else { return }
        await add(
            cell(
                route: route, policy: policy, context: context, providerID: providerID, at: startedAt,
                approvals: success ? 1 : 0, failures: success ? 0 : 1))
    }

    private func cell(
        route: String, policy: AdaptivePolicy, context: String, providerID: String, at: Date, starts: Int = 0,
        approvals: Int = 0, failures: Int = 0
    ) -> AdaptiveCell {
        let width = policy.bucketSeconds
        let seconds = Int(at.timeIntervalSince1970.rounded(.down))
        return AdaptiveCell(
            route: route, context: context, providerID: providerID,
            bucketStart: seconds - ((seconds % width) + width) % width, bucketSeconds: width, starts: starts,
            approvals: approvals, failures: failures)
    }

    /// Counts a start into this instance's kept evidence only, without the store write of
    /// ``countStart(route:policy:context:providerID:at:)``: for `gateway bench-adaptive`, which times
    /// decisions as they follow each other's starts (each drops a posterior) and times the write apart.
    package func countStartLocally(route: String, policy: AdaptivePolicy, context: String, providerID: String, at: Date)
    {
        let cell = cell(route: route, policy: policy, context: context, providerID: providerID, at: at, starts: 1)
        cache.withLock { $0[Key(route: route, context: context)]?.add(cell) }
    }

    private func add(_ cell: AdaptiveCell) async {
        let key = Key(route: cell.route, context: cell.context)
        cache.withLock { $0[key]?.add(cell) }
        do {
            try await store.addAdaptiveEvidence(cell)
        } catch {
            logger.warning(
                "adaptive evidence not counted",
                metadata: ["route": "\(cell.route)", "error.code": "\(error.code.rawValue)"])
        }
        let prune = additions.withLock { count -> Bool in
            count += 1
            guard count >= Self.pruneInterval else { return false }
            count = 0
            return true
        }
        if prune, let oldest = policies.values.map({ Self.horizon($0, now: clock.now) }).min() {
            _ = try? await store.pruneAdaptiveEvidence(before: oldest)
        }
    }

    // MARK: - Report

    /// What `GET /v1/routing/adaptive` shows: per adaptive route and context, each provider's evidence and
    /// the bandit's belief. `route` and `context` narrow it.
    public func report(route only: String? = nil, context wanted: String? = nil) async throws(GatewayError)
        -> [AdaptiveRouteReport]
    {
        var routes: [AdaptiveRouteReport] = []
        let now = clock.now
        for (name, policy) in policies.sorted(by: { $0.key < $1.key }) where only == nil || only == name {
            let cells = try await store.adaptiveEvidence(
                route: name, context: wanted, since: Self.horizon(policy, now: now))
            var byContext: [String: [AdaptiveCell]] = [:]
            for cell in cells { byContext[cell.context, default: []].append(cell) }
            var contexts: [AdaptiveContextReport] = []
            for (context, cells) in byContext.sorted(by: { $0.key < $1.key }) {
                // `-` stands for a destination without a country (an email, a push).
                let first = context.split(separator: "/").first.map(String.init)
                let country = policy.dimensions.contains(.country) && first != "-" ? first : nil
                var posteriors: [String: AdaptivePosterior] = [:]
                for id in policy.providers {
                    posteriors[id] = AdaptiveModel.posterior(
                        cells.filter { $0.providerID == id }, now: now, window: policy.window,
                        codeValidity: settle(policy))
                }
                let prices = priceList(policy.providers, country: country)
                let shares = AdaptiveModel.shares(
                    eligible: policy.providers, posteriors: posteriors, prices: prices, objective: policy.objective,
                    minShare: policy.minShare, random: random)
                let providers = policy.providers.map { id in
                    let posterior = posteriors[id] ?? AdaptivePosterior()
                    let price = prices[id]
                    return AdaptiveProviderReport(
                        providerID: id, starts: posterior.starts, approvals: posterior.approvals,
                        failures: posterior.failures, pending: posterior.pending, posteriorMean: posterior.mean,
                        interval95: posterior.interval95, share: shares[id] ?? 0, price: price,
                        costPerApproval: price.flatMap { price in
                            posterior.approvals > 0
                                ? price * Double(posterior.starts) / Double(posterior.approvals) : nil
                        })
                }
                contexts.append(AdaptiveContextReport(context: context, country: country, providers: providers))
            }
            routes.append(AdaptiveRouteReport(route: name, policy: policy, contexts: contexts))
        }
        return routes
    }
}

/// One adaptive route in the report.
public struct AdaptiveRouteReport: Sendable {
    /// The route's name.
    public var route: String
    /// The route's settings.
    public var policy: AdaptivePolicy
    /// The contexts that have evidence within the horizon, by context key.
    public var contexts: [AdaptiveContextReport]
}

/// One context of an adaptive route in the report.
public struct AdaptiveContextReport: Sendable {
    /// The context key (`GB/sms`).
    public var context: String
    /// The context's country, when the route learns per country (its prices are that country's).
    public var country: String?
    /// Every provider of the route, in configured order, those without evidence included.
    public var providers: [AdaptiveProviderReport]
}

/// One provider in one context: the evidence within the horizon, and the bandit's belief.
public struct AdaptiveProviderReport: Sendable {
    /// The provider's id.
    public var providerID: String
    /// Starts within the horizon.
    public var starts: Int
    /// Approvals of those starts.
    public var approvals: Int
    /// Ended without an approval, or not approved within the code's validity.
    public var failures: Int
    /// Started, and neither approved nor failed yet.
    public var pending: Int
    /// The posterior mean: the believed approval rate.
    public var posteriorMean: Double
    /// The central 95% interval of the posterior.
    public var interval95: (low: Double, high: Double)
    /// The expected share of starts: the chance of the highest Thompson score, raised to the floor (breakers aside).
    public var share: Double
    /// The provider's price for the context's country (or its default), if the price table has one.
    public var price: Double?
    /// The price of the starts per approval, `price × starts / approvals`; `nil` without a price or an approval.
    public var costPerApproval: Double?
}
