import CSQLite
import Foundation

/// One step of the SQLite schema. Steps are applied in order, each once, and recorded in
/// `schema_migrations`; a shipped step is never edited, a change is a new step.
struct SQLiteMigration: Sendable {
    var version: Int
    var name: String
    var sql: String

    /// Every step, oldest first.
    static let all: [SQLiteMigration] = [
        SQLiteMigration(
            version: 1, name: "verifications, events, idempotency keys, api keys",
            sql: """
                CREATE TABLE verifications (
                    id TEXT PRIMARY KEY NOT NULL,
                    destination_kind TEXT NOT NULL,
                    destination_value TEXT NOT NULL,
                    channel TEXT NOT NULL,
                    provider_id TEXT NOT NULL,
                    provider_reference TEXT,
                    provider_state TEXT NOT NULL,
                    status TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    max_attempts INTEGER NOT NULL,
                    sends INTEGER NOT NULL,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL,
                    expires_at REAL NOT NULL,
                    content_language TEXT,
                    locales TEXT NOT NULL,
                    experiment_arm TEXT,
                    client_reference TEXT,
                    metadata TEXT NOT NULL,
                    api_key_id TEXT,
                    version INTEGER NOT NULL
                );
                CREATE INDEX verifications_provider_reference ON verifications (provider_id, provider_reference);
                CREATE INDEX verifications_created_at ON verifications (created_at);
                CREATE TABLE verification_events (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    verification_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    at REAL NOT NULL,
                    detail TEXT NOT NULL
                );
                CREATE INDEX verification_events_verification_id ON verification_events (verification_id);
                CREATE TABLE idempotency_keys (
                    scope TEXT NOT NULL,
                    key TEXT NOT NULL,
                    fingerprint TEXT NOT NULL,
                    created_at REAL NOT NULL,
                    status INTEGER,
                    body BLOB,
                    PRIMARY KEY (scope, key)
                );
                """),
        SQLiteMigration(
            version: 2, name: "routing: route, experiment, failovers, test numbers",
            sql: """
                ALTER TABLE verifications ADD COLUMN route TEXT;
                ALTER TABLE verifications ADD COLUMN experiment TEXT;
                ALTER TABLE verifications ADD COLUMN failovers TEXT NOT NULL DEFAULT '[]';
                ALTER TABLE verifications ADD COLUMN test_number INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX verifications_experiment ON verifications (experiment, created_at);
                """),
        SQLiteMigration(
            version: 3, name: "contracts v2: next action, fallback channels, challenges, pending tokens, check lease",
            sql: """
                ALTER TABLE verifications ADD COLUMN next_action TEXT;
                ALTER TABLE verifications ADD COLUMN fallback_channels TEXT NOT NULL DEFAULT '[]';
                ALTER TABLE verifications ADD COLUMN challenge_attempts INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE verifications ADD COLUMN token_pending INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE verifications ADD COLUMN pending_tokens TEXT NOT NULL DEFAULT '{}';
                ALTER TABLE verifications ADD COLUMN check_lease_until REAL;
                ALTER TABLE verifications ADD COLUMN status_reason TEXT;
                """),
        SQLiteMigration(
            version: 4, name: "rate-limit counters",
            sql: """
                CREATE TABLE rate_counters (
                    key TEXT PRIMARY KEY NOT NULL,
                    window_start INTEGER NOT NULL,
                    expires_at REAL NOT NULL,
                    count INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX rate_counters_expires_at ON rate_counters (expires_at);
                """),
        SQLiteMigration(
            version: 5, name: "pumping guard: prefix blocks",
            sql: """
                CREATE TABLE prefix_blocks (
                    prefix TEXT PRIMARY KEY NOT NULL,
                    blocked_at REAL NOT NULL,
                    until REAL NOT NULL,
                    starts INTEGER NOT NULL,
                    approvals INTEGER NOT NULL,
                    verification_id TEXT
                ) WITHOUT ROWID;
                """),
        SQLiteMigration(
            version: 6, name: "API keys managed with gateway keys",
            sql: """
                CREATE TABLE api_keys (
                    id TEXT PRIMARY KEY NOT NULL,
                    hash TEXT NOT NULL UNIQUE,
                    name TEXT NOT NULL,
                    scopes TEXT NOT NULL,
                    countries TEXT,
                    created_at REAL NOT NULL,
                    revoked_at REAL
                );
                """),
        SQLiteMigration(
            version: 7, name: "API keys: their own start limit",
            sql: "ALTER TABLE api_keys ADD COLUMN starts_per_hour INTEGER;"),
        SQLiteMigration(
            version: 8, name: "status webhooks: the event-log cursor and the delivery queue",
            sql: """
                CREATE TABLE webhook_cursor (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    seq INTEGER NOT NULL
                );
                CREATE TABLE webhook_deliveries (
                    id TEXT PRIMARY KEY NOT NULL,
                    event_id TEXT NOT NULL,
                    endpoint TEXT NOT NULL,
                    type TEXT NOT NULL,
                    verification_id TEXT NOT NULL,
                    payload BLOB NOT NULL,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    next_attempt_at REAL NOT NULL,
                    last_error TEXT,
                    created_at REAL NOT NULL,
                    delivered_at REAL,
                    UNIQUE (endpoint, event_id)
                );
                CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
                CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);
                """),
        // A claim made before leases has no record of how far it got: it is taken as having called a vendor.
        SQLiteMigration(
            version: 9, name: "idempotency claims with a lease, their progress, pruning",
            sql: """
                ALTER TABLE idempotency_keys ADD COLUMN token TEXT;
                ALTER TABLE idempotency_keys ADD COLUMN lease_until REAL;
                ALTER TABLE idempotency_keys ADD COLUMN stage INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE idempotency_keys ADD COLUMN verification_id TEXT;
                UPDATE idempotency_keys SET stage = 1 WHERE status IS NULL;
                CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
                """),
        SQLiteMigration(
            version: 10, name: "lease owners: instance heartbeats, the owner of a check lease",
            sql: """
                CREATE TABLE gateway_instances (
                    id TEXT PRIMARY KEY NOT NULL,
                    host TEXT NOT NULL,
                    pid INTEGER NOT NULL,
                    started_at REAL NOT NULL,
                    heartbeat_at REAL NOT NULL
                );
                ALTER TABLE verifications ADD COLUMN check_lease_owner TEXT;
                ALTER TABLE verifications ADD COLUMN check_lease_attempt INTEGER NOT NULL DEFAULT 0;
                """),
    ]

    /// Brings the database up to the newest step in one `BEGIN IMMEDIATE` transaction, so two processes
    /// opening a new file at once apply each step exactly once. Returns the schema version.
    @discardableResult
    static func migrate(
        _ connection: SQLiteConnection, steps: [SQLiteMigration] = all, at now: Date = Date()
    ) throws(SQLiteError) -> Int {
        try connection.transaction { () throws(SQLiteError) -> Int in
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    applied_at REAL NOT NULL
                )
                """)
            let applied =
                try connection.query("SELECT coalesce(max(version), 0) FROM schema_migrations") {
                    (row) throws(SQLiteError) in Int(row.int64(0) ?? 0)
                }.first ?? 0
            let newest = steps.last?.version ?? 0
            guard applied <= newest else {
                throw SQLiteError(
                    code: SQLITE_ERROR,
                    message: "database schema version \(applied) is newer than this gateway's \(newest)")
            }
            for step in steps where step.version > applied {
                try connection.execute(step.sql)
                try connection.run(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    [.int(step.version), .text(step.name), .date(now)])
            }
            return max(applied, newest)
        }
    }
}
