import Foundation
import Synchronization

/// Faults an emulator injects on demand, for tests and for trying failover by hand.
///
/// Two kinds can be set together. The switches (`serverErrorStatus`, `malformedBody`, `connectionReset`)
/// hit every request; the rates (`errorRate`, `resetRate`, `malformedRate`) hit a share of them, chosen by
/// a stable hash of `seed` and the request's position since the faults were set, so the same seed replays
/// the same sequence of faults. Latency is `latencyMilliseconds` plus a uniform draw in
/// `0...latencyJitterMilliseconds`, before every request.
public final class FaultSwitch: Sendable {
    /// The faults to inject; everything off by default (``none``).
    public struct Faults: Sendable, Equatable, Codable {
        /// Added before every answer.
        public var latencyMilliseconds: Int = 0
        /// Up to this much more, drawn per request (uniform, from the seed).
        public var latencyJitterMilliseconds: Int = 0
        /// Answer every request with this 5xx status and the vendor's error body.
        public var serverErrorStatus: Int?
        /// Answer 200 with a body that is not the vendor's JSON.
        public var malformedBody: Bool = false
        /// Drop the connection instead of answering.
        public var connectionReset: Bool = false
        /// Share of requests answered with `errorStatus` and the vendor's error body, instead of being
        /// handled: the vendor refused, nothing was sent.
        public var errorRate: Double = 0
        /// The 5xx status of the answers `errorRate` picks.
        public var errorStatus: Int = 503
        /// Share of requests whose connection drops after the emulator handled them: the vendor acted
        /// (a send happened) and the answer is lost.
        public var resetRate: Double = 0
        /// Share of requests answered 200 with a body that is not the vendor's JSON after the emulator
        /// handled them: the vendor acted and the answer cannot be read.
        public var malformedRate: Double = 0
        /// Seeds which requests the rates pick and the latency jitter.
        public var seed: Int = 0
        /// Only the next this-many requests are affected, then the faults clear. `nil`: until changed.
        public var remaining: Int?

        /// Faults with everything off unless given.
        public init(
            latencyMilliseconds: Int = 0, latencyJitterMilliseconds: Int = 0, serverErrorStatus: Int? = nil,
            malformedBody: Bool = false, connectionReset: Bool = false, errorRate: Double = 0,
            errorStatus: Int = 503, resetRate: Double = 0, malformedRate: Double = 0, seed: Int = 0,
            remaining: Int? = nil
        ) {
            self.latencyMilliseconds = latencyMilliseconds
            self.latencyJitterMilliseconds = latencyJitterMilliseconds
            self.serverErrorStatus = serverErrorStatus
            self.malformedBody = malformedBody
            self.connectionReset = connectionReset
            self.errorRate = errorRate
            self.errorStatus = errorStatus
            self.resetRate = resetRate
            self.malformedRate = malformedRate
            self.seed = seed
            self.remaining = remaining
        }

        /// No fault.
        public static let none = Faults()

        /// The longest latency a fault may add, jitter included.
        public static let maximumLatencyMilliseconds = 60_000

        /// What is wrong with these faults, one sentence each; empty when they can be set.
        public var problems: [String] {
            var problems: [String] = []
            let rates = [("error_rate", errorRate), ("reset_rate", resetRate), ("malformed_rate", malformedRate)]
            for (name, rate) in rates where !(0...1).contains(rate) {
                problems.append("`\(name)` must be a number from 0 to 1.")
            }
            if problems.isEmpty, errorRate + resetRate + malformedRate > 1 + 1e-9 {
                problems.append("`error_rate`, `reset_rate` and `malformed_rate` must add up to at most 1.")
            }
            if !(500...599).contains(errorStatus) { problems.append("`error_status` must be from 500 to 599.") }
            if let status = serverErrorStatus, !(500...599).contains(status) {
                problems.append("`server_error_status` must be from 500 to 599.")
            }
            if latencyMilliseconds < 0 || latencyJitterMilliseconds < 0
                || latencyMilliseconds + latencyJitterMilliseconds > Self.maximumLatencyMilliseconds
            {
                problems.append(
                    "`latency_ms` and `latency_jitter_ms` must be at least 0 and add up to at most "
                        + "\(Self.maximumLatencyMilliseconds).")
            }
            if seed < 0 { problems.append("`seed` must be at least 0.") }
            if let remaining, remaining < 0 { problems.append("`remaining` must be at least 0.") }
            return problems
        }
    }

    /// What the switch decided for one request.
    public struct Fault: Sendable, Equatable {
        /// What happens to the request after the latency.
        public enum Outcome: Sendable, Equatable {
            /// Handled and answered as usual.
            case none
            /// Answered with this 5xx and the vendor's error body, without being handled.
            case serverError(Int)
            /// Answered 200 with a body that is not the vendor's; `afterHandling`: the request was handled
            /// first (the vendor acted).
            case malformed(afterHandling: Bool)
            /// The connection drops; `afterHandling`: the request was handled first (the vendor acted,
            /// the answer is lost), else it was read and dropped.
            case reset(afterHandling: Bool)
        }

        /// How long to wait before answering, jitter included.
        public var latencyMilliseconds: Int
        /// What happens to the request.
        public var outcome: Outcome

        /// A fault of `latencyMilliseconds`, answering as usual unless `outcome` says otherwise.
        public init(latencyMilliseconds: Int = 0, outcome: Outcome = .none) {
            self.latencyMilliseconds = latencyMilliseconds
            self.outcome = outcome
        }

        /// No latency, answered as usual.
        public static let none = Fault()
    }

    private struct State {
        var faults = Faults.none
        /// Requests drawn for since the faults were set: the position each draw hashes.
        var drawn: UInt64 = 0
    }

    private let state = Mutex(State())

    /// A switch with no fault set.
    public init() {}

    /// The faults set now; ``Faults/remaining`` counts down as requests take them.
    public var current: Faults { state.withLock { $0.faults } }

    /// Sets the faults; the draws start over, so the same faults and seed replay the same sequence.
    public func set(_ faults: Faults) { state.withLock { $0 = State(faults: faults, drawn: 0) } }

    /// Removes every fault.
    public func clear() { set(.none) }

    /// Decides the fault for one request, counting down ``Faults/remaining``.
    public func take() -> Fault {
        state.withLock { state in
            if let remaining = state.faults.remaining, remaining <= 0 {
                state = State()
                return .none
            }
            let faults = state.faults
            let position = state.drawn
            state.drawn &+= 1
            if let remaining = faults.remaining {
                state.faults.remaining = remaining - 1
                if remaining - 1 <= 0 { state = State() }
            }
            return Self.decide(faults, position: position)
        }
    }

    /// The fault for the request at `position` under `faults`: a pure function of both.
    static func decide(_ faults: Faults, position: UInt64) -> Fault {
        let seed = String(faults.seed)
        let index = String(position)
        var latency = faults.latencyMilliseconds
        if faults.latencyJitterMilliseconds > 0 {
            let draw = StableHash.unit([seed, "latency", index])
            latency += min(Int(draw * Double(faults.latencyJitterMilliseconds + 1)), faults.latencyJitterMilliseconds)
        }
        let outcome: Fault.Outcome
        if faults.connectionReset {
            outcome = .reset(afterHandling: false)
        } else if let status = faults.serverErrorStatus {
            outcome = .serverError(status)
        } else if faults.malformedBody {
            outcome = .malformed(afterHandling: false)
        } else if faults.errorRate + faults.resetRate + faults.malformedRate > 0 {
            let draw = StableHash.unit([seed, "outcome", index])
            if draw < faults.errorRate {
                outcome = .serverError(faults.errorStatus)
            } else if draw < faults.errorRate + faults.resetRate {
                outcome = .reset(afterHandling: true)
            } else if draw < faults.errorRate + faults.resetRate + faults.malformedRate {
                outcome = .malformed(afterHandling: true)
            } else {
                outcome = .none
            }
        } else {
            outcome = .none
        }
        return Fault(latencyMilliseconds: latency, outcome: outcome)
    }
}
