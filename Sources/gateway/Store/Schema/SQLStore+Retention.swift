import Foundation
import GatewayCore

/// What one batch of a retention task did (``RetentionService``).
struct RetentionBatch: Sendable, Equatable {
    /// Verifications the batch took: deleted, anonymized, or whose events it deleted.
    var verifications = 0
    /// Event rows deleted.
    var events = 0
    /// Other rows deleted (delivery deadlines, webhook deliveries).
    var other = 0
    /// Verifications the batch looked at: a task that keeps its rows (anonymizing) may change fewer.
    var visited = 0
}

/// The store's side of retention (docs/operations.md, "Retention"): bounded batches, each one transaction, so
/// that no call holds the store for long. Several instances may run them at once: a batch deletes or changes
/// only what is still there, and PostgreSQL skips rows another instance's batch holds.
extension SQLStore {
    /// Deletes up to ``RetentionRows/batchLimit`` (and `limit`) verifications created before `horizon` that
    /// expired before `now`, oldest first, with their events and delivery deadlines, in one transaction.
    func deleteVerifications(createdBefore horizon: Date, now: Date, limit: Int) async throws(GatewayError)
        -> RetentionBatch
    {
        let limit = min(max(1, limit), RetentionRows.batchLimit)
        return try await run(
            StoreCall("retention delete verifications", atomicity: .transaction) {
                .run(RetentionRows.deleteVerifications, [.date(horizon), .date(now), .int(limit)]) { answer in
                    let ids = try answer.rows { row in row.text(0) ?? "" }
                    guard !ids.isEmpty else { return .done(RetentionBatch()) }
                    let padded = RetentionRows.padded(ids)
                    return .run(RetentionRows.eventsOf, padded) { events in
                        let eventCount = events.changed
                        return .run(RetentionRows.deadlinesOf, padded) { deadlines in
                            .done(
                                RetentionBatch(
                                    verifications: ids.count, events: eventCount, other: deadlines.changed,
                                    visited: ids.count))
                        }
                    }
                }
            })
    }

    /// Deletes the events of up to `limit` verifications created before `horizon`, the next ones after the
    /// `events` task's progress mark, and moves the mark past them. The verifications stay.
    func deleteEvents(createdBefore horizon: Date, limit: Int) async throws(GatewayError) -> RetentionBatch {
        try await runTask(RetentionRows.eventsTask, createdBefore: horizon, limit: limit) { rows, finish in
            let deleted = rows.count
            return .run(RetentionRows.eventsOf, RetentionRows.padded(rows.map(\.id))) { events in
                finish(RetentionBatch(verifications: deleted, events: events.changed, visited: deleted))
            }
        }
    }

    /// Replaces the destination of up to `limit` verifications created before `horizon` (the next ones after
    /// the `anonymize` task's mark) with what `anonymize` makes of it, the masked form shown and the keyed hash
    /// stored in its place, and moves the mark past them.
    func anonymize(
        createdBefore horizon: Date, limit: Int,
        _ anonymize: @escaping @Sendable (_ kind: String, _ value: String) -> (masked: String, digest: String)
    ) async throws(GatewayError) -> RetentionBatch {
        try await runTask(RetentionRows.anonymizeTask, createdBefore: horizon, limit: limit) { rows, finish in
            let changes = rows.filter { $0.kind != "anonymized" }.map { row in
                let (masked, digest) = anonymize(row.kind, row.value)
                return (RetentionRows.anonymize, [StoreValue.text(row.id), .text(digest), .text(masked)])
            }
            return .runEach(changes, then: finish(RetentionBatch(verifications: changes.count, visited: rows.count)))
        }
    }

    /// Deletes up to `limit` webhook deliveries queued before `horizon` that were delivered or parked.
    func deleteWebhookDeliveries(createdBefore horizon: Date, limit: Int) async throws(GatewayError) -> Int {
        try await run(
            "retention delete webhook deliveries", RetentionRows.deleteWebhookDeliveries,
            [.date(horizon), .int(min(max(1, limit), RetentionRows.batchLimit))]
        ) { $0.changed }
    }

    /// One batch of a task that keeps the rows it visits: reads the task's mark, the next verifications after it
    /// created before `horizon`, runs `body` on them, and moves the mark to the last; one transaction. `body` ends
    /// with the step its second argument makes of the batch's figures (the mark's move, then the answer).
    private func runTask(
        _ task: String, createdBefore horizon: Date, limit: Int,
        _ body:
            @escaping @Sendable (
                [RetentionRows.Visited], _ finish: @escaping @Sendable (RetentionBatch) -> StoreStep<RetentionBatch>
            ) throws -> StoreStep<RetentionBatch>
    ) async throws(GatewayError) -> RetentionBatch {
        let limit = min(max(1, limit), RetentionRows.batchLimit)
        return try await run(
            StoreCall("retention \(task)", atomicity: .transaction) {
                .run(RetentionRows.progress, [.text(task)]) { answer in
                    let mark = try answer.first { row in
                        RetentionRows.Mark(createdAt: try row.date(0, "retention progress"), id: row.text(1) ?? "")
                    }
                    let after = mark ?? RetentionRows.Mark(createdAt: Date(timeIntervalSince1970: 0), id: "")
                    return .run(
                        RetentionRows.after, [.date(after.createdAt), .text(after.id), .date(horizon), .int(limit)]
                    ) { answer in
                        let rows = try answer.rows { row in
                            RetentionRows.Visited(
                                id: row.text(0) ?? "", createdAt: try row.date(1, "verification created_at"),
                                kind: row.text(2) ?? "", value: row.text(3) ?? "")
                        }
                        guard let last = rows.last else { return .done(RetentionBatch()) }
                        return try body(rows) { batch in
                            .run(
                                RetentionRows.advance, [.text(task), .date(last.createdAt), .text(last.id)],
                                then: .done(batch))
                        }
                    }
                }
            })
    }
}

/// The statements of retention.
enum RetentionRows {
    /// The most rows one batch takes: the id lists below are this many parameters, unused ones bound to NULL,
    /// so each statement has one text (and one prepared statement) whatever the batch's size.
    static let batchLimit = 500
    static let eventsTask = "events"
    static let anonymizeTask = "anonymize"

    struct Mark: Sendable {
        var createdAt: Date
        var id: String
    }

    struct Visited: Sendable {
        var id: String
        var createdAt: Date
        var kind: String
        var value: String
    }

    static func padded(_ ids: [String]) -> [StoreValue] {
        ids.map(StoreValue.text) + Array(repeating: StoreValue.null, count: max(0, batchLimit - ids.count))
    }

    /// The oldest verifications created before `$1` that expired before `$2`, by the `created_at` index.
    static let deleteVerifications = StoreStatement(
        """
        DELETE FROM verifications WHERE id IN (
            SELECT id FROM verifications WHERE created_at < $1 AND expires_at < $2
            ORDER BY created_at LIMIT $3 \(SQLDialect.skipLockedRows))
        RETURNING id
        """)
    static let eventsOf = StoreStatement(
        "DELETE FROM verification_events WHERE verification_id IN (\(StoreStatement.parameters(batchLimit)))")
    static let deadlinesOf = StoreStatement(
        "DELETE FROM delivery_deadlines WHERE verification_id IN (\(StoreStatement.parameters(batchLimit)))")
    static let progress = StoreStatement("SELECT created_at, id FROM retention_progress WHERE task = $1")
    /// The verifications after the mark (`$1`, `$2`) created before `$3`, in (created_at, id) order.
    static let after = StoreStatement(
        """
        SELECT id, created_at, destination_kind, destination_value FROM verifications
        WHERE created_at >= $1 AND (created_at > $1 OR id > $2) AND created_at < $3
        ORDER BY created_at, id LIMIT $4
        """)
    /// Moves a task's mark forward, never back (two instances may finish batches out of order).
    static let advance = StoreStatement(
        """
        INSERT INTO retention_progress (task, created_at, id) VALUES ($1, $2, $3)
        ON CONFLICT (task) DO UPDATE SET created_at = excluded.created_at, id = excluded.id
        WHERE excluded.created_at > retention_progress.created_at
            OR (excluded.created_at = retention_progress.created_at AND excluded.id > retention_progress.id)
        """)
    /// A new version too: an update the engine made from the record as it was read before (a late receipt) no
    /// longer matches, so it reads the record again rather than writing the number back. Its next action goes too:
    /// long over by then, and a silent step's URL names the number (CAMARA's `login_hint`).
    static let anonymize = StoreStatement(
        """
        UPDATE verifications SET destination_kind = 'anonymized', destination_value = $2, destination_masked = $3,
            next_action = NULL, version = version + 1
        WHERE id = $1 AND destination_kind <> 'anonymized'
        """)
    static let deleteWebhookDeliveries = StoreStatement(
        """
        DELETE FROM webhook_deliveries WHERE id IN (
            SELECT id FROM webhook_deliveries WHERE created_at < $1 AND state <> 'pending'
            ORDER BY created_at LIMIT $2 \(SQLDialect.skipLockedRows))
        """)
}
