import Foundation
import GatewayCore

/// Verification records and their event log (``VerificationRecordStore``). Updates are compare-and-set on
/// the record's version in SQL, so they stay exact with several processes (SQLite) or instances
/// (PostgreSQL) on one database; a record and its events are one transaction.
extension SQLStore {
    func insert(_ record: VerificationRecord) async throws(GatewayError) {
        try await insert(record, events: [])
    }

    /// The record and its first events in one transaction: one commit per start instead of one per row.
    func insert(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) {
        try await run(
            StoreCall("insert", atomicity: .transaction, duplicate: .internal("Duplicate verification id.")) {
                .run(
                    RecordRows.insert, try RecordRows.values(of: record),
                    then: try EventRows.inserts(events, then: .done(())))
            })
    }

    /// The record, its first events and the end of an idempotency claim's lease in one transaction: the
    /// Twilio front door's create pays one commit for both. The claim's update comes first, so that
    /// PostgreSQL takes the event log's lock last, as an insert alone does.
    func insert(
        _ record: VerificationRecord, events: [VerificationEvent], endingClaim key: IdempotencyKey, token: String
    ) async throws(GatewayError) {
        try await run(
            StoreCall(
                "insert ending claim", atomicity: .transaction, duplicate: .internal("Duplicate verification id.")
            ) {
                .run(
                    ClaimRows.progress,
                    ClaimRows.progressValues(
                        key, token: token, progress: IdempotencyProgress(stage: .claimed, verificationID: record.id),
                        until: record.createdAt),
                    then: .run(
                        RecordRows.insert, try RecordRows.values(of: record),
                        then: try EventRows.inserts(events, then: .done(()))))
            })
    }

    func record(id: String) async throws(GatewayError) -> VerificationRecord? {
        try await run("record", RecordRows.selectByID, [.text(id)]) { try $0.first(RecordRows.record(from:)) }
    }

    /// Served by the `(provider_id, provider_reference)` index.
    func record(providerID: String, reference: String) async throws(GatewayError) -> VerificationRecord? {
        try await run("record by reference", RecordRows.selectByReference, [.text(providerID), .text(reference)]) {
            try $0.first(RecordRows.record(from:))
        }
    }

    /// Served by the `(destination_value, created_at)` index, newest first.
    /// A read of committed rows (``SQLStore/read(_:)``): the Twilio front door makes it on every create.
    func openVerifications(destination: String, at: Date, limit: Int) async throws(GatewayError)
        -> [VerificationRecord]
    {
        try await read(
            StoreCall("open verifications") {
                .run(RecordRows.selectOpenByDestination, [.text(destination), .date(at), .int(limit)]) {
                    .done(try $0.rows(RecordRows.record(from:)))
                }
            })
    }

    func update(_ record: VerificationRecord) async throws(GatewayError) -> Bool {
        try await update(record, events: [], durability: .answered)
    }

    func update(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) -> Bool {
        try await update(record, events: events, durability: .answered)
    }

    func update(_ record: VerificationRecord, durability: StoreWriteDurability) async throws(GatewayError) -> Bool {
        try await update(record, events: [], durability: durability)
    }

    /// Compare-and-set on the version; the events only when it won, in the same transaction.
    private func update(
        _ record: VerificationRecord, events: [VerificationEvent], durability: StoreWriteDurability
    ) async throws(GatewayError) -> Bool {
        try await run(
            StoreCall("update", atomicity: events.isEmpty ? .none : .transaction, durability: durability) {
                .run(RecordRows.updateByVersion, try RecordRows.values(of: record) + [.int(record.version - 1)]) {
                    $0.changed == 1 ? try EventRows.inserts(events, then: .done(true)) : .done(false)
                }
            })
    }

    /// The read and the compare-and-set in one call. SQLite runs both in one transaction on its queue (one
    /// savepoint of a group): nothing can write the row between them, and a check's lease costs one store
    /// call, not two. PostgreSQL runs them on one connection without a transaction: `BEGIN` and `COMMIT`
    /// would be two more round trips and hold the row lock across them, for no gain in correctness, since the
    /// compare-and-set already decides a race.
    func modify(
        id: String, durability: StoreWriteDurability,
        _ change: @escaping @Sendable (VerificationRecord) -> VerificationRecord?
    ) async throws(GatewayError) -> StoreModification {
        try await run(
            StoreCall("modify", atomicity: .transactionWhereFree, durability: durability) {
                .run(RecordRows.selectByID, [.text(id)]) { answer in
                    guard let read = try answer.first(RecordRows.record(from:)) else {
                        return .done(StoreModification(read: nil, written: nil))
                    }
                    guard let next = change(read) else { return .done(StoreModification(read: read, written: nil)) }
                    return .run(RecordRows.updateByVersion, try RecordRows.values(of: next) + [.int(next.version - 1)])
                    {
                        .done(StoreModification(read: read, written: $0.changed == 1 ? next : nil))
                    }
                }
            })
    }

    func append(_ event: VerificationEvent) async throws(GatewayError) {
        try await append(contentsOf: [event], durability: .answered)
    }

    func append(contentsOf events: [VerificationEvent]) async throws(GatewayError) {
        try await append(contentsOf: events, durability: .answered)
    }

    func append(contentsOf events: [VerificationEvent], durability: StoreWriteDurability) async throws(GatewayError) {
        guard !events.isEmpty else { return }
        try await run(
            StoreCall("append", atomicity: .transaction, durability: durability) {
                try EventRows.inserts(events, then: .done(()))
            })
    }

    func events(verificationID: String) async throws(GatewayError) -> [VerificationEvent] {
        try await rows("events", EventRows.selectByVerification, [.text(verificationID)]) {
            try EventRows.event(from: $0, at: 0)
        }
    }

    func records(experiment: String, from: Date?, to: Date?) async throws(GatewayError) -> [VerificationRecord] {
        try await rows(
            "records", RecordRows.selectByExperiment,
            [
                .text(experiment), .real(from?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude),
                .real(to?.timeIntervalSince1970 ?? Double.greatestFiniteMagnitude),
            ], RecordRows.record(from:))
    }
}

extension RecordRows {
    static let selectByReference = StoreStatement(
        """
        SELECT \(columns) FROM verifications
        WHERE provider_id = $1 AND provider_reference = $2 ORDER BY created_at DESC, id DESC LIMIT 1
        """)
    static let selectOpenByDestination = StoreStatement(
        """
        SELECT \(columns) FROM verifications
        WHERE destination_value = $1 AND status = 'pending' AND expires_at > $2
        ORDER BY created_at DESC, id DESC LIMIT $3
        """)
    static let selectByExperiment = StoreStatement(
        """
        SELECT \(columns) FROM verifications
        WHERE experiment = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at, id
        """)
}

/// How a ``VerificationEvent`` maps to a `verification_events` row. `seq` numbers the log in commit order:
/// the webhook feeder's cursor (``SQLStore/webhookCursor()``) relies on it.
enum EventRows {
    static let insert = StoreStatement(
        """
        INSERT INTO verification_events (verification_id, kind, at, detail, provider_id, latency_ms, segments)
        VALUES ($1, $2, $3, $4, $5, $6, $7)
        """)
    static let selectByVerification = StoreStatement(
        "SELECT verification_id, kind, at, detail FROM verification_events WHERE verification_id = $1 ORDER BY seq")

    /// Inserts `events` after taking the event-log lock (held to commit), then goes on with `next`. The lock
    /// is the last one such a transaction takes (event rows lock nothing else), so it cannot deadlock.
    static func inserts<Value>(_ events: [VerificationEvent], then next: StoreStep<Value>) throws -> StoreStep<Value> {
        guard !events.isEmpty else { return next }
        let statements = try events.map { (event) throws(StoreError) -> (StoreStatement, [StoreValue]) in
            // A vendor call's vendor, latency and billed segments also in columns, for the console's
            // percentiles and cost.
            let isCall = event.kind == .providerCall
            let values: [StoreValue] = [
                .text(event.verificationID), .text(event.kind.rawValue), .date(event.at),
                .text(try StoreJSON.text(event.detail)), isCall ? .optionalText(event.detail["provider"]) : .null,
                isCall ? .optionalInt(event.detail["latency_ms"].flatMap { Int($0) }) : .null,
                isCall ? .optionalInt(event.detail["segments"].flatMap { Int($0) }) : .null,
            ]
            return (insert, values)
        }
        return .exclusive(.eventLog, next: .runEach(statements, then: next))
    }

    /// Reads `verification_id, kind, at, detail` from column `first` on.
    static func event(from row: any StoreRow, at first: Int32) throws(StoreError) -> VerificationEvent {
        let verificationID = row.text(first) ?? ""
        guard let raw = row.text(first + 1), let kind = VerificationEvent.Kind(rawValue: raw) else {
            throw StoreError.undecodableRow("event of verification \(verificationID) has an unknown kind")
        }
        return VerificationEvent(
            verificationID: verificationID, kind: kind, at: try row.date(first + 2, "event time"),
            detail: try StoreJSON.decode([String: String].self, row.text(first + 3), what: "event detail"))
    }
}
