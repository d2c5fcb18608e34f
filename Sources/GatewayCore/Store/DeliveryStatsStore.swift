import Foundation

/// How many of a provider's own-code messages to a country ended one way in one minute, by the receipts
/// (docs/own-codes.md, "Delivery figures"): the delivered ones also by how long the vendor took, from the
/// gateway's send to the receipt's arrival, in the buckets of ``DeliveryLatency``.
public struct DeliveryTally: Sendable, Equatable, Hashable {
    /// The provider that sent the messages.
    public var providerID: String
    /// The destination's country (ISO 3166 alpha-2); `nil` when the number has none.
    public var country: String?
    /// The minute the receipts arrived in: its first second, Unix time.
    public var minute: Int
    /// `delivered`, `undelivered` or `failed`: only final receipts are tallied.
    public var outcome: DeliveryStatus
    /// For `delivered`: the upper bound of the send-to-receipt bucket (``DeliveryLatency/bucket(_:)``), in
    /// milliseconds; 0 for the other outcomes and for a message whose send time is not known.
    public var latencyMS: Int
    /// How many.
    public var count: Int

    /// A tally from its parts.
    public init(
        providerID: String, country: String?, minute: Int, outcome: DeliveryStatus, latencyMS: Int = 0,
        count: Int = 1
    ) {
        self.providerID = providerID
        self.country = country
        self.minute = minute
        self.outcome = outcome
        self.latencyMS = latencyMS
        self.count = count
    }

    /// The first second of the minute `date` falls in.
    public static func minute(of date: Date) -> Int {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        return seconds - ((seconds % 60) + 60) % 60
    }
}

/// Delivery outcomes tallied per provider, country, minute, outcome and latency bucket, in the store so that every
/// instance shows the same figures. A store that keeps them passes the delivery-stats conformance suite.
public protocol DeliveryStatsStore: Sendable {
    /// Adds `tally.count` to its key's count (provider, country, minute, outcome, latency), atomically:
    /// instances counting the same key at once all count.
    func countDeliveries(_ tally: DeliveryTally) async throws(GatewayError)

    /// Every key counted from the minute starting at `minute` (Unix seconds) on, one tally per key.
    func deliveryTallies(since minute: Int) async throws(GatewayError) -> [DeliveryTally]

    /// Deletes the tallies of minutes before `minute`; how many keys went.
    @discardableResult
    func pruneDeliveryTallies(before minute: Int) async throws(GatewayError) -> Int
}

/// The time from an own-code send to its `delivered` receipt, kept as a histogram of fixed buckets (so that a
/// tally is one row per bucket and the percentiles of any window and country add up), and the figures read
/// from it.
public enum DeliveryLatency {
    /// Each bucket's upper bound, in milliseconds; a time beyond the last counts in the last.
    public static let bucketsMS = [
        500, 1_000, 1_500, 2_000, 3_000, 4_000, 5_000, 7_500, 10_000, 15_000, 20_000, 30_000, 45_000, 60_000,
        90_000, 120_000, 180_000, 300_000, 600_000, 1_800_000, 3_600_000,
    ]

    /// The bucket of a send-to-receipt time: the smallest upper bound at or above it (a negative time, from
    /// clocks that disagree, counts in the first).
    public static func bucket(_ seconds: TimeInterval) -> Int {
        let milliseconds = seconds * 1000
        return bucketsMS.first { Double($0) >= milliseconds } ?? bucketsMS[bucketsMS.count - 1]
    }

    /// A provider's delivery figures in one place and window.
    public struct Figures: Sendable, Equatable {
        /// Messages accepted by the vendor (each own-code send), when the caller knows them.
        public var sends: Int?
        /// Messages reported delivered.
        public var delivered = 0
        /// Reported not delivered by the carrier.
        public var undelivered = 0
        /// Reported failed by the vendor.
        public var failed = 0
        /// Delivered with a known send time, by bucket upper bound (ms).
        public var histogram: [Int: Int] = [:]

        /// Figures with nothing counted yet.
        public init(sends: Int? = nil) {
            self.sends = sends
        }

        /// Adds one tally of this provider and place.
        public mutating func add(_ tally: DeliveryTally) {
            switch tally.outcome {
            case .delivered:
                delivered += tally.count
                if tally.latencyMS > 0 { histogram[tally.latencyMS, default: 0] += tally.count }
            case .undelivered: undelivered += tally.count
            case .failed: failed += tally.count
            case .queued, .sent: break
            }
        }

        /// Delivered over sent, at most 1 (receipts of messages sent before the window count as delivered in
        /// it); without the sends, delivered over the final receipts. `nil` when there is nothing to divide by.
        public var rate: Double? {
            if let sends {
                return sends > 0 ? min(1, Double(delivered) / Double(sends)) : nil
            }
            let finals = delivered + undelivered + failed
            return finals > 0 ? Double(delivered) / Double(finals) : nil
        }

        /// The nearest-rank percentile of the send-to-delivered time, as its bucket's upper bound (ms): "at most".
        public func percentile(_ fraction: Double) -> Int? {
            let total = histogram.values.reduce(0, +)
            guard total > 0 else { return nil }
            let wanted = max(1, Int((fraction * Double(total)).rounded(.up)))
            var seen = 0
            for bound in histogram.keys.sorted() {
                seen += histogram[bound] ?? 0
                if seen >= wanted { return bound }
            }
            return histogram.keys.max()
        }
    }
}
