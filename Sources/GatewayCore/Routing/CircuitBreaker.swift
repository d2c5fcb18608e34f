import Foundation
import Synchronization

/// Circuit breakers per provider and destination country.
///
/// A breaker is **closed** until either `consecutiveFailures` calls in a row fail, or, once at least
/// `minimumRequests` calls fell in the last `window`, their failure rate reaches `failureRate`, or a failure
/// carries the vendor's `Retry-After` (the vendor saying when to come back). Then it
/// is **open** for `cooldown` (or the vendor's `Retry-After`, if longer): the router skips that provider
/// for that country. After the cooldown one request is let through as a **half-open** probe; if it
/// succeeds the breaker closes, if it fails the breaker opens again with the cooldown doubled, up to
/// `maximumCooldown`. Only failures that say the vendor is unwell count (classes `provider_transient`
/// and `provider_permanent`); a wrong number or a blocked destination is the vendor answering.
public final class CircuitBreakers: Sendable {
    /// When breakers open and for how long; the defaults are the documented ones.
    public struct Settings: Sendable, Equatable {
        /// Failed calls in a row that open the breaker.
        public var consecutiveFailures: Int = 5
        /// The failure rate of the window's calls, 0…1, that opens the breaker.
        public var failureRate: Double = 0.5
        /// How far back calls count for the failure rate, in seconds.
        public var window: TimeInterval = 60
        /// Calls the window must hold before its failure rate can open the breaker.
        public var minimumRequests: Int = 10
        /// How long an open breaker stays open at first, in seconds.
        public var cooldown: TimeInterval = 30
        /// The longest cooldown doubling reaches, in seconds.
        public var maximumCooldown: TimeInterval = 600

        /// Settings with the defaults unless given: 5 failures in a row, or half of at least 10 calls in 60 seconds; a
        /// 30-second cooldown doubling up to 10 minutes.
        public init(
            consecutiveFailures: Int = 5, failureRate: Double = 0.5, window: TimeInterval = 60,
            minimumRequests: Int = 10, cooldown: TimeInterval = 30, maximumCooldown: TimeInterval = 600
        ) {
            self.consecutiveFailures = consecutiveFailures
            self.failureRate = failureRate
            self.window = window
            self.minimumRequests = minimumRequests
            self.cooldown = cooldown
            self.maximumCooldown = maximumCooldown
        }
    }

    /// Where a breaker stands: closed lets calls through, open refuses them, half-open lets one probe through.
    public enum State: String, Sendable, Equatable, Codable {
        case closed
        case open
        case halfOpen = "half_open"
    }

    /// What the admin API and the dry-run show of one breaker.
    public struct Status: Sendable, Equatable {
        /// The provider the breaker guards.
        public var providerID: String
        /// The destination country, or ``CircuitBreakers/anyCountry``.
        public var country: String
        /// The breaker's state.
        public var state: State
        /// Failed calls in a row.
        public var consecutiveFailures: Int
        /// Calls within the window.
        public var recentRequests: Int
        /// Failed calls within the window.
        public var recentFailures: Int
        /// While open: when the next probe is allowed.
        public var openUntil: Date?
        /// The cooldown the breaker opens for next (doubled after a failed probe).
        public var cooldown: TimeInterval
    }

    struct Key: Hashable {
        var providerID: String
        var country: String
    }

    /// The calls of the last `window`, oldest first, with their failures counted as they come and go: a
    /// record costs O(1) (amortized) however many calls the window holds (at 1,000 starts/s, 60,000).
    struct Outcomes {
        private var items: [(at: Date, failed: Bool)] = []
        private var head = 0
        private(set) var failures = 0

        var count: Int { items.count - head }

        mutating func append(_ at: Date, failed: Bool) {
            items.append((at, failed))
            if failed { failures += 1 }
        }

        /// Drops the calls older than `window` at `now`, from the front (calls are recorded in time order).
        mutating func prune(now: Date, window: TimeInterval) {
            while head < items.count, now.timeIntervalSince(items[head].at) > window {
                if items[head].failed { failures -= 1 }
                head += 1
            }
            if head > 1024, head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
        }

        /// The calls within `window` of `now` (a read: for the admin API and metrics).
        func recent(now: Date, window: TimeInterval) -> (requests: Int, failures: Int) {
            var requests = 0
            var failed = 0
            for item in items[head...] where now.timeIntervalSince(item.at) <= window {
                requests += 1
                if item.failed { failed += 1 }
            }
            return (requests, failed)
        }
    }

    struct Breaker {
        var state: State = .closed
        var consecutiveFailures = 0
        var outcomes = Outcomes()
        var openUntil: Date?
        var cooldown: TimeInterval
        var probeInFlight = false
        /// When the probe in flight was let through: a probe whose outcome never comes (its verification's
        /// delivery deadline lost with a crashed instance) is given back after ``Settings/window``.
        var probeSince: Date?
    }

    /// When breakers open and for how long.
    public let settings: Settings
    private let clock: any WallClock
    private let breakers = Mutex<[Key: Breaker]>([:])

    /// Breakers with `settings`, all closed until calls are recorded, timed by `clock`.
    public init(settings: Settings = Settings(), clock: any WallClock) {
        self.settings = settings
        self.clock = clock
    }

    /// The key for a destination without a country (email, push): one breaker per provider.
    public static let anyCountry = "*"

    /// Whether a call may go to `providerID` for `country` now. In half-open state only one probe is
    /// let through at a time; the caller must then ``record(_:country:failure:retryAfter:)`` its outcome.
    public func allow(_ providerID: String, country: String?) -> Bool {
        let now = clock.now
        let window = settings.window
        return breakers.withLock { all in
            let key = Key(providerID: providerID, country: country ?? Self.anyCountry)
            guard var breaker = all[key] else { return true }
            defer { all[key] = breaker }
            switch breaker.state {
            case .closed:
                return true
            case .open:
                guard let until = breaker.openUntil, now >= until else { return false }
                breaker.state = .halfOpen
                breaker.probeInFlight = true
                breaker.probeSince = now
                return true
            case .halfOpen:
                if breaker.probeInFlight, let since = breaker.probeSince, now < since.addingTimeInterval(window) {
                    return false
                }
                breaker.probeInFlight = true
                breaker.probeSince = now
                return true
            }
        }
    }

    /// Gives back a call ``allow(_:country:)`` let through that never reached the vendor (the start stopped
    /// before it, on a store failure or a claim lost): it has no outcome to record, and a half-open probe
    /// must not stay taken by it, or the breaker would refuse its provider for that country for good.
    public func abandon(_ providerID: String, country: String?) {
        breakers.withLock { all in
            let key = Key(providerID: providerID, country: country ?? Self.anyCountry)
            guard var breaker = all[key], breaker.state == .halfOpen else { return }
            breaker.probeInFlight = false
            all[key] = breaker
        }
    }

    /// Whether a call would be allowed, changing nothing (dry-run).
    public func wouldAllow(_ providerID: String, country: String?) -> Bool {
        let now = clock.now
        return breakers.withLock { all in
            guard let breaker = all[Key(providerID: providerID, country: country ?? Self.anyCountry)] else {
                return true
            }
            switch breaker.state {
            case .closed: return true
            case .open: return breaker.openUntil.map { now >= $0 } ?? false
            case .halfOpen: return !breaker.probeInFlight
            }
        }
    }

    /// Records the outcome of a call: `failure` when the vendor failed (unavailable, timeout,
    /// rate limited, auth…), with the vendor's Retry-After in seconds if it sent one.
    public func record(_ providerID: String, country: String?, failure: Bool, retryAfter: TimeInterval? = nil) {
        let now = clock.now
        let settings = self.settings
        breakers.withLock { all in
            let key = Key(providerID: providerID, country: country ?? Self.anyCountry)
            // Changed in place: a copy out of the dictionary would copy the window's outcomes on every call.
            Self.record(
                &all[key, default: Breaker(cooldown: settings.cooldown)], now: now, failure: failure,
                retryAfter: retryAfter, settings: settings)
        }
    }

    private static func record(
        _ breaker: inout Breaker, now: Date, failure: Bool, retryAfter: TimeInterval?, settings: Settings
    ) {
        breaker.outcomes.append(now, failed: failure)
        breaker.outcomes.prune(now: now, window: settings.window)
        breaker.consecutiveFailures = failure ? breaker.consecutiveFailures + 1 : 0
        switch (breaker.state, failure) {
        case (.halfOpen, false):
            breaker = Breaker(cooldown: settings.cooldown)
        case (.halfOpen, true):
            breaker.cooldown = min(settings.maximumCooldown, breaker.cooldown * 2)
            open(&breaker, now: now, retryAfter: retryAfter)
        case (.closed, true):
            let failures = breaker.outcomes.failures
            let rateTripped =
                breaker.outcomes.count >= settings.minimumRequests
                && Double(failures) / Double(breaker.outcomes.count) >= settings.failureRate
            if breaker.consecutiveFailures >= settings.consecutiveFailures || rateTripped
                || (retryAfter ?? 0) > 0
            {
                open(&breaker, now: now, retryAfter: retryAfter)
            }
        case (.open, _), (.closed, false):
            break
        }
    }

    private static func open(_ breaker: inout Breaker, now: Date, retryAfter: TimeInterval?) {
        breaker.state = .open
        breaker.probeInFlight = false
        breaker.openUntil = now.addingTimeInterval(max(breaker.cooldown, retryAfter ?? 0))
    }

    /// Every breaker that has seen a call, by provider then country.
    public var statuses: [Status] {
        let now = clock.now
        return breakers.withLock { all in
            all.map { key, breaker in
                let recent = breaker.outcomes.recent(now: now, window: settings.window)
                return Status(
                    providerID: key.providerID, country: key.country, state: breaker.state,
                    consecutiveFailures: breaker.consecutiveFailures, recentRequests: recent.requests,
                    recentFailures: recent.failures,
                    openUntil: breaker.state == .open ? breaker.openUntil : nil, cooldown: breaker.cooldown)
            }
            .sorted { ($0.providerID, $0.country) < ($1.providerID, $1.country) }
        }
    }

    /// The state of the breaker for `providerID` and `country`: closed when it has seen no call. Changes nothing.
    public func state(_ providerID: String, country: String?) -> State {
        breakers.withLock { $0[Key(providerID: providerID, country: country ?? Self.anyCountry)]?.state ?? .closed }
    }
}
