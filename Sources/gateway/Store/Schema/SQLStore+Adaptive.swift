import Foundation
import GatewayCore

/// The evidence of adaptive routes (``AdaptiveEvidenceStore``): one row per route, context, provider and time
/// bucket, each change one upsert (atomic under the row's lock, so concurrent instances all count).
extension SQLStore {
    /// Provisional: nothing is answered from a count, so it is not synced by itself (SQLite); the next
    /// answered commit's sync carries it, and a power loss before that loses a count or two of the statistics.
    func addAdaptiveEvidence(_ cell: AdaptiveCell) async throws(GatewayError) {
        try await change(
            "adaptive evidence", durability: .provisional, AdaptiveRows.add,
            [
                .text(cell.route), .text(cell.context), .text(cell.providerID), .int(cell.bucketStart),
                .int(cell.bucketSeconds), .int(cell.starts), .int(cell.approvals), .int(cell.failures),
            ])
    }

    func adaptiveEvidence(route: String, context: String?, since: Int) async throws(GatewayError) -> [AdaptiveCell] {
        if let context {
            return try await rows(
                "adaptive evidence", AdaptiveRows.selectContext, [.text(route), .text(context), .int(since)],
                AdaptiveRows.cell(from:))
        }
        return try await rows(
            "adaptive evidence", AdaptiveRows.selectRoute, [.text(route), .int(since)], AdaptiveRows.cell(from:))
    }

    func pruneAdaptiveEvidence(before: Int) async throws(GatewayError) -> Int {
        try await run("adaptive prune", AdaptiveRows.prune, [.int(before)]) { $0.changed }
    }

    /// Served by the `(destination_value, created_at)` index, newest first; a read of committed rows
    /// (``SQLStore/read(_:)``), since every adaptive start makes it.
    func openProvider(destination: String, route: String, at: Date) async throws(GatewayError) -> String? {
        try await read(
            StoreCall("open provider") {
                .run(AdaptiveRows.openProvider, [.text(destination), .text(route), .date(at)]) {
                    .done(try $0.first { $0.text(0) }.flatMap { $0 })
                }
            })
    }
}

/// The statements of `adaptive_evidence`.
enum AdaptiveRows {
    static let add = StoreStatement(
        """
        INSERT INTO adaptive_evidence
            (route, context, provider_id, bucket_start, bucket_seconds, starts, approvals, failures)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        ON CONFLICT (route, context, provider_id, bucket_start, bucket_seconds) DO UPDATE SET
            starts = adaptive_evidence.starts + excluded.starts,
            approvals = adaptive_evidence.approvals + excluded.approvals,
            failures = adaptive_evidence.failures + excluded.failures
        """)
    private static let columns =
        "SELECT route, context, provider_id, bucket_start, bucket_seconds, starts, approvals, failures"
        + " FROM adaptive_evidence"
    static let selectContext = StoreStatement(
        "\(columns) WHERE route = $1 AND context = $2 AND bucket_start >= $3 ORDER BY provider_id, bucket_start")
    static let selectRoute = StoreStatement(
        "\(columns) WHERE route = $1 AND bucket_start >= $2 ORDER BY context, provider_id, bucket_start")
    static let prune = StoreStatement("DELETE FROM adaptive_evidence WHERE bucket_start < $1")
    static let openProvider = StoreStatement(
        """
        SELECT provider_id FROM verifications
        WHERE destination_value = $1 AND route = $2 AND status = 'pending' AND expires_at > $3
        ORDER BY created_at DESC LIMIT 1
        """)

    static func cell(from row: any StoreRow) -> AdaptiveCell {
        AdaptiveCell(
            route: row.text(0) ?? "", context: row.text(1) ?? "", providerID: row.text(2) ?? "",
            bucketStart: row.int(3) ?? 0, bucketSeconds: row.int(4) ?? 1, starts: row.int(5) ?? 0,
            approvals: row.int(6) ?? 0, failures: row.int(7) ?? 0)
    }
}
