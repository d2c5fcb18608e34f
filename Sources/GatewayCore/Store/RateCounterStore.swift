import Foundation

/// Rate-limit counters and the pumping guard's prefix blocks: the part of ``VerificationStore`` that limits
/// how often something may happen. Methods throw only ``GatewayError``.
public protocol RateCounterStore: Sendable {
    /// Counts one hit of `key` in the fixed window of `window` seconds that `at` falls in, atomically:
    /// allowed while the window has fewer than `limit` hits, refused (and not counted) after that.
    func hit(_ key: String, limit: Int, window: TimeInterval, at: Date) async throws(GatewayError) -> RateDecision

    /// Adds one to `key`'s count in the fixed window of `window` seconds that `at` falls in, and returns
    /// the count after it (a new window starts at one).
    func add(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int

    /// `key`'s count in the window `at` falls in (zero for a new window).
    func count(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int

    /// Records a prefix block (replacing one for the same prefix).
    func block(_ block: PrefixBlock) async throws(GatewayError)

    /// The block of `prefix` in force at `at`, if any.
    func activeBlock(prefix: String, at: Date) async throws(GatewayError) -> PrefixBlock?

    /// Every block in force at `at`, by prefix.
    func blocks(at: Date) async throws(GatewayError) -> [PrefixBlock]

    /// Ends the block of `prefix`; `false` when none was in force.
    func liftBlock(prefix: String, at: Date) async throws(GatewayError) -> Bool
}
