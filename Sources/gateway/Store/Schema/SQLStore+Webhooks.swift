import Foundation
import GatewayCore

/// The webhook queue beside the verifications (``WebhookQueueStore``): the cursor over
/// `verification_events.seq`, whose numbers are handed out in commit order (SQLite has one writer; PostgreSQL
/// takes ``StoreLock/eventLog``), and the deliveries, which a sender claims with a lease (in PostgreSQL
/// skipping the rows other instances' senders hold).
extension SQLStore {
    func webhookCursor() async throws(GatewayError) -> Int64 {
        try await run(
            StoreCall("webhook cursor", atomicity: .transaction) {
                .run(
                    DeliveryRows.startCursor, [],
                    then: .run(DeliveryRows.cursor, []) { .done(try $0.first { $0.int64(0) ?? 0 } ?? 0) })
            })
    }

    func events(after sequence: Int64, limit: Int) async throws(GatewayError) -> [SequencedEvent] {
        try await rows("events after", DeliveryRows.eventsAfter, [.integer(sequence), .int(limit)]) { row in
            SequencedEvent(sequence: row.int64(0) ?? 0, event: try EventRows.event(from: row, at: 1))
        }
    }

    func enqueue(_ deliveries: [WebhookDelivery], cursorFrom from: Int64, to: Int64) async throws(GatewayError) -> Bool
    {
        try await run(
            StoreCall("enqueue webhooks", atomicity: .transaction) {
                .run(DeliveryRows.moveCursor, [.integer(to), .integer(from)]) {
                    // One delivery per endpoint and event, whatever happens.
                    $0.changed == 1
                        ? .runEach(deliveries.map { (DeliveryRows.insert, DeliveryRows.values($0)) }, then: .done(true))
                        : .done(false)
                }
            })
    }

    func claimDueWebhooks(at: Date, limit: Int, lease: TimeInterval) async throws(GatewayError) -> [WebhookDelivery] {
        let leased = StoreValue.date(at.addingTimeInterval(lease))
        return try await run(
            StoreCall("claim webhooks", atomicity: .transaction) {
                .run(DeliveryRows.due, [.date(at), .int(limit)]) { answer in
                    let due = try answer.rows(DeliveryRows.delivery(from:))
                    return .runEach(due.map { (DeliveryRows.lease, [leased, .text($0.id)]) }, then: .done(due))
                }
            })
    }

    func saveWebhook(_ delivery: WebhookDelivery) async throws(GatewayError) {
        try await change(
            "save webhook", DeliveryRows.save,
            [
                .text(delivery.state.rawValue), .int(delivery.attempts), .date(delivery.nextAttemptAt),
                .optionalText(delivery.lastError), .optionalDate(delivery.deliveredAt), .text(delivery.id),
            ])
    }

    func webhookDeliveries(state: WebhookDelivery.State?, limit: Int) async throws(GatewayError) -> [WebhookDelivery] {
        guard let state else {
            return try await rows(
                "webhook deliveries", DeliveryRows.newest, [.int(limit)], DeliveryRows.delivery(from:))
        }
        return try await rows(
            "webhook deliveries", DeliveryRows.newestInState, [.text(state.rawValue), .int(limit)],
            DeliveryRows.delivery(from:))
    }

    func webhookDelivery(id: String) async throws(GatewayError) -> WebhookDelivery? {
        try await rows("webhook delivery", DeliveryRows.byID, [.text(id)], DeliveryRows.delivery(from:)).first
    }

    func disableWebhookEndpoint(_ endpoint: String, at: Date, reason: String) async throws(GatewayError) {
        try await change(
            "disable webhook endpoint", DeliveryRows.disable, [.text(endpoint), .date(at), .text(reason)])
    }

    func enableWebhookEndpoint(_ endpoint: String) async throws(GatewayError) -> Bool {
        try await run("enable webhook endpoint", DeliveryRows.enable, [.text(endpoint)]) { $0.changed > 0 }
    }

    func disabledWebhookEndpoints() async throws(GatewayError) -> [String: DisabledWebhookEndpoint] {
        let found = try await rows("disabled webhook endpoints", DeliveryRows.disabled, []) {
            row throws(StoreError) -> DeliveryRows.Disabled in
            DeliveryRows.Disabled(
                endpoint: row.text(0) ?? "",
                disabled: DisabledWebhookEndpoint(at: try row.date(1, "disabled_at"), reason: row.text(2) ?? ""))
        }
        return Dictionary(found.map { ($0.endpoint, $0.disabled) }, uniquingKeysWith: { first, _ in first })
    }
}

/// The statements of `webhook_cursor` and `webhook_deliveries`, and how a ``WebhookDelivery`` maps to a row.
enum DeliveryRows {
    /// The first call starts the cursor at the newest event, so turning webhooks on does not replay history.
    /// A row of `webhook_endpoints_disabled`.
    struct Disabled {
        var endpoint: String
        var disabled: DisabledWebhookEndpoint
    }

    /// The first disabling of an endpoint stays; a repeat changes nothing.
    static let disable = StoreStatement(
        """
        INSERT INTO webhook_endpoints_disabled (endpoint, disabled_at, reason) VALUES ($1, $2, $3)
        ON CONFLICT (endpoint) DO NOTHING
        """)
    static let enable = StoreStatement("DELETE FROM webhook_endpoints_disabled WHERE endpoint = $1")
    static let disabled = StoreStatement("SELECT endpoint, disabled_at, reason FROM webhook_endpoints_disabled")
    static let startCursor = StoreStatement(
        """
        INSERT INTO webhook_cursor (id, seq)
        VALUES (1, (SELECT coalesce(max(seq), 0) FROM verification_events)) ON CONFLICT (id) DO NOTHING
        """)
    static let cursor = StoreStatement("SELECT seq FROM webhook_cursor WHERE id = 1")
    static let moveCursor = StoreStatement("UPDATE webhook_cursor SET seq = $1 WHERE id = 1 AND seq = $2")
    static let eventsAfter = StoreStatement(
        "SELECT seq, verification_id, kind, at, detail FROM verification_events WHERE seq > $1 ORDER BY seq LIMIT $2")

    static let columnNames = [
        "id", "event_id", "endpoint", "type", "verification_id", "payload", "state", "attempts", "next_attempt_at",
        "last_error", "created_at", "delivered_at",
    ]
    static let columns = columnNames.joined(separator: ", ")
    static let insert = StoreStatement(
        """
        INSERT INTO webhook_deliveries (\(columns))
        VALUES (\(StoreStatement.parameters(columnNames.count))) ON CONFLICT DO NOTHING
        """)
    static let due = StoreStatement(
        """
        SELECT \(columns) FROM webhook_deliveries
        WHERE state = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at, created_at LIMIT $2
        \(SQLDialect.skipLockedRows)
        """)
    static let lease = StoreStatement("UPDATE webhook_deliveries SET next_attempt_at = $1 WHERE id = $2")
    static let save = StoreStatement(
        """
        UPDATE webhook_deliveries
        SET state = $1, attempts = $2, next_attempt_at = $3, last_error = $4, delivered_at = $5
        WHERE id = $6
        """)
    static let newest = StoreStatement(
        "SELECT \(columns) FROM webhook_deliveries ORDER BY created_at DESC, id LIMIT $1")
    static let newestInState = StoreStatement(
        "SELECT \(columns) FROM webhook_deliveries WHERE state = $1 ORDER BY created_at DESC, id LIMIT $2")
    static let byID = StoreStatement("SELECT \(columns) FROM webhook_deliveries WHERE id = $1")

    static func values(_ delivery: WebhookDelivery) -> [StoreValue] {
        [
            .text(delivery.id), .text(delivery.eventID), .text(delivery.endpoint), .text(delivery.type.rawValue),
            .text(delivery.verificationID), .blob(delivery.payload), .text(delivery.state.rawValue),
            .int(delivery.attempts), .date(delivery.nextAttemptAt), .optionalText(delivery.lastError),
            .date(delivery.createdAt), .optionalDate(delivery.deliveredAt),
        ]
    }

    static func delivery(from row: any StoreRow) throws(StoreError) -> WebhookDelivery {
        guard let type = row.text(3).flatMap(WebhookEventType.init(rawValue:)),
            let state = row.text(6).flatMap(WebhookDelivery.State.init(rawValue:))
        else { throw StoreError.undecodableRow("webhook delivery \(row.text(0) ?? "?") has an unknown type or state") }
        return WebhookDelivery(
            id: row.text(0) ?? "", eventID: row.text(1) ?? "", endpoint: row.text(2) ?? "", type: type,
            verificationID: row.text(4) ?? "", payload: row.blob(5) ?? Data(), state: state,
            attempts: row.int(7) ?? 0, nextAttemptAt: try row.date(8, "next attempt"), lastError: row.text(9),
            createdAt: try row.date(10, "webhook created"),
            deliveredAt: row.isNull(11) ? nil : try row.date(11, "webhook delivered"))
    }
}
