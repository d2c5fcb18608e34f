import Foundation
import GatewayCore
import Testing

/// The behaviour every ``DeliveryStatsStore`` must show (in memory, SQLite, PostgreSQL): counts add up per key
/// (provider, country, minute, outcome, latency bucket) and only per key, a number without a country comes back
/// without one, concurrent counts are all kept, and only what is older than the prune's minute goes.
public struct DeliveryStatsConformance: Sendable {
    private let makeStore: @Sendable () async throws -> any DeliveryStatsStore

    /// A suite over the stores `makeStore` makes; each check makes its own, new and empty.
    public init(makeStore: @escaping @Sendable () async throws -> any DeliveryStatsStore) {
        self.makeStore = makeStore
    }

    /// Every check, so a store's test suite runs them all as one parameterized test.
    public enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case countsAddUpPerKey
        case concurrentCountsAllCount
        case readSinceAndPruneBefore

        /// The check's name as the test report shows it.
        public var testDescription: String {
            switch self {
            case .countsAddUpPerKey: "Delivery tallies add up per key, and only per key"
            case .concurrentCountsAllCount: "Delivery tallies counted at once are all kept"
            case .readSinceAndPruneBefore: "Delivery tallies are read from a minute on and pruned before one"
            }
        }
    }

    /// Runs one check.
    public func run(_ check: Check) async throws {
        switch check {
        case .countsAddUpPerKey: try await countsAddUpPerKey()
        case .concurrentCountsAllCount: try await concurrentCountsAllCount()
        case .readSinceAndPruneBefore: try await readSinceAndPruneBefore()
        }
    }

    static let minute = 1_800_000_000 - 1_800_000_000 % 60

    static func sorted(_ tallies: [DeliveryTally]) -> [DeliveryTally] {
        tallies.sorted {
            ($0.providerID, $0.country ?? "", $0.minute, $0.outcome.rawValue, $0.latencyMS)
                < ($1.providerID, $1.country ?? "", $1.minute, $1.outcome.rawValue, $1.latencyMS)
        }
    }

    /// The same key twice is one tally with both counts; each part of the key tells tallies apart.
    public func countsAddUpPerKey() async throws {
        let store = try await makeStore()
        let base = DeliveryTally(
            providerID: "sms-a", country: "GB", minute: Self.minute, outcome: .delivered, latencyMS: 2_000)
        try await store.countDeliveries(base)
        var three = base
        three.count = 3
        try await store.countDeliveries(three)
        var slower = base
        slower.latencyMS = 5_000
        var elsewhere = base
        elsewhere.country = nil
        var failed = base
        failed.outcome = .undelivered
        failed.latencyMS = 0
        var other = base
        other.providerID = "sms-b"
        var later = base
        later.minute += 60
        for tally in [slower, elsewhere, failed, other, later] { try await store.countDeliveries(tally) }
        var four = base
        four.count = 4
        #expect(
            Self.sorted(try await store.deliveryTallies(since: Self.minute))
                == Self.sorted([four, slower, elsewhere, failed, other, later]))
    }

    /// Forty counts of one key from eight tasks at once: forty, none lost to a race.
    public func concurrentCountsAllCount() async throws {
        let store = try await makeStore()
        let tally = DeliveryTally(providerID: "sms-a", country: "ID", minute: Self.minute, outcome: .delivered)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<5 { try await store.countDeliveries(tally) } }
            }
            try await group.waitForAll()
        }
        #expect(try await store.deliveryTallies(since: Self.minute).map(\.count) == [40])
    }

    /// A read leaves out the minutes before its first; a prune deletes the keys of minutes before its minute
    /// and says how many went.
    public func readSinceAndPruneBefore() async throws {
        let store = try await makeStore()
        for offset in 0..<4 {
            try await store.countDeliveries(
                DeliveryTally(
                    providerID: "sms-a", country: "US", minute: Self.minute + 60 * offset, outcome: .failed))
        }
        #expect(
            try await store.deliveryTallies(since: Self.minute + 120).map(\.minute).sorted() == [
                Self.minute + 120, Self.minute + 180,
            ])
        #expect(try await store.pruneDeliveryTallies(before: Self.minute + 60) == 1)
        #expect(try await store.pruneDeliveryTallies(before: Self.minute + 60) == 0)
        #expect(try await store.deliveryTallies(since: 0).count == 3)
    }
}
