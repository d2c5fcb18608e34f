import Foundation
import GatewayCore
import Logging
import Synchronization

/// The embedded default store: one SQLite file (WAL) under the data directory (DESIGN.md §8).
///
/// Every call runs on the file's ``SQLiteDatabase`` queue. Updates are compare-and-set on the record's
/// version in SQL, so they stay correct when several processes share the file. SQLite's own errors are
/// logged through the injected logger and surface only as `GatewayError(.internal, "storage failure")`.
final class SQLiteVerificationStore: VerificationStore {
    let database: SQLiteDatabase
    let logger: Logger
    /// Hits since expired rate counters were last deleted.
    private let hitsSincePurge = Mutex(0)

    /// Opens (or creates) the store at `path`, creating its directory and applying pending migrations.
    /// `synchronous` is `.full` unless the configuration says `sqlite_sync: normal`.
    init(
        path: String, synchronous: SQLiteSynchronous = .full, logger: Logger = Logger(label: "gateway.store.sqlite")
    ) throws(GatewayError) {
        self.logger = logger
        do {
            let database = try SQLiteDatabase(path: path, synchronous: synchronous)
            try database.performSync { (connection) throws(SQLiteError) in try SQLiteMigration.migrate(connection) }
            self.database = database
        } catch {
            throw Self.failure(error, operation: "open", logger: logger)
        }
    }

    /// Closes the file once queued work is done. Later calls fail with `internal`. Dropping the last
    /// reference closes it too.
    func close() {
        database.close()
    }

    func insert(_ record: VerificationRecord) async throws(GatewayError) {
        try await insert(record, events: [])
    }

    func record(id: String) async throws(GatewayError) -> VerificationRecord? {
        try await perform("record") { (connection) throws(SQLiteError) in
            try connection.query(
                Self.selectByID, [.text(id)], row: Self.record(from:)
            ).first
        }
    }

    func record(providerID: String, reference: String) async throws(GatewayError) -> VerificationRecord? {
        // Served by the (provider_id, provider_reference) index of migration 1.
        try await perform("record by reference") { (connection) throws(SQLiteError) in
            try connection.query(
                """
                SELECT \(Self.recordColumns) FROM verifications
                WHERE provider_id = ? AND provider_reference = ? ORDER BY created_at DESC, id DESC LIMIT 1
                """,
                [.text(providerID), .text(reference)], row: Self.record(from:)
            ).first
        }
    }

    func hit(_ key: String, limit: Int, window: TimeInterval, at: Date) async throws(GatewayError) -> RateDecision {
        let (start, retryAfter) = rateWindow(at: at, window: window)
        let purge = hitsSincePurge.withLock { count -> Bool in
            count += 1
            guard count >= 1000 else { return false }
            count = 0
            return true
        }
        let counted = try await perform("hit") { (connection) throws(SQLiteError) -> Bool in
            if purge { try connection.run("DELETE FROM rate_counters WHERE expires_at < ?", [.date(at)]) }
            // One statement: a new window starts at one, a full window changes nothing.
            return try connection.run(
                Self.counterUpsert
                    + " WHERE rate_counters.window_start != excluded.window_start OR rate_counters.count < ?4",
                [.text(key), .integer(start), .real(Double(start) + window), .int(limit)]) == 1
        }
        return counted ? .allowed : .refused(retryAfter: retryAfter)
    }

    /// Adds one to a counter in one statement: a new window starts at one. ``hit(_:limit:window:at:)`` adds
    /// a condition (a full window changes nothing), ``add(_:window:at:)`` returns the count.
    static let counterUpsert = """
        INSERT INTO rate_counters (key, window_start, expires_at, count) VALUES (?1, ?2, ?3, 1)
        ON CONFLICT (key) DO UPDATE SET
            count = CASE WHEN rate_counters.window_start = excluded.window_start
                THEN rate_counters.count + 1 ELSE 1 END,
            window_start = excluded.window_start,
            expires_at = excluded.expires_at
        """

    func add(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int {
        let (start, _) = rateWindow(at: at, window: window)
        return try await perform("add") { (connection) throws(SQLiteError) -> Int in
            try connection.query(
                Self.counterUpsert + " RETURNING count", [.text(key), .integer(start), .real(Double(start) + window)]
            ) { (row) throws(SQLiteError) in Int(row.int64(0) ?? 0) }.first ?? 0
        }
    }

    func count(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int {
        let (start, _) = rateWindow(at: at, window: window)
        return try await perform("count") { (connection) throws(SQLiteError) -> Int in
            try connection.query(
                "SELECT count FROM rate_counters WHERE key = ? AND window_start = ?", [.text(key), .integer(start)]
            ) { (row) throws(SQLiteError) in Int(row.int64(0) ?? 0) }.first ?? 0
        }
    }

    func block(_ block: PrefixBlock) async throws(GatewayError) {
        try await perform("block") { (connection) throws(SQLiteError) in
            try connection.run(
                """
                INSERT INTO prefix_blocks (prefix, blocked_at, until, starts, approvals, verification_id)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (prefix) DO UPDATE SET blocked_at = excluded.blocked_at, until = excluded.until,
                    starts = excluded.starts, approvals = excluded.approvals, verification_id = excluded.verification_id
                """,
                [
                    .text(block.prefix), .date(block.blockedAt), .date(block.until), .int(block.starts),
                    .int(block.approvals), .optionalText(block.verificationID),
                ])
        }
    }

    func activeBlock(prefix: String, at: Date) async throws(GatewayError) -> PrefixBlock? {
        try await blocks(where: "prefix = ? AND until > ?", [.text(prefix), .date(at)]).first
    }

    func blocks(at: Date) async throws(GatewayError) -> [PrefixBlock] {
        try await blocks(where: "until > ?", [.date(at)])
    }

    func liftBlock(prefix: String, at: Date) async throws(GatewayError) -> Bool {
        try await perform("lift") { (connection) throws(SQLiteError) -> Bool in
            try connection.run("DELETE FROM prefix_blocks WHERE prefix = ? AND until > ?", [.text(prefix), .date(at)]) == 1
        }
    }

    private func blocks(where condition: String, _ values: [SQLiteValue]) async throws(GatewayError) -> [PrefixBlock] {
        try await perform("blocks") { (connection) throws(SQLiteError) in
            try connection.query(
                """
                SELECT prefix, blocked_at, until, starts, approvals, verification_id FROM prefix_blocks
                WHERE \(condition) ORDER BY prefix
                """,
                values
            ) { (row) throws(SQLiteError) in
                PrefixBlock(
                    prefix: row.text(0) ?? "", blockedAt: Date(timeIntervalSince1970: row.double(1) ?? 0),
                    until: Date(timeIntervalSince1970: row.double(2) ?? 0), starts: Int(row.int64(3) ?? 0),
                    approvals: Int(row.int64(4) ?? 0), verificationID: row.text(5))
            }
        }
    }

    func update(_ record: VerificationRecord) async throws(GatewayError) -> Bool {
        try await update(record, events: [])
    }

    func update(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) -> Bool {
        try await update(record, events: events, durability: .answered)
    }

    func update(_ record: VerificationRecord, durability: StoreWriteDurability) async throws(GatewayError) -> Bool {
        try await update(record, events: [], durability: durability)
    }

    private func update(
        _ record: VerificationRecord, events: [VerificationEvent], durability: StoreWriteDurability
    ) async throws(GatewayError) -> Bool {
        try await perform("update", durability: Self.durability(durability)) { (connection) throws(SQLiteError) in
            let write = { () throws(SQLiteError) -> Bool in
                let changed = try connection.run(
                    Self.updateByVersion,
                    try Self.values(of: record) + [.int(record.version - 1)])
                guard changed == 1 else { return false }
                for event in events { try Self.insertEvent(event, connection) }
                return true
            }
            return events.isEmpty ? try write() : try connection.transaction(write)
        }
    }

    /// The read and the compare-and-set in one call on the queue, so one transaction (or one savepoint of a
    /// group): nothing can write the row between them, and a check's lease costs one store call, not two.
    func modify(
        id: String, durability: StoreWriteDurability,
        _ change: @escaping @Sendable (VerificationRecord) -> VerificationRecord?
    ) async throws(GatewayError) -> StoreModification {
        try await perform("modify", durability: Self.durability(durability)) { (connection) throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> StoreModification in
                guard let read = try connection.query(Self.selectByID, [.text(id)], row: Self.record(from:)).first
                else { return StoreModification(read: nil, written: nil) }
                guard let next = change(read) else { return StoreModification(read: read, written: nil) }
                let changed = try connection.run(Self.updateByVersion, try Self.values(of: next) + [.int(next.version - 1)])
                return StoreModification(read: read, written: changed == 1 ? next : nil)
            }
        }
    }

    /// A provisional write is committed without a sync of its own: the settle commit that always follows it
    /// syncs the WAL, its frames included (docs/performance.md, "Durability").
    private static func durability(_ durability: StoreWriteDurability) -> SQLiteWriteDurability {
        durability == .provisional ? .unsynced : .synced
    }

    func append(_ event: VerificationEvent) async throws(GatewayError) {
        try await append(contentsOf: [event])
    }

    func append(contentsOf events: [VerificationEvent]) async throws(GatewayError) {
        try await append(contentsOf: events, durability: .answered)
    }

    func append(contentsOf events: [VerificationEvent], durability: StoreWriteDurability) async throws(GatewayError) {
        guard !events.isEmpty else { return }
        try await perform("append", durability: Self.durability(durability)) { (connection) throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                for event in events { try Self.insertEvent(event, connection) }
            }
        }
    }

    /// The record and its first events in one transaction: one commit per start instead of one per row.
    func insert(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) {
        do {
            try await database.perform { (connection) throws(SQLiteError) in
                try connection.transaction { () throws(SQLiteError) in
                    try connection.run(
                        Self.insertRecord,
                        try Self.values(of: record))
                    for event in events { try Self.insertEvent(event, connection) }
                }
            }
        } catch {
            let failure = Self.failure(error, operation: "insert", logger: logger)
            throw error.isConstraintViolation ? GatewayError.internal("Duplicate verification id.") : failure
        }
    }

    private static func insertEvent(_ event: VerificationEvent, _ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run(
            "INSERT INTO verification_events (verification_id, kind, at, detail) VALUES (?, ?, ?, ?)",
            [.text(event.verificationID), .text(event.kind.rawValue), .date(event.at), .text(try json(event.detail))])
    }

    func records(experiment: String, from: Date?, to: Date?) async throws(GatewayError) -> [VerificationRecord] {
        try await perform("records") { (connection) throws(SQLiteError) in
            try connection.query(
                """
                SELECT \(Self.recordColumns) FROM verifications
                WHERE experiment = ? AND created_at >= ? AND created_at < ? ORDER BY created_at, id
                """,
                [
                    .text(experiment), .real(from?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude),
                    .real(to?.timeIntervalSince1970 ?? Double.greatestFiniteMagnitude),
                ],
                row: Self.record(from:))
        }
    }

    func events(verificationID: String) async throws(GatewayError) -> [VerificationEvent] {
        try await perform("events") { (connection) throws(SQLiteError) in
            try connection.query(
                "SELECT kind, at, detail FROM verification_events WHERE verification_id = ? ORDER BY seq",
                [.text(verificationID)]
            ) { (row) throws(SQLiteError) in
                guard let raw = row.text(0), let kind = VerificationEvent.Kind(rawValue: raw) else {
                    throw SQLiteError.undecodableRow("event of verification \(verificationID) has an unknown kind")
                }
                return VerificationEvent(
                    verificationID: verificationID, kind: kind, at: try Self.date(row.double(1), what: "event time"),
                    detail: try Self.decodeJSON([String: String].self, row.text(2), what: "event detail"))
            }
        }
    }

    /// The insert, the read and a takeover in one transaction on the queue: no other claim of the key runs
    /// between them (a second process sharing the file waits on the write lock).
    func claimIdempotencyKey(
        _ key: IdempotencyKey, fingerprint: String, token: String, at: Date, lease: TimeInterval
    ) async throws(GatewayError) -> IdempotencyClaim {
        let until = at.addingTimeInterval(lease)
        return try await perform("claim_idempotency_key") { (connection) throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> IdempotencyClaim in
                let inserted = try connection.run(
                    """
                    INSERT OR IGNORE INTO idempotency_keys
                        (scope, key, fingerprint, created_at, token, lease_until, stage)
                    VALUES (?, ?, ?, ?, ?, ?, 0)
                    """,
                    [.text(key.scope), .text(key.key), .text(fingerprint), .date(at), .text(token), .date(until)])
                if inserted == 1 { return .claimed }
                let stored = try connection.query(
                    """
                    SELECT fingerprint, status, body, lease_until, stage, verification_id FROM idempotency_keys
                    WHERE scope = ? AND key = ?
                    """,
                    [.text(key.scope), .text(key.key)]
                ) { (row) throws(SQLiteError) in
                    (
                        fingerprint: row.text(0), status: row.int64(1), body: row.blob(2), leaseUntil: row.double(3),
                        stage: row.int64(4), verificationID: row.text(5)
                    )
                }
                guard let stored = stored.first else {
                    throw SQLiteError.undecodableRow("idempotency key neither inserted nor found")
                }
                guard stored.fingerprint == fingerprint else { return .mismatch }
                if let status = stored.status {
                    return .replay(StoredResponse(status: Int(status), body: stored.body ?? Data()))
                }
                if let leaseUntil = stored.leaseUntil, leaseUntil > at.timeIntervalSince1970 { return .inProgress }
                try connection.run(
                    "UPDATE idempotency_keys SET token = ?, lease_until = ? WHERE scope = ? AND key = ?",
                    [.text(token), .date(until), .text(key.scope), .text(key.key)])
                return .takenOver(
                    IdempotencyProgress(
                        stage: IdempotencyProgress.Stage(rawValue: Int(stored.stage ?? 1)) ?? .vendorCallBegun,
                        verificationID: stored.verificationID))
            }
        }
    }

    func recordIdempotencyProgress(
        _ key: IdempotencyKey, token: String, progress: IdempotencyProgress, until: Date
    ) async throws(GatewayError) -> Bool {
        try await perform("record_idempotency_progress") { (connection) throws(SQLiteError) -> Bool in
            try connection.run(
                """
                UPDATE idempotency_keys SET stage = ?, verification_id = ?, lease_until = ?
                WHERE scope = ? AND key = ? AND token = ? AND status IS NULL
                """,
                [
                    .int(progress.stage.rawValue), .optionalText(progress.verificationID), .date(until),
                    .text(key.scope), .text(key.key), .text(token),
                ]) == 1
        }
    }

    @discardableResult
    func completeIdempotencyKey(
        _ key: IdempotencyKey, token: String, response: StoredResponse
    ) async throws(GatewayError) -> Bool {
        try await perform("complete_idempotency_key") { (connection) throws(SQLiteError) -> Bool in
            try connection.run(
                """
                UPDATE idempotency_keys SET status = ?, body = ?, lease_until = NULL
                WHERE scope = ? AND key = ? AND token = ?
                """,
                [.int(response.status), .blob(response.body), .text(key.scope), .text(key.key), .text(token)]) == 1
        }
    }

    func releaseIdempotencyKey(_ key: IdempotencyKey, token: String) async throws(GatewayError) {
        try await perform("release_idempotency_key") { (connection) throws(SQLiteError) in
            try connection.run(
                "DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND token = ? AND status IS NULL",
                [.text(key.scope), .text(key.key), .text(token)])
        }
    }

    func abandonIdempotencyKey(_ key: IdempotencyKey, token: String, at: Date) async throws(GatewayError) {
        try await perform("abandon_idempotency_key") { (connection) throws(SQLiteError) in
            try connection.run(
                """
                UPDATE idempotency_keys SET lease_until = ?1
                WHERE scope = ?2 AND key = ?3 AND token = ?4 AND status IS NULL AND lease_until > ?1
                """,
                [.date(at), .text(key.scope), .text(key.key), .text(token)])
        }
    }

    func heartbeat(_ instance: GatewayInstance) async throws(GatewayError) {
        // Unsynced: a heartbeat lost to a power loss only makes the instance look dead a little sooner, and
        // every instance of the file died with it anyway.
        try await perform("heartbeat", durability: .unsynced) { (connection) throws(SQLiteError) in
            try connection.run(
                """
                INSERT INTO gateway_instances (id, host, pid, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
                """,
                [
                    .text(instance.id), .text(instance.host), .int(instance.pid), .date(instance.startedAt),
                    .date(instance.heartbeatAt),
                ])
        }
    }

    func instances() async throws(GatewayError) -> [GatewayInstance] {
        try await perform("instances") { (connection) throws(SQLiteError) in
            try connection.query(
                "SELECT id, host, pid, started_at, heartbeat_at FROM gateway_instances ORDER BY id"
            ) { (row) throws(SQLiteError) in
                GatewayInstance(
                    id: row.text(0) ?? "", host: row.text(1) ?? "", pid: Int(row.int64(2) ?? 0),
                    startedAt: try Self.date(row.double(3), what: "instance started_at"),
                    heartbeatAt: try Self.date(row.double(4), what: "instance heartbeat_at"))
            }
        }
    }

    func removeInstance(id: String) async throws(GatewayError) {
        try await perform("remove_instance") { (connection) throws(SQLiteError) in
            try connection.run("DELETE FROM gateway_instances WHERE id = ?", [.text(id)])
        }
    }

    /// Served by the `created_at` index of migration 9; bounded, so one call never holds the file for long.
    func pruneIdempotencyKeys(claimedBefore before: Date, limit: Int) async throws(GatewayError) -> Int {
        try await perform("prune_idempotency_keys") { (connection) throws(SQLiteError) -> Int in
            try connection.run(
                """
                DELETE FROM idempotency_keys WHERE rowid IN (
                    SELECT rowid FROM idempotency_keys
                    WHERE created_at < ?1 AND (status IS NOT NULL OR lease_until IS NULL OR lease_until < ?1)
                    LIMIT ?2)
                """,
                [.date(before), .int(max(0, limit))])
        }
    }

    // MARK: - Failures

    /// Runs `body` on the database queue, turning SQLite's errors into `storage failure`.
    @discardableResult
    func perform<T: Sendable>(
        _ operation: String, durability: SQLiteWriteDurability = .synced,
        _ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T
    ) async throws(GatewayError) -> T {
        do {
            return try await database.perform(durability: durability, body)
        } catch {
            throw Self.failure(error, operation: operation, logger: logger)
        }
    }

    /// Logs what SQLite said (for operators) and returns the error API clients may see.
    static func failure(_ error: SQLiteError, operation: String, logger: Logger) -> GatewayError {
        logger.error(
            "storage failure",
            metadata: [
                "store.operation": "\(operation)",
                "sqlite.code": "\(error.code)",
                "sqlite.message": "\(error.message)",
            ])
        return GatewayError(.internal, "storage failure")
    }
}
