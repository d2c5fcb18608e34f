import Foundation
import Synchronization

/// The risk step of a start (`risk:` at the top of the configuration or on a route, docs/network-signals.md):
/// signals the engine asks before any vendor is called or paid, and what their answers lead to.
public struct RiskPolicy: Sendable, Equatable {
    /// What a recent SIM change leads to.
    public enum OnRecentSwap: String, Sendable, Equatable, CaseIterable {
        /// `403 recent_sim_swap`; nothing is sent.
        case refuse
        /// The verification starts, marked `risk: {sim_swap: "recent"}` in its answer, token and webhooks, so
        /// the app can ask for a second factor.
        case stepUp = "step_up"
        /// The verification starts unmarked; the answer is on its timeline and in the metrics, for operators.
        case flag
    }

    /// What a start does when a signal cannot be had (the operator is down, refuses, or does not cover the number).
    public enum OnUnavailable: String, Sendable, Equatable, CaseIterable {
        /// The start goes on; the timeline says the signal was unavailable.
        case allow
        /// `502 provider_unavailable`, retryable; nothing is sent.
        case refuse
    }

    /// The SIM-swap signal: which provider answers it, over how many hours, and what a recent change leads to.
    public struct SimSwap: Sendable, Equatable {
        /// A configured provider that is a ``SimSwapSignalProvider``.
        public var providerID: String
        /// A change within this many hours is recent (1–2400, CAMARA's `maxAge`).
        public var maxAgeHours: Int
        /// What a recent change leads to.
        public var onRecentSwap: OnRecentSwap

        /// A SIM-swap rule.
        public init(providerID: String, maxAgeHours: Int = 72, onRecentSwap: OnRecentSwap = .refuse) {
            self.providerID = providerID
            self.maxAgeHours = maxAgeHours
            self.onRecentSwap = onRecentSwap
        }
    }

    /// The SIM-swap signal, if asked.
    public var simSwap: SimSwap?
    /// What happens when a signal cannot be had.
    public var onSignalUnavailable: OnUnavailable
    /// How long an answer is reused for the same number and question, on this instance (`0`: never).
    public var cacheFor: TimeInterval

    /// A risk step; answers are reused for five minutes unless told.
    public init(simSwap: SimSwap? = nil, onSignalUnavailable: OnUnavailable = .allow, cacheFor: TimeInterval = 300) {
        self.simSwap = simSwap
        self.onSignalUnavailable = onSignalUnavailable
        self.cacheFor = cacheFor
    }
}

/// Signal answers reused per number for ``RiskPolicy/cacheFor`` on one instance: a user who starts twice in a
/// minute is asked about once. Bounded: when full, the oldest half goes.
public final class RiskSignalCache: Sendable {
    private struct Entry {
        var answer: Bool
        var at: Date
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// The most answers kept.
    public let capacity: Int

    /// An empty cache holding at most `capacity` answers.
    public init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    /// The answer for `key` given within `maxAge` seconds of `now`, if any.
    public func answer(_ key: String, maxAge: TimeInterval, now: Date) -> Bool? {
        guard maxAge > 0 else { return nil }
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard now.timeIntervalSince(entry.at) < maxAge else {
                entries[key] = nil
                return nil
            }
            return entry.answer
        }
    }

    /// Keeps `answer` for `key`, given at `now`.
    public func keep(_ answer: Bool, for key: String, at now: Date) {
        entries.withLock { entries in
            if entries.count >= capacity, entries[key] == nil {
                let oldest = entries.sorted { $0.value.at < $1.value.at }.prefix(max(1, capacity / 2))
                for (key, _) in oldest { entries[key] = nil }
            }
            entries[key] = Entry(answer: answer, at: now)
        }
    }
}

extension RiskPolicy {
    /// What is wrong with the step against the configured providers: a signal provider that is not there, or
    /// that gives no such signal.
    public func problems(_ label: String, registry: ProviderRegistry) -> [String] {
        guard let rule = simSwap else { return [] }
        guard let provider = registry.provider(rule.providerID) else {
            return ["\(label) risk.sim_swap: unknown provider `\(rule.providerID)`"]
        }
        guard provider is any SimSwapSignalProvider else {
            return [
                "\(label) risk.sim_swap: provider `\(rule.providerID)` gives no SIM swap signal (use a camara provider)"
            ]
        }
        return []
    }
}
