import Foundation
import GatewayCore

/// The delivery tallies of own-code messages (``DeliveryStatsStore``): one row per provider, country, minute,
/// outcome and latency bucket, each count one upsert (atomic under the row's lock, so concurrent instances all
/// count). A number without a country is kept as the empty string, so that the key has no NULL in it.
extension SQLStore {
    /// Provisional like the adaptive evidence: nothing is answered from a tally.
    func countDeliveries(_ tally: DeliveryTally) async throws(GatewayError) {
        try await change(
            "count deliveries", durability: .provisional, DeliveryStatsRows.add,
            [
                .text(tally.providerID), .text(tally.country ?? ""), .int(tally.minute), .text(tally.outcome.rawValue),
                .int(tally.latencyMS), .int(tally.count),
            ])
    }

    func deliveryTallies(since minute: Int) async throws(GatewayError) -> [DeliveryTally] {
        try await rows("delivery tallies", DeliveryStatsRows.since, [.int(minute)]) { row in
            let country = row.text(1) ?? ""
            return DeliveryTally(
                providerID: row.text(0) ?? "", country: country.isEmpty ? nil : country, minute: row.int(2) ?? 0,
                outcome: DeliveryStatus(rawValue: row.text(3) ?? "") ?? .failed, latencyMS: row.int(4) ?? 0,
                count: row.int(5) ?? 0)
        }
    }

    @discardableResult
    func pruneDeliveryTallies(before minute: Int) async throws(GatewayError) -> Int {
        try await run("prune delivery tallies", DeliveryStatsRows.prune, [.int(minute)]) { $0.changed }
    }
}

/// The statements of `delivery_counts`.
enum DeliveryStatsRows {
    static let add = StoreStatement(
        """
        INSERT INTO delivery_counts (provider_id, country, minute, outcome, latency_ms, count)
        VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (provider_id, country, minute, outcome, latency_ms) DO UPDATE
        SET count = delivery_counts.count + excluded.count
        """)
    static let since = StoreStatement(
        "SELECT provider_id, country, minute, outcome, latency_ms, count FROM delivery_counts WHERE minute >= $1")
    static let prune = StoreStatement("DELETE FROM delivery_counts WHERE minute < $1")
}
