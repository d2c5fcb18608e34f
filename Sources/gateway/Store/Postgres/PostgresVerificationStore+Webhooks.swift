import Foundation
import GatewayCore
import PostgresNIO

/// The webhook queue in PostgreSQL: the cursor over `verification_events.seq` (commit-ordered thanks to
/// the event-log advisory lock, ``PostgresVerificationStore/eventLogLockKey``), and the deliveries, claimed
/// with `FOR UPDATE SKIP LOCKED` so several instances' senders never take the same one.
extension PostgresVerificationStore: WebhookQueueStore {
    func webhookCursor() async throws(GatewayError) -> Int64 {
        let logger = logger
        return try await transaction("webhook cursor") { connection -> Int64 in
            try await connection.run(
                """
                INSERT INTO webhook_cursor (id, seq)
                VALUES (1, (SELECT coalesce(max(seq), 0) FROM verification_events)) ON CONFLICT (id) DO NOTHING
                """, logger: logger)
            return try await connection.rows("SELECT seq FROM webhook_cursor WHERE id = 1", logger: logger) { row in
                row.int64(0) ?? 0
            }.first ?? 0
        }
    }

    func events(after sequence: Int64, limit: Int) async throws(GatewayError) -> [SequencedEvent] {
        let logger = logger
        return try await perform("events after") { connection in
            try await connection.rows(
                "SELECT seq, verification_id, kind, at, detail FROM verification_events WHERE seq > $1 ORDER BY seq LIMIT $2",
                [.integer(sequence), .int(limit)], logger: logger
            ) { (row) throws(SQLiteError) in
                guard let raw = row.text(2), let kind = VerificationEvent.Kind(rawValue: raw) else {
                    throw SQLiteError.undecodableRow("event \(row.int64(0) ?? 0) has an unknown kind")
                }
                return SequencedEvent(
                    sequence: row.int64(0) ?? 0,
                    event: VerificationEvent(
                        verificationID: row.text(1) ?? "", kind: kind,
                        at: try SQLiteVerificationStore.date(row.double(3), what: "event time"),
                        detail: try SQLiteVerificationStore.decodeJSON(
                            [String: String].self, row.text(4), what: "event detail")))
            }
        }
    }

    func enqueue(_ deliveries: [WebhookDelivery], cursorFrom from: Int64, to: Int64) async throws(GatewayError) -> Bool {
        let logger = logger
        return try await transaction("enqueue webhooks") { connection -> Bool in
            guard
                try await connection.run(
                    "UPDATE webhook_cursor SET seq = $1 WHERE id = 1 AND seq = $2 RETURNING 1", [.integer(to), .integer(from)],
                    logger: logger) == 1
            else { return false }
            for delivery in deliveries {
                // One delivery per endpoint and event, whatever happens.
                try await connection.run(
                    """
                    INSERT INTO webhook_deliveries (\(SQLiteVerificationStore.deliveryColumns))
                    VALUES (\(Self.placeholders(12))) ON CONFLICT DO NOTHING
                    """, SQLiteVerificationStore.values(delivery), logger: logger)
            }
            return true
        }
    }

    func claimDueWebhooks(at: Date, limit: Int, lease: TimeInterval) async throws(GatewayError) -> [WebhookDelivery] {
        let logger = logger
        return try await transaction("claim webhooks") { connection in
            let due = try await connection.rows(
                """
                SELECT \(SQLiteVerificationStore.deliveryColumns) FROM webhook_deliveries
                WHERE state = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at, created_at LIMIT $2
                FOR UPDATE SKIP LOCKED
                """, [.date(at), .int(limit)], logger: logger, SQLiteVerificationStore.delivery(from:))
            guard !due.isEmpty else { return [] }
            var bindings = PostgresBindings()
            bindings.append(at.addingTimeInterval(lease).timeIntervalSince1970)
            bindings.append(due.map(\.id))
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "UPDATE webhook_deliveries SET next_attempt_at = $1 WHERE id = ANY($2)", binds: bindings),
                logger: logger)
            return due
        }
    }

    func saveWebhook(_ delivery: WebhookDelivery) async throws(GatewayError) {
        let logger = logger
        try await perform("save webhook") { connection in
            try await connection.run(
                """
                UPDATE webhook_deliveries SET state = $1, attempts = $2, next_attempt_at = $3, last_error = $4,
                    delivered_at = $5
                WHERE id = $6
                """,
                [
                    .text(delivery.state.rawValue), .int(delivery.attempts), .date(delivery.nextAttemptAt),
                    .optionalText(delivery.lastError), delivery.deliveredAt.map(SQLiteValue.date) ?? .null,
                    .text(delivery.id),
                ], logger: logger)
        }
    }

    func webhookDeliveries(state: WebhookDelivery.State?, limit: Int) async throws(GatewayError) -> [WebhookDelivery] {
        let logger = logger
        return try await perform("webhook deliveries") { connection in
            if let state {
                return try await connection.rows(
                    """
                    SELECT \(SQLiteVerificationStore.deliveryColumns) FROM webhook_deliveries WHERE state = $1
                    ORDER BY created_at DESC, id LIMIT $2
                    """,
                    [.text(state.rawValue), .int(limit)], logger: logger, SQLiteVerificationStore.delivery(from:))
            }
            return try await connection.rows(
                "SELECT \(SQLiteVerificationStore.deliveryColumns) FROM webhook_deliveries ORDER BY created_at DESC, id LIMIT $1",
                [.int(limit)], logger: logger, SQLiteVerificationStore.delivery(from:))
        }
    }

    func webhookDelivery(id: String) async throws(GatewayError) -> WebhookDelivery? {
        let logger = logger
        return try await perform("webhook delivery") { connection in
            try await connection.rows(
                "SELECT \(SQLiteVerificationStore.deliveryColumns) FROM webhook_deliveries WHERE id = $1", [.text(id)],
                logger: logger, SQLiteVerificationStore.delivery(from:)
            ).first
        }
    }
}

/// `api_keys` rows: the keys `gateway keys` manages, shared by every instance on the store.
extension PostgresVerificationStore: APIKeyStore {
    func apiKey(hash: String) async throws(GatewayError) -> APIKey? {
        try await storedKeys(where: "hash = $1 AND revoked_at IS NULL", [.text(hash.lowercased())]).first?.key
    }

    func insertAPIKey(_ stored: StoredAPIKey) async throws(GatewayError) {
        let logger = logger
        let values: [SQLiteValue]
        do {
            var countries = SQLiteValue.null
            if let list = stored.key.countries { countries = .text(try SQLiteVerificationStore.json(list.sorted())) }
            values = [
                .text(stored.key.id), .text(stored.hash), .text(stored.key.name),
                .text(try SQLiteVerificationStore.json(stored.key.scopes.map(\.rawValue).sorted())), countries,
                .date(stored.createdAt), stored.revokedAt.map(SQLiteValue.date) ?? .null,
                stored.key.startsPerHour.map(SQLiteValue.int) ?? .null,
            ]
        } catch {
            throw Self.failure(error, operation: "insert api key", logger: logger)
        }
        try await perform("insert api key") { connection in
            try await connection.run(
                """
                INSERT INTO api_keys (id, hash, name, scopes, countries, created_at, revoked_at, starts_per_hour)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                """, values, logger: logger)
        }
    }

    func apiKeys() async throws(GatewayError) -> [StoredAPIKey] {
        try await storedKeys(where: "TRUE", [])
    }

    func revokeAPIKey(id: String, at: Date) async throws(GatewayError) -> Bool {
        let logger = logger
        return try await perform("revoke api key") { connection -> Bool in
            try await connection.run(
                "UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING 1", [.date(at), .text(id)],
                logger: logger) == 1
        }
    }

    private func storedKeys(where condition: String, _ values: [SQLiteValue]) async throws(GatewayError)
        -> [StoredAPIKey]
    {
        let logger = logger
        return try await perform("api keys") { connection in
            try await connection.rows(
                """
                SELECT id, hash, name, scopes, countries, created_at, revoked_at, starts_per_hour FROM api_keys
                WHERE \(condition) ORDER BY created_at, id
                """, values, logger: logger
            ) { (row) throws(SQLiteError) -> StoredAPIKey in
                let scopes = try SQLiteVerificationStore.decodeJSON([String].self, row.text(3), what: "api key scopes")
                    .compactMap(APIKey.Scope.init(rawValue:))
                let countries = try row.text(4).map { (text) throws(SQLiteError) in
                    Set(try SQLiteVerificationStore.decodeJSON([String].self, text, what: "api key countries"))
                }
                return StoredAPIKey(
                    key: APIKey(
                        id: row.text(0) ?? "", name: row.text(2) ?? "", scopes: Set(scopes), countries: countries,
                        startsPerHour: row.int64(7).map { Int($0) }),
                    hash: row.text(1) ?? "", createdAt: Date(timeIntervalSince1970: row.double(5) ?? 0),
                    revokedAt: row.double(6).map(Date.init(timeIntervalSince1970:)))
            }
        }
    }
}
