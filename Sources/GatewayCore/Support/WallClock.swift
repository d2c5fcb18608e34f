import Foundation
import Synchronization

/// The time source for expiry, cooldowns and rate limits. Tests inject ``ManualClock``.
public protocol WallClock: Sendable {
    /// The current time.
    var now: Date { get }
}

/// The real clock.
public struct SystemClock: WallClock {
    /// The system clock.
    public init() {}
    /// The system's current time, `Date()`.
    public var now: Date { Date() }
}

/// A clock that moves only when told to.
package final class ManualClock: WallClock {
    private let current: Mutex<Date>

    package init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    package var now: Date { current.withLock { $0 } }

    package func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
