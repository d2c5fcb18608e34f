import Foundation
import GatewayCore
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

/// The shared store for several gateway instances: PostgreSQL through postgres-nio's connection pool.
///
/// The same semantics as ``SQLiteVerificationStore``, made exact across instances by the server: updates
/// are compare-and-set on the record's version, a record and its events are one transaction, idempotency
/// claims and rate counters are single upserts, and event inserts take a transaction-level advisory lock
/// so sequence numbers are handed out in commit order (docs/architecture.md §9). Every operation has a
/// deadline (``PostgresStoreSettings/timeout``); a server that is down, refuses connections or does not
/// answer in time surfaces as `503 store_unavailable`, and the pool reconnects by itself when it is back.
final class PostgresVerificationStore: VerificationStore {
    let client: PostgresClient
    let settings: PostgresStoreSettings
    let logger: Logger
    private let runner: Task<Void, Never>
    let reachability: PostgresReachability
    private let hitsSincePurge = Mutex(0)

    /// Starts the pool (it runs until ``close()``) and applies pending migrations. `searchPath` puts every
    /// table in that schema, made when missing (tests give each store its own).
    init(settings: PostgresStoreSettings, searchPath: String? = nil, logger: Logger) async throws(GatewayError) {
        let tls: PostgresClient.Configuration.TLS
        switch settings.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: settings.host, port: settings.port, username: settings.username, password: settings.password,
            database: settings.database, tls: tls)
        configuration.options.maximumConnections = max(1, settings.poolSize)
        configuration.options.connectTimeout = settings.connectTimeout
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(15))
        let milliseconds = settings.timeout.components.seconds * 1000 + settings.timeout.components.attoseconds / 1_000_000_000_000_000
        var parameters = [
            ("application_name", "verification-gateway"),
            // The server gives up too, so a stuck statement does not hold a connection past the deadline.
            ("statement_timeout", "\(milliseconds)"),
            ("lock_timeout", "\(milliseconds)"),
        ]
        if let searchPath { parameters.append(("search_path", searchPath)) }
        configuration.options.additionalStartupParameters = parameters
        var poolLogger = logger
        poolLogger[metadataKey: "store"] = .string(settings.displayURL)
        let client = PostgresClient(configuration: configuration, backgroundLogger: poolLogger)
        self.client = client
        reachability = PostgresReachability(host: settings.host, port: settings.port)
        self.settings = settings
        self.logger = logger
        runner = Task { await client.run() }
        let migrated = await withStoreDeadline(settings.timeout + settings.connectTimeout) {
            try await PostgresMigration.migrate(client, schema: searchPath, logger: logger)
        }
        if case .failure(let error) = migrated {
            runner.cancel()
            throw Self.failure(error, operation: "migrate", logger: logger)
        }
    }

    /// Stops the pool: its connections close and later calls fail with `store_unavailable`.
    func close() {
        runner.cancel()
    }

    // MARK: - Running statements

    /// Runs `body` on a pooled connection within the deadline, turning failures into the API's errors.
    @discardableResult
    func perform<T: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(GatewayError) -> T {
        if await reachability.refusesConnections() {
            logger.debug("store refuses connections", metadata: ["store.operation": "\(operation)"])
            throw GatewayError(.storeUnavailable, "The store is unavailable; retry shortly.")
        }
        let (client, reachability) = (client, reachability)
        // The first operation of an outage waits for the pool's retries: probe the server while it is slow.
        let giveUp: (after: Duration, failure: @Sendable () async -> (any Error)?) = (
            after: PostgresReachability.probeDelay,
            failure: { await reachability.refusedWhileWaiting() ? StoreRefusesConnections() : nil }
        )
        let outcome = await withStoreDeadline(settings.timeout, giveUp: giveUp) {
            try await client.withConnection { connection in try await body(connection) }
        }
        switch outcome {
        case .success(let value):
            reachability.noteSuccess()
            return value
        case .failure(let error):
            let failure = Self.failure(error, operation: operation, logger: logger)
            if failure.code == .storeUnavailable { reachability.noteUnavailable() }
            throw failure
        }
    }

    /// ``perform(_:_:)`` inside `BEGIN … COMMIT` (rolled back when `body` throws).
    @discardableResult
    func transaction<T: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(GatewayError) -> T {
        let logger = logger
        return try await perform(operation) { connection in
            try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    // MARK: - Records

    func insert(_ record: VerificationRecord) async throws(GatewayError) {
        try await insert(record, events: [])
    }

    func insert(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) {
        let values: [SQLiteValue]
        do { values = try SQLiteVerificationStore.values(of: record) } catch {
            throw Self.failure(error, operation: "insert", logger: logger)
        }
        let logger = logger
        do {
            try await transaction("insert") { connection in
                try await connection.run(
                    "INSERT INTO verifications (\(SQLiteVerificationStore.recordColumns)) VALUES (\(Self.placeholders(values.count)))",
                    values, logger: logger)
                try await Self.insertEvents(events, connection, logger: logger)
            }
        } catch where error.message == Self.duplicateMessage {
            throw GatewayError.internal("Duplicate verification id.")
        }
    }

    func record(id: String) async throws(GatewayError) -> VerificationRecord? {
        let logger = logger
        return try await perform("record") { connection in
            try await connection.rows(
                "SELECT \(SQLiteVerificationStore.recordColumns) FROM verifications WHERE id = $1", [.text(id)],
                logger: logger, SQLiteVerificationStore.record(from:)
            ).first
        }
    }

    func record(providerID: String, reference: String) async throws(GatewayError) -> VerificationRecord? {
        let logger = logger
        return try await perform("record by reference") { connection in
            try await connection.rows(
                """
                SELECT \(SQLiteVerificationStore.recordColumns) FROM verifications
                WHERE provider_id = $1 AND provider_reference = $2 ORDER BY created_at DESC, id DESC LIMIT 1
                """,
                [.text(providerID), .text(reference)], logger: logger, SQLiteVerificationStore.record(from:)
            ).first
        }
    }

    func update(_ record: VerificationRecord) async throws(GatewayError) -> Bool {
        try await update(record, events: [])
    }

    /// Compare-and-set on the version; the events only when it won, in the same transaction.
    func update(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) -> Bool {
        let values: [SQLiteValue]
        do { values = try SQLiteVerificationStore.values(of: record) } catch {
            throw Self.failure(error, operation: "update", logger: logger)
        }
        let logger = logger
        let sql = "UPDATE verifications SET \(Self.recordAssignments) WHERE id = $1 AND version = $\(values.count + 1) RETURNING 1"
        let bound = values + [.int(record.version - 1)]
        if events.isEmpty {
            return try await perform("update") { connection in
                try await connection.run(sql, bound, logger: logger) == 1
            }
        }
        return try await transaction("update") { connection in
            guard try await connection.run(sql, bound, logger: logger) == 1 else { return false }
            try await Self.insertEvents(events, connection, logger: logger)
            return true
        }
    }

    func append(_ event: VerificationEvent) async throws(GatewayError) {
        try await append(contentsOf: [event])
    }

    func append(contentsOf events: [VerificationEvent]) async throws(GatewayError) {
        guard !events.isEmpty else { return }
        let logger = logger
        try await transaction("append") { connection in
            try await Self.insertEvents(events, connection, logger: logger)
        }
    }

    /// The advisory lock every event insert takes (held to commit): event sequence numbers are then handed
    /// out in commit order, so a reader that saw sequence n never later finds a new event below n.
    static let eventLogLockKey: Int64 = 0x6761_7465_7761_7902

    /// Inserts events inside the caller's transaction, after taking ``eventLogLockKey``. The lock is the
    /// last one the transaction takes (event rows lock nothing else), so it cannot deadlock.
    static func insertEvents(
        _ events: [VerificationEvent], _ connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !events.isEmpty else { return }
        try await connection.run("SELECT pg_advisory_xact_lock($1)", [.integer(eventLogLockKey)], logger: logger)
        for event in events {
            try await connection.run(
                "INSERT INTO verification_events (verification_id, kind, at, detail) VALUES ($1, $2, $3, $4)",
                [
                    .text(event.verificationID), .text(event.kind.rawValue), .date(event.at),
                    .text(try SQLiteVerificationStore.json(event.detail)),
                ], logger: logger)
        }
    }

    func events(verificationID: String) async throws(GatewayError) -> [VerificationEvent] {
        let logger = logger
        return try await perform("events") { connection in
            try await connection.rows(
                "SELECT kind, at, detail FROM verification_events WHERE verification_id = $1 ORDER BY seq",
                [.text(verificationID)], logger: logger
            ) { (row) throws(SQLiteError) in
                guard let raw = row.text(0), let kind = VerificationEvent.Kind(rawValue: raw) else {
                    throw SQLiteError.undecodableRow("event of verification \(verificationID) has an unknown kind")
                }
                return VerificationEvent(
                    verificationID: verificationID, kind: kind,
                    at: try SQLiteVerificationStore.date(row.double(1), what: "event time"),
                    detail: try SQLiteVerificationStore.decodeJSON([String: String].self, row.text(2), what: "event detail"))
            }
        }
    }

    func records(experiment: String, from: Date?, to: Date?) async throws(GatewayError) -> [VerificationRecord] {
        let logger = logger
        return try await perform("records") { connection in
            try await connection.rows(
                """
                SELECT \(SQLiteVerificationStore.recordColumns) FROM verifications
                WHERE experiment = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at, id
                """,
                [
                    .text(experiment), .real(from?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude),
                    .real(to?.timeIntervalSince1970 ?? Double.greatestFiniteMagnitude),
                ], logger: logger, SQLiteVerificationStore.record(from:))
        }
    }

    // MARK: - Rate counters and prefix blocks

    /// One upsert, atomic under the row lock: a new window starts at one, a full window changes nothing.
    static let counterUpsert = """
        INSERT INTO rate_counters (key, window_start, expires_at, count) VALUES ($1, $2, $3, 1)
        ON CONFLICT (key) DO UPDATE SET
            count = CASE WHEN rate_counters.window_start = excluded.window_start
                THEN rate_counters.count + 1 ELSE 1 END,
            window_start = excluded.window_start,
            expires_at = excluded.expires_at
        """

    func hit(_ key: String, limit: Int, window: TimeInterval, at: Date) async throws(GatewayError) -> RateDecision {
        let (start, retryAfter) = rateWindow(at: at, window: window)
        let purge = hitsSincePurge.withLock { count -> Bool in
            count += 1
            guard count >= 1000 else { return false }
            count = 0
            return true
        }
        let logger = logger
        let counted = try await perform("hit") { connection -> Bool in
            if purge { try await connection.run("DELETE FROM rate_counters WHERE expires_at < $1", [.date(at)], logger: logger) }
            return try await connection.run(
                Self.counterUpsert
                    + " WHERE rate_counters.window_start <> excluded.window_start OR rate_counters.count < $4 RETURNING 1",
                [.text(key), .integer(start), .real(Double(start) + window), .int(limit)], logger: logger) == 1
        }
        return counted ? .allowed : .refused(retryAfter: retryAfter)
    }

    func add(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int {
        let (start, _) = rateWindow(at: at, window: window)
        let logger = logger
        return try await perform("add") { connection -> Int in
            try await connection.rows(
                Self.counterUpsert + " RETURNING count", [.text(key), .integer(start), .real(Double(start) + window)],
                logger: logger
            ) { row in Int(row.int64(0) ?? 0) }.first ?? 0
        }
    }

    func count(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int {
        let (start, _) = rateWindow(at: at, window: window)
        let logger = logger
        return try await perform("count") { connection -> Int in
            try await connection.rows(
                "SELECT count FROM rate_counters WHERE key = $1 AND window_start = $2", [.text(key), .integer(start)],
                logger: logger
            ) { row in Int(row.int64(0) ?? 0) }.first ?? 0
        }
    }

    func block(_ block: PrefixBlock) async throws(GatewayError) {
        let logger = logger
        try await perform("block") { connection in
            try await connection.run(
                """
                INSERT INTO prefix_blocks (prefix, blocked_at, until, starts, approvals, verification_id)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (prefix) DO UPDATE SET blocked_at = excluded.blocked_at, until = excluded.until,
                    starts = excluded.starts, approvals = excluded.approvals, verification_id = excluded.verification_id
                """,
                [
                    .text(block.prefix), .date(block.blockedAt), .date(block.until), .int(block.starts),
                    .int(block.approvals), .optionalText(block.verificationID),
                ], logger: logger)
        }
    }

    func activeBlock(prefix: String, at: Date) async throws(GatewayError) -> PrefixBlock? {
        try await blocks(where: "prefix = $1 AND until > $2", [.text(prefix), .date(at)]).first
    }

    func blocks(at: Date) async throws(GatewayError) -> [PrefixBlock] {
        try await blocks(where: "until > $1", [.date(at)])
    }

    func liftBlock(prefix: String, at: Date) async throws(GatewayError) -> Bool {
        let logger = logger
        return try await perform("lift") { connection -> Bool in
            try await connection.run(
                "DELETE FROM prefix_blocks WHERE prefix = $1 AND until > $2 RETURNING 1", [.text(prefix), .date(at)],
                logger: logger) == 1
        }
    }

    private func blocks(where condition: String, _ values: [SQLiteValue]) async throws(GatewayError) -> [PrefixBlock] {
        let logger = logger
        return try await perform("blocks") { connection in
            try await connection.rows(
                """
                SELECT prefix, blocked_at, until, starts, approvals, verification_id FROM prefix_blocks
                WHERE \(condition) ORDER BY prefix
                """, values, logger: logger
            ) { row in
                PrefixBlock(
                    prefix: row.text(0) ?? "", blockedAt: Date(timeIntervalSince1970: row.double(1) ?? 0),
                    until: Date(timeIntervalSince1970: row.double(2) ?? 0), starts: Int(row.int64(3) ?? 0),
                    approvals: Int(row.int64(4) ?? 0), verificationID: row.text(5))
            }
        }
    }

    // MARK: - Idempotency keys

    /// A new key is one insert; a lapsed claim is taken over by one conditional update, which the row lock
    /// makes exact across instances: of two takers the second finds the lease renewed and changes nothing.
    func claimIdempotencyKey(
        _ key: IdempotencyKey, fingerprint: String, token: String, at: Date, lease: TimeInterval
    ) async throws(GatewayError) -> IdempotencyClaim {
        let logger = logger
        let until = at.addingTimeInterval(lease)
        return try await perform("claim_idempotency_key") { connection -> IdempotencyClaim in
            // A key released between the insert and the read is claimed again on the next turn.
            for _ in 0..<3 {
                let inserted = try await connection.run(
                    """
                    INSERT INTO idempotency_keys (scope, key, fingerprint, created_at, token, lease_until, stage)
                    VALUES ($1, $2, $3, $4, $5, $6, 0)
                    ON CONFLICT (scope, key) DO NOTHING RETURNING 1
                    """,
                    [.text(key.scope), .text(key.key), .text(fingerprint), .date(at), .text(token), .date(until)],
                    logger: logger)
                if inserted == 1 { return .claimed }
                let takenOver = try await connection.rows(
                    """
                    UPDATE idempotency_keys SET token = $3, lease_until = $4
                    WHERE scope = $1 AND key = $2 AND fingerprint = $5 AND status IS NULL
                        AND (lease_until IS NULL OR lease_until <= $6)
                    RETURNING stage, verification_id
                    """,
                    [.text(key.scope), .text(key.key), .text(token), .date(until), .text(fingerprint), .date(at)],
                    logger: logger
                ) { row in
                    IdempotencyProgress(
                        stage: IdempotencyProgress.Stage(rawValue: Int(row.int64(0) ?? 1)) ?? .vendorCallBegun,
                        verificationID: row.text(1))
                }
                if let progress = takenOver.first { return .takenOver(progress) }
                let stored = try await connection.rows(
                    "SELECT fingerprint, status, body FROM idempotency_keys WHERE scope = $1 AND key = $2",
                    [.text(key.scope), .text(key.key)], logger: logger
                ) { row in (fingerprint: row.text(0), status: row.int64(1), body: row.blob(2)) }
                guard let stored = stored.first else { continue }
                guard stored.fingerprint == fingerprint else { return .mismatch }
                guard let status = stored.status else { return .inProgress }
                return .replay(StoredResponse(status: Int(status), body: stored.body ?? Data()))
            }
            throw PostgresStoreError("idempotency key neither inserted nor found")
        }
    }

    func recordIdempotencyProgress(
        _ key: IdempotencyKey, token: String, progress: IdempotencyProgress, until: Date
    ) async throws(GatewayError) -> Bool {
        let logger = logger
        return try await perform("record_idempotency_progress") { connection -> Bool in
            try await connection.run(
                """
                UPDATE idempotency_keys SET stage = $1, verification_id = $2, lease_until = $3
                WHERE scope = $4 AND key = $5 AND token = $6 AND status IS NULL RETURNING 1
                """,
                [
                    .int(progress.stage.rawValue), .optionalText(progress.verificationID), .date(until),
                    .text(key.scope), .text(key.key), .text(token),
                ], logger: logger) == 1
        }
    }

    @discardableResult
    func completeIdempotencyKey(
        _ key: IdempotencyKey, token: String, response: StoredResponse
    ) async throws(GatewayError) -> Bool {
        let logger = logger
        return try await perform("complete_idempotency_key") { connection -> Bool in
            try await connection.run(
                """
                UPDATE idempotency_keys SET status = $1, body = $2, lease_until = NULL
                WHERE scope = $3 AND key = $4 AND token = $5 RETURNING 1
                """,
                [.int(response.status), .blob(response.body), .text(key.scope), .text(key.key), .text(token)],
                logger: logger) == 1
        }
    }

    func releaseIdempotencyKey(_ key: IdempotencyKey, token: String) async throws(GatewayError) {
        let logger = logger
        try await perform("release_idempotency_key") { connection in
            try await connection.run(
                "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NULL",
                [.text(key.scope), .text(key.key), .text(token)], logger: logger)
        }
    }

    func abandonIdempotencyKey(_ key: IdempotencyKey, token: String, at: Date) async throws(GatewayError) {
        let logger = logger
        try await perform("abandon_idempotency_key") { connection in
            try await connection.run(
                """
                UPDATE idempotency_keys SET lease_until = $1
                WHERE scope = $2 AND key = $3 AND token = $4 AND status IS NULL AND lease_until > $1
                """,
                [.date(at), .text(key.scope), .text(key.key), .text(token)], logger: logger)
        }
    }

    func heartbeat(_ instance: GatewayInstance) async throws(GatewayError) {
        let logger = logger
        try await perform("heartbeat") { connection in
            try await connection.run(
                """
                INSERT INTO gateway_instances (id, host, pid, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
                """,
                [
                    .text(instance.id), .text(instance.host), .int(instance.pid), .date(instance.startedAt),
                    .date(instance.heartbeatAt),
                ], logger: logger)
        }
    }

    func instances() async throws(GatewayError) -> [GatewayInstance] {
        let logger = logger
        return try await perform("instances") { connection in
            try await connection.rows(
                "SELECT id, host, pid, started_at, heartbeat_at FROM gateway_instances ORDER BY id", logger: logger
            ) { row in
                GatewayInstance(
                    id: row.text(0) ?? "", host: row.text(1) ?? "", pid: Int(row.int64(2) ?? 0),
                    startedAt: try SQLiteVerificationStore.date(row.double(3), what: "instance started_at"),
                    heartbeatAt: try SQLiteVerificationStore.date(row.double(4), what: "instance heartbeat_at"))
            }
        }
    }

    func removeInstance(id: String) async throws(GatewayError) {
        let logger = logger
        try await perform("remove_instance") { connection in
            try await connection.run("DELETE FROM gateway_instances WHERE id = $1", [.text(id)], logger: logger)
        }
    }

    /// Served by the `created_at` index of migration 2; bounded, so one call never holds many row locks.
    func pruneIdempotencyKeys(claimedBefore before: Date, limit: Int) async throws(GatewayError) -> Int {
        let logger = logger
        return try await perform("prune_idempotency_keys") { connection -> Int in
            try await connection.run(
                """
                DELETE FROM idempotency_keys WHERE (scope, key) IN (
                    SELECT scope, key FROM idempotency_keys
                    WHERE created_at < $1 AND (status IS NOT NULL OR lease_until IS NULL OR lease_until < $1)
                    LIMIT $2 FOR UPDATE SKIP LOCKED)
                RETURNING 1
                """,
                [.date(before), .int(max(0, limit))], logger: logger)
        }
    }

    // MARK: - SQL and failures

    /// `$1, $2, … $n`.
    static func placeholders(_ count: Int) -> String {
        (1...max(1, count)).map { "$\($0)" }.joined(separator: ", ")
    }

    /// `column = $n` for every column but the id ($1), in ``SQLiteVerificationStore/recordColumnNames`` order.
    static let recordAssignments = SQLiteVerificationStore.recordColumnNames.enumerated().dropFirst()
        .map { "\($0.element) = $\($0.offset + 1)" }
        .joined(separator: ", ")

    static let duplicateMessage = "duplicate key"

    /// SQLSTATEs that mean "the server cannot serve now" rather than "this request is wrong": connection
    /// exceptions (class 08), shutdown and startup (57P01-57P03), too many connections, statement and
    /// lock timeouts (57014, 55P03), serialization failures and deadlocks (40001, 40P01).
    static func isUnavailable(sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || sqlState.hasPrefix("53")
            || ["57P01", "57P02", "57P03", "57014", "55P03", "40001", "40P01"].contains(sqlState)
    }

    /// Logs what went wrong (for operators) and returns the error API clients may see: `store_unavailable`
    /// (503, retryable) when the server is unreachable or slow, `internal` for anything else.
    static func failure(_ error: any Error, operation: String, logger: Logger) -> GatewayError {
        if let error = error as? GatewayError { return error }
        // withTransaction wraps what failed (BEGIN, the body, COMMIT or ROLLBACK): judge the first cause.
        if let wrapped = error as? PostgresTransactionError,
            let cause = wrapped.beginError ?? wrapped.closureError ?? wrapped.commitError ?? wrapped.rollbackError
        {
            return failure(cause, operation: operation, logger: logger)
        }
        var unavailable = true
        var detail = String(describing: type(of: error))
        if let error = error as? PSQLError {
            detail = "\(error.code)"
            if let state = error.serverInfo?[.sqlState] {
                detail += " \(state): \(error.serverInfo?[.message] ?? "")"
                if state == "23505" {
                    logger.debug("duplicate key", metadata: ["store.operation": "\(operation)"])
                    return GatewayError(.internal, duplicateMessage)
                }
                unavailable = isUnavailable(sqlState: state)
            } else {
                unavailable = ![.messageDecodingFailure, .unexpectedBackendMessage, .invalidCommandTag, .tooManyParameters]
                    .contains(error.code)
            }
        } else if error is StoreDeadlineExceeded {
            detail = "no answer within the store deadline"
        } else if error is StoreRefusesConnections {
            detail = "the server refuses connections"
        } else if error is SQLiteError || error is PostgresStoreError || error is PostgresDecodingError {
            detail = "\(error)"
            unavailable = false
        }
        logger.error(
            unavailable ? "store unavailable" : "storage failure",
            metadata: ["store.operation": "\(operation)", "store.error": "\(detail)"])
        return unavailable
            ? GatewayError(.storeUnavailable, "The store is unavailable; retry shortly.")
            : GatewayError(.internal, "storage failure")
    }
}
