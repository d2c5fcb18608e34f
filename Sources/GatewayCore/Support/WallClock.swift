import Foundation
import Synchronization

/// The time source of the engine and the plugins: the date for expiry, cooldowns and rate limits, a
/// monotonic instant for durations and deadlines, and the sleep that waits between tries. Nothing in
/// GatewayCore or a plugin reads the system's clocks itself; tests inject ``ManualClock``.
public protocol WallClock: Sendable {
    /// The current date: what records, expiries and rate-limit windows are measured against.
    var now: Date { get }
    /// A monotonic reading, for latencies and for how long a wait has lasted (never moves backwards, unlike
    /// ``now``).
    var instant: ContinuousClock.Instant { get }
    /// Waits `duration` (or throws `CancellationError` when the task is cancelled).
    func sleep(for duration: Duration) async throws
}

/// The real clock.
public struct SystemClock: WallClock {
    /// The real clock: `Date()`, `ContinuousClock.now` and `Task.sleep`.
    public init() {}
    /// The system's current time, `Date()`.
    public var now: Date { Date() }
    /// The system's monotonic clock, `ContinuousClock.now`.
    public var instant: ContinuousClock.Instant { ContinuousClock.now }
    /// `Task.sleep(for:)`.
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}

/// A clock whose date moves only when told to. Its ``instant`` is the real monotonic time plus every
/// ``advance(by:)`` so far, and its ``sleep(for:)`` really waits: a wait for another task (a claim's holder,
/// a check's lease) still ends, while a test moves expiries and lease deadlines forward by hand.
package final class ManualClock: WallClock {
    private let current: Mutex<(date: Date, advanced: Duration)>

    package init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex((start, .zero))
    }

    package var now: Date { current.withLock { $0.date } }

    package var instant: ContinuousClock.Instant {
        let advanced = current.withLock { $0.advanced }
        return ContinuousClock.now.advanced(by: advanced)
    }

    package func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }

    package func advance(by seconds: TimeInterval) {
        current.withLock {
            $0.date = $0.date.addingTimeInterval(seconds)
            $0.advanced += .milliseconds(Int64((seconds * 1000).rounded()))
        }
    }
}
