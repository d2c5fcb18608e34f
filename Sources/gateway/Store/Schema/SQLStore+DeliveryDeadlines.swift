import Foundation
import GatewayCore

/// The delivery deadlines of own-code messages (``DeliveryDeadlineStore``): one row per verification and send,
/// claimed by an instance by moving its due time on by a lease, in one transaction that in PostgreSQL skips
/// the rows other instances are claiming, so each deadline is acted on by one instance at a time.
extension SQLStore {
    func scheduleDeliveryDeadline(_ deadline: DeliveryDeadline) async throws(GatewayError) {
        try await change(
            "schedule delivery deadline", DeadlineRows.upsert,
            [
                .text(deadline.verificationID), .int(deadline.send), .text(deadline.providerID),
                .text(deadline.messageID), .date(deadline.dueAt),
            ])
    }

    func claimDueDeliveryDeadlines(at: Date, limit: Int, lease: TimeInterval) async throws(GatewayError)
        -> [DeliveryDeadline]
    {
        let leased = StoreValue.date(at.addingTimeInterval(lease))
        return try await run(
            StoreCall("claim delivery deadlines", atomicity: .transaction) {
                .run(DeadlineRows.due, [.date(at), .int(limit)]) { answer in
                    let due = try answer.rows(DeadlineRows.deadline(from:))
                    return .runEach(
                        due.map { (DeadlineRows.lease, [leased, .text($0.verificationID), .int($0.send)]) },
                        then: .done(due))
                }
            })
    }

    func expediteDeliveryDeadline(verificationID: String, providerID: String, messageID: String, to at: Date)
        async throws(GatewayError) -> Bool
    {
        try await run(
            "expedite delivery deadline", DeadlineRows.expedite,
            [
                .date(at), .text(verificationID), .text(providerID), .text(messageID),
            ]
        ) { $0.changed > 0 }
    }

    func removeDeliveryDeadline(verificationID: String, send: Int) async throws(GatewayError) {
        try await change("remove delivery deadline", DeadlineRows.remove, [.text(verificationID), .int(send)])
    }
}

/// The statements of `delivery_deadlines`, and how a ``DeliveryDeadline`` maps to a row.
enum DeadlineRows {
    static let columns = "verification_id, send, provider_id, message_id, due_at"
    static let upsert = StoreStatement(
        """
        INSERT INTO delivery_deadlines (\(columns)) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (verification_id, send) DO UPDATE
        SET provider_id = excluded.provider_id, message_id = excluded.message_id,
            due_at = CASE
                WHEN delivery_deadlines.provider_id = excluded.provider_id
                    AND delivery_deadlines.message_id = excluded.message_id
                    AND delivery_deadlines.due_at < excluded.due_at
                THEN delivery_deadlines.due_at ELSE excluded.due_at END
        """)
    static let due = StoreStatement(
        """
        SELECT \(columns) FROM delivery_deadlines WHERE due_at <= $1 ORDER BY due_at, verification_id, send LIMIT $2
        \(SQLDialect.skipLockedRows)
        """)
    static let lease = StoreStatement(
        "UPDATE delivery_deadlines SET due_at = $1 WHERE verification_id = $2 AND send = $3")
    static let expedite = StoreStatement(
        """
        UPDATE delivery_deadlines SET due_at = $1
        WHERE verification_id = $2 AND provider_id = $3 AND message_id = $4 AND due_at > $1
        """)
    static let remove = StoreStatement("DELETE FROM delivery_deadlines WHERE verification_id = $1 AND send = $2")

    static func deadline(from row: any StoreRow) throws(StoreError) -> DeliveryDeadline {
        DeliveryDeadline(
            verificationID: row.text(0) ?? "", send: row.int(1) ?? 0, providerID: row.text(2) ?? "",
            messageID: row.text(3) ?? "", dueAt: try row.date(4, "delivery deadline"))
    }
}
