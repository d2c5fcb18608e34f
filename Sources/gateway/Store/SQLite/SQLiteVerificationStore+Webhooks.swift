import Foundation
import GatewayCore

/// The webhook queue in the same file as the verifications (migration 8): the cursor over
/// `verification_events.seq` (an AUTOINCREMENT key, so numbers only grow, in commit order since SQLite has
/// one writer at a time) and the deliveries.
extension SQLiteVerificationStore: WebhookQueueStore {
    func webhookCursor() async throws(GatewayError) -> Int64 {
        try await perform("webhook cursor") { (connection) throws(SQLiteError) -> Int64 in
            try connection.transaction { () throws(SQLiteError) -> Int64 in
                _ = try connection.run(
                    """
                    INSERT OR IGNORE INTO webhook_cursor (id, seq)
                    VALUES (1, (SELECT coalesce(max(seq), 0) FROM verification_events))
                    """)
                return try connection.query("SELECT seq FROM webhook_cursor WHERE id = 1") {
                    (row) throws(SQLiteError) in row.int64(0) ?? 0
                }.first ?? 0
            }
        }
    }

    func events(after sequence: Int64, limit: Int) async throws(GatewayError) -> [SequencedEvent] {
        try await perform("events after") { (connection) throws(SQLiteError) in
            try connection.query(
                "SELECT seq, verification_id, kind, at, detail FROM verification_events WHERE seq > ? ORDER BY seq LIMIT ?",
                [.integer(sequence), .int(limit)]
            ) { (row) throws(SQLiteError) in
                guard let raw = row.text(2), let kind = VerificationEvent.Kind(rawValue: raw) else {
                    throw SQLiteError.undecodableRow("event \(row.int64(0) ?? 0) has an unknown kind")
                }
                return SequencedEvent(
                    sequence: row.int64(0) ?? 0,
                    event: VerificationEvent(
                        verificationID: row.text(1) ?? "", kind: kind, at: try Self.date(row.double(3), what: "event time"),
                        detail: try Self.decodeJSON([String: String].self, row.text(4), what: "event detail")))
            }
        }
    }

    func enqueue(_ deliveries: [WebhookDelivery], cursorFrom from: Int64, to: Int64) async throws(GatewayError) -> Bool {
        try await perform("enqueue webhooks") { (connection) throws(SQLiteError) -> Bool in
            try connection.transaction { () throws(SQLiteError) -> Bool in
                guard try connection.run("UPDATE webhook_cursor SET seq = ? WHERE id = 1 AND seq = ?", [.integer(to), .integer(from)]) == 1
                else { return false }
                for delivery in deliveries {
                    // One delivery per endpoint and event, whatever happens.
                    _ = try connection.run(
                        """
                        INSERT OR IGNORE INTO webhook_deliveries (id, event_id, endpoint, type, verification_id, payload,
                            state, attempts, next_attempt_at, last_error, created_at, delivered_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, Self.values(delivery))
                }
                return true
            }
        }
    }

    func claimDueWebhooks(at: Date, limit: Int, lease: TimeInterval) async throws(GatewayError) -> [WebhookDelivery] {
        try await perform("claim webhooks") { (connection) throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                let due = try connection.query(
                    """
                    SELECT \(Self.deliveryColumns) FROM webhook_deliveries
                    WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, created_at LIMIT ?
                    """, [.date(at), .int(limit)], row: Self.delivery(from:))
                for delivery in due {
                    _ = try connection.run(
                        "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?",
                        [.date(at.addingTimeInterval(lease)), .text(delivery.id)])
                }
                return due
            }
        }
    }

    func saveWebhook(_ delivery: WebhookDelivery) async throws(GatewayError) {
        _ = try await perform("save webhook") { (connection) throws(SQLiteError) -> Int in
            try connection.run(
                """
                UPDATE webhook_deliveries SET state = ?, attempts = ?, next_attempt_at = ?, last_error = ?, delivered_at = ?
                WHERE id = ?
                """,
                [
                    .text(delivery.state.rawValue), .int(delivery.attempts), .date(delivery.nextAttemptAt),
                    .optionalText(delivery.lastError), delivery.deliveredAt.map(SQLiteValue.date) ?? .null,
                    .text(delivery.id),
                ])
        }
    }

    func webhookDeliveries(state: WebhookDelivery.State?, limit: Int) async throws(GatewayError) -> [WebhookDelivery] {
        try await perform("webhook deliveries") { (connection) throws(SQLiteError) in
            if let state {
                return try connection.query(
                    "SELECT \(Self.deliveryColumns) FROM webhook_deliveries WHERE state = ? ORDER BY created_at DESC, id LIMIT ?",
                    [.text(state.rawValue), .int(limit)], row: Self.delivery(from:))
            }
            return try connection.query(
                "SELECT \(Self.deliveryColumns) FROM webhook_deliveries ORDER BY created_at DESC, id LIMIT ?",
                [.int(limit)], row: Self.delivery(from:))
        }
    }

    func webhookDelivery(id: String) async throws(GatewayError) -> WebhookDelivery? {
        try await perform("webhook delivery") { (connection) throws(SQLiteError) in
            try connection.query(
                "SELECT \(Self.deliveryColumns) FROM webhook_deliveries WHERE id = ?", [.text(id)],
                row: Self.delivery(from:)
            ).first
        }
    }

    static let deliveryColumns =
        "id, event_id, endpoint, type, verification_id, payload, state, attempts, next_attempt_at, last_error, created_at, delivered_at"

    static func values(_ delivery: WebhookDelivery) -> [SQLiteValue] {
        [
            .text(delivery.id), .text(delivery.eventID), .text(delivery.endpoint), .text(delivery.type.rawValue),
            .text(delivery.verificationID), .blob(delivery.payload), .text(delivery.state.rawValue),
            .int(delivery.attempts), .date(delivery.nextAttemptAt), .optionalText(delivery.lastError),
            .date(delivery.createdAt), delivery.deliveredAt.map(SQLiteValue.date) ?? .null,
        ]
    }

    static func delivery(from row: some StoreRow) throws(SQLiteError) -> WebhookDelivery {
        guard let type = row.text(3).flatMap(WebhookEventType.init(rawValue:)),
            let state = row.text(6).flatMap(WebhookDelivery.State.init(rawValue:))
        else { throw SQLiteError.undecodableRow("webhook delivery \(row.text(0) ?? "?") has an unknown type or state") }
        return WebhookDelivery(
            id: row.text(0) ?? "", eventID: row.text(1) ?? "", endpoint: row.text(2) ?? "", type: type,
            verificationID: row.text(4) ?? "", payload: row.blob(5) ?? Data(), state: state,
            attempts: Int(row.int64(7) ?? 0), nextAttemptAt: try date(row.double(8), what: "next attempt"),
            lastError: row.text(9), createdAt: try date(row.double(10), what: "webhook created"),
            deliveredAt: row.isNull(11) ? nil : try date(row.double(11), what: "webhook delivered"))
    }
}
