import Foundation
import Logging
import PostgresNIO

/// One step of the PostgreSQL schema, the same tables as SQLite's (``SQLiteMigration``) with PostgreSQL's
/// types: dates as `DOUBLE PRECISION` Unix seconds (microseconds survive), JSON as `TEXT`, flags as
/// `BIGINT` 0/1, so both stores read rows with one mapping. Steps are applied in order, each once, and
/// recorded in `schema_migrations`; a shipped step is never edited, a change is a new step.
struct PostgresMigration: Sendable {
    var version: Int
    var name: String
    /// One statement each (the extended protocol runs one at a time).
    var statements: [String]

    static let all: [PostgresMigration] = [
        PostgresMigration(
            version: 1, name: "verifications, events, idempotency keys, rate counters, prefix blocks, api keys, webhooks",
            statements: [
                """
                CREATE TABLE verifications (
                    id TEXT PRIMARY KEY NOT NULL,
                    destination_kind TEXT NOT NULL,
                    destination_value TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    provider_id TEXT NOT NULL,
                    provider_reference TEXT,
                    provider_state TEXT NOT NULL,
                    status TEXT NOT NULL,
                    attempts BIGINT NOT NULL,
                    max_attempts BIGINT NOT NULL,
                    sends BIGINT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    content_language TEXT,
                    locales TEXT NOT NULL,
                    experiment_arm TEXT,
                    client_reference TEXT,
                    metadata TEXT NOT NULL,
                    api_key_id TEXT,
                    version BIGINT NOT NULL,
                    route TEXT,
                    experiment TEXT,
                    failovers TEXT NOT NULL DEFAULT '[]',
                    test_number BIGINT NOT NULL DEFAULT 0,
                    next_action TEXT,
                    fallback_channels TEXT NOT NULL DEFAULT '[]',
                    challenge_attempts BIGINT NOT NULL DEFAULT 0,
                    token_pending BIGINT NOT NULL DEFAULT 0,
                    pending_tokens TEXT NOT NULL DEFAULT '{}',
                    check_lease_until DOUBLE PRECISION,
                    status_reason TEXT
                )
                """,
                "CREATE INDEX verifications_provider_reference ON verifications (provider_id, provider_reference)",
                "CREATE INDEX verifications_created_at ON verifications (created_at)",
                "CREATE INDEX verifications_experiment ON verifications (experiment, created_at)",
                """
                CREATE TABLE verification_events (
                    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    verification_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    at DOUBLE PRECISION NOT NULL,
                    detail TEXT NOT NULL
                )
                """,
                "CREATE INDEX verification_events_verification_id ON verification_events (verification_id, seq)",
                """
                CREATE TABLE idempotency_keys (
                    scope TEXT NOT NULL,
                    key TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    status BIGINT,
                    body BYTEA,
                    PRIMARY KEY (scope, key)
                )
                """,
                """
                CREATE TABLE rate_counters (
                    key TEXT PRIMARY KEY NOT NULL,
                    window_start BIGINT NOT NULL,
                    expires_at DOUBLE PRECISION NOT NULL,
                    count BIGINT NOT NULL
                )
                """,
                "CREATE INDEX rate_counters_expires_at ON rate_counters (expires_at)",
                """
                CREATE TABLE prefix_blocks (
                    prefix TEXT PRIMARY KEY NOT NULL,
                    blocked_at DOUBLE PRECISION NOT NULL,
                    until DOUBLE PRECISION NOT NULL,
                    starts BIGINT NOT NULL,
                    approvals BIGINT NOT NULL,
                    verification_id TEXT
                )
                """,
                """
                CREATE TABLE api_keys (
                    id TEXT PRIMARY KEY NOT NULL,
                    hash TEXT NOT NULL UNIQUE,
                    name TEXT NOT NULL,
                    scopes TEXT NOT NULL,
                    countries TEXT,
                    created_at DOUBLE PRECISION NOT NULL,
                    revoked_at DOUBLE PRECISION,
                    starts_per_hour BIGINT
                )
                """,
                """
                CREATE TABLE webhook_cursor (
                    id BIGINT PRIMARY KEY CHECK (id = 1),
                    seq BIGINT NOT NULL
                )
                """,
                """
                CREATE TABLE webhook_deliveries (
                    id TEXT PRIMARY KEY NOT NULL,
                    event_id TEXT NOT NULL,
                    endpoint TEXT NOT NULL,
                    type TEXT NOT NULL,
                    verification_id TEXT NOT NULL,
                    payload BYTEA NOT NULL,
                    state TEXT NOT NULL,
                    attempts BIGINT NOT NULL,
                    next_attempt_at DOUBLE PRECISION NOT NULL,
                    last_error TEXT,
                    created_at DOUBLE PRECISION NOT NULL,
                    delivered_at DOUBLE PRECISION,
                    UNIQUE (endpoint, event_id)
                )
                """,
                "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at)",
                "CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at)",
            ]),
        // A claim made before leases has no record of how far it got: it is taken as having called a vendor.
        PostgresMigration(
            version: 2, name: "idempotency claims with a lease, their progress, pruning",
            statements: [
                "ALTER TABLE idempotency_keys ADD COLUMN token TEXT",
                "ALTER TABLE idempotency_keys ADD COLUMN lease_until DOUBLE PRECISION",
                "ALTER TABLE idempotency_keys ADD COLUMN stage BIGINT NOT NULL DEFAULT 0",
                "ALTER TABLE idempotency_keys ADD COLUMN verification_id TEXT",
                "UPDATE idempotency_keys SET stage = 1 WHERE status IS NULL",
                "CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at)",
            ]),
        PostgresMigration(
            version: 3, name: "lease owners: instance heartbeats, the owner of a check lease",
            statements: [
                """
                CREATE TABLE gateway_instances (
                    id TEXT PRIMARY KEY NOT NULL,
                    host TEXT NOT NULL,
                    pid BIGINT NOT NULL,
                    started_at DOUBLE PRECISION NOT NULL,
                    heartbeat_at DOUBLE PRECISION NOT NULL
                )
                """,
                "ALTER TABLE verifications ADD COLUMN check_lease_owner TEXT",
                "ALTER TABLE verifications ADD COLUMN check_lease_attempt BIGINT NOT NULL DEFAULT 0",
            ]),
    ]

    /// The advisory lock that serializes migrations: several instances starting at once apply each step once.
    static let lockKey: Int64 = 0x6761_7465_7761_7901

    /// The migration lock of `schema`: ``lockKey`` for the connection's own search path (every gateway
    /// instance), one of its own for a named schema, so stores in separate schemas (the tests make one per
    /// store, dozens at once) do not queue behind each other's migrations, nor time out on the lock.
    static func lockKey(forSchema schema: String?) -> Int64 {
        guard let schema else { return lockKey }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: stable across processes, unlike Hasher
        for byte in schema.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return lockKey ^ Int64(bitPattern: hash)
    }

    /// Brings the schema up to the newest step in one transaction under ``lockKey``. Returns the version.
    @discardableResult
    static func migrate(
        _ client: PostgresClient, steps: [PostgresMigration] = all, schema: String? = nil, logger: Logger,
        at now: Date = Date()
    ) async throws -> Int {
        if let schema, schema.isEmpty || !schema.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }) {
            throw PostgresStoreError("schema name \(schema) is not lower-case letters, digits and _")
        }
        return try await client.withTransaction(logger: logger) { connection in
            // The rows are read, so a lock that timed out fails here rather than as the next statement's
            // "transaction is aborted".
            let lock: PostgresQuery = "SELECT pg_advisory_xact_lock(\(lockKey(forSchema: schema)))"
            for try await _ in try await connection.query(lock, logger: logger) {}
            if let schema {
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: logger)
            }
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version BIGINT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    applied_at DOUBLE PRECISION NOT NULL
                )
                """, logger: logger)
            var applied = 0
            for try await version in try await connection.query(
                "SELECT coalesce(max(version), 0)::BIGINT FROM schema_migrations", logger: logger
            ).decode(Int64.self) {
                applied = Int(version)
            }
            let newest = steps.last?.version ?? 0
            guard applied <= newest else {
                throw PostgresStoreError("database schema version \(applied) is newer than this gateway's \(newest)")
            }
            for step in steps where step.version > applied {
                for statement in step.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    """
                    INSERT INTO schema_migrations (version, name, applied_at)
                    VALUES (\(Int64(step.version)), \(step.name), \(now.timeIntervalSince1970))
                    """, logger: logger)
                logger.notice("store migrated", metadata: ["store.schema_version": "\(step.version)", "store.step": "\(step.name)"])
            }
            return max(applied, newest)
        }
    }
}

/// A fault of the PostgreSQL store itself (not the server's): logged, never shown to API clients.
struct PostgresStoreError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
