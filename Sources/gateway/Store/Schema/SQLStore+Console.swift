import Foundation
import GatewayCore

/// `console_sessions` rows (``ConsoleSessionStore``) and the counts behind the console's overview
/// (``VerificationStatsStore``), shared by every instance on the store.
extension SQLStore {
    func insertConsoleSession(_ session: ConsoleSession) async throws(GatewayError) {
        try await change(
            "insert console session", ConsoleRows.insert,
            [.text(session.id), .text(session.keyHash), .date(session.createdAt), .date(session.expiresAt)])
    }

    func consoleSession(id: String, at: Date) async throws(GatewayError) -> ConsoleSession? {
        try await rows("console session", ConsoleRows.byID, [.text(id), .date(at)]) { row throws(StoreError) in
            ConsoleSession(
                id: row.text(0) ?? "", keyHash: row.text(1) ?? "", createdAt: try row.date(2, "session created_at"),
                expiresAt: try row.date(3, "session expires_at"))
        }.first
    }

    func deleteConsoleSession(id: String) async throws(GatewayError) -> Bool {
        try await change("delete console session", ConsoleRows.delete, [.text(id)])
    }

    @discardableResult
    func deleteExpiredConsoleSessions(before: Date) async throws(GatewayError) -> Int {
        try await run("prune console sessions", ConsoleRows.prune, [.date(before)]) { $0.changed }
    }

    func verificationStats(since: Date, bucketSeconds: Int) async throws(GatewayError) -> [VerificationStatsRow] {
        try await rows("verification stats", ConsoleRows.stats, [.date(since), .real(Double(bucketSeconds))]) {
            row throws(StoreError) in
            VerificationStatsRow(
                providerID: row.text(0) ?? "", status: row.text(1) ?? "", reason: row.text(2),
                failovers: try StoreJSON.decode([String].self, row.text(3), what: "verification failovers"),
                bucket: row.int(4) ?? 0, count: row.int(5) ?? 0)
        }
    }

    func countryStats(since: Date) async throws(GatewayError) -> [CountryStatsRow] {
        try await rows("country stats", ConsoleRows.countries, [.date(since)]) { row in
            CountryStatsRow(
                providerID: row.text(0) ?? "", country: row.text(1), status: row.text(2) ?? "",
                count: row.int(3) ?? 0)
        }
    }

    func countrySegments(since: Date) async throws(GatewayError) -> [CountrySegmentsRow] {
        try await rows("country segments", ConsoleRows.segments, [.date(since)]) { row in
            CountrySegmentsRow(
                providerID: row.text(0) ?? "", country: row.text(1), senderID: row.text(2) ?? "",
                segments: row.int(3) ?? 0, sends: row.int(4) ?? 0)
        }
    }

    func countrySignals(since: Date) async throws(GatewayError) -> [CountrySegmentsRow] {
        try await rows("country signals", ConsoleRows.signals, [.date(since)]) { row in
            let calls = row.int(3) ?? 0
            return CountrySegmentsRow(
                providerID: row.text(0) ?? "", country: row.text(1), senderID: row.text(2) ?? "", segments: calls,
                sends: calls)
        }
    }

    func vendorLatencies(since: Date) async throws(GatewayError) -> [LatencyRow] {
        try await rows("vendor latencies", ConsoleRows.latencies, [.date(since)]) { row in
            LatencyRow(providerID: row.text(0) ?? "", milliseconds: row.int(1) ?? 0, count: row.int(2) ?? 0)
        }
    }

    func verifications(destination: String, digest: String?, limit: Int) async throws(GatewayError)
        -> [VerificationRecord]
    {
        try await rows(
            "verifications by number", ConsoleRows.byDestination,
            [.text(destination), .text(digest ?? destination), .int(limit)],
            RecordRows.record(from:))
    }

    func countRefusal(kind: String, bucketStart: Int) async throws(GatewayError) {
        try await change("count refusal", ConsoleRows.countRefusal, [.text(kind), .int(bucketStart)])
    }

    func refusalCounts(since bucketStart: Int) async throws(GatewayError) -> [RefusalCountRow] {
        try await rows("refusal counts", ConsoleRows.refusals, [.int(bucketStart)]) { row in
            RefusalCountRow(kind: row.text(0) ?? "", bucketStart: row.int(1) ?? 0, count: row.int(2) ?? 0)
        }
    }

    /// Deletes the refusal counts of minutes before `before` (Unix seconds); how many rows went.
    @discardableResult
    func pruneRefusalCounts(before: Int) async throws(GatewayError) -> Int {
        try await run("prune refusal counts", ConsoleRows.pruneRefusals, [.int(before)]) { $0.changed }
    }
}

/// The statements of `console_sessions` and of the overview's counts.
enum ConsoleRows {
    static let insert = StoreStatement(
        "INSERT INTO console_sessions (id, key_hash, created_at, expires_at) VALUES ($1, $2, $3, $4)")
    static let byID = StoreStatement(
        "SELECT id, key_hash, created_at, expires_at FROM console_sessions WHERE id = $1 AND expires_at > $2")
    static let delete = StoreStatement("DELETE FROM console_sessions WHERE id = $1")
    static let prune = StoreStatement("DELETE FROM console_sessions WHERE expires_at <= $1")
    /// The verifications made since `$1`, test numbers left out: the window every figure below reads, found by the
    /// `created_at` index and materialized first, so that neither store's planner can choose to walk the whole
    /// table or all its events instead (SQLite, without statistics, did: an index on `provider_id` to save the
    /// GROUP BY's sort, or every event looked up against the window). The figures then cost what the window
    /// holds, whatever the store holds (BENCHMARKS.md, "Growth"). `CROSS JOIN` keeps the window the outer loop in
    /// SQLite; PostgreSQL reads it as the plain join it is.
    static func window(_ columns: String) -> String {
        """
        WITH w AS MATERIALIZED (
            SELECT \(columns) FROM verifications WHERE created_at >= $1 AND test_number = 0
        )
        """
    }

    /// Verifications made since `$1` (test numbers left out), counted by vendor, status, reason, the vendors
    /// failed over before it, and the `$2`-second bucket they were made in (0 is the oldest).
    static let stats = StoreStatement(
        """
        \(window("provider_id, status, status_reason, failovers, created_at"))
        SELECT provider_id, status, status_reason, failovers,
            CAST(\(SQLDialect.floorOfNonNegative)((created_at - $1) / $2) AS BIGINT) AS bucket, count(*)
        FROM w GROUP BY provider_id, status, status_reason, failovers, bucket
        """)
    /// Verifications made since `$1` (test numbers left out) by vendor, country and status.
    static let countries = StoreStatement(
        """
        \(window("provider_id, country, status"))
        SELECT provider_id, country, status, count(*) FROM w GROUP BY provider_id, country, status
        """)
    /// The billed segments and the number of the own-code sends of the verifications made since `$1` (test
    /// numbers left out), by the verification's vendor, its country and the vendor that sent (the window's
    /// events by the `verification_id` index).
    static let segments = StoreStatement(
        """
        \(window("id, provider_id, country"))
        SELECT w.provider_id, w.country, e.provider_id, CAST(sum(e.segments) AS BIGINT), count(*)
        FROM w CROSS JOIN verification_events e
        WHERE e.verification_id = w.id AND e.segments IS NOT NULL AND e.provider_id IS NOT NULL
        GROUP BY w.provider_id, w.country, e.provider_id
        """)
    /// The risk signals the verifications made since `$1` asked a provider for (test numbers left out), by the
    /// verification's vendor, its country and the signal's provider; an answer from the cache (no latency: nothing
    /// was called) costs nothing and is left out.
    static let signals = StoreStatement(
        """
        \(window("id, provider_id, country"))
        SELECT w.provider_id, w.country, e.provider_id, count(*)
        FROM w CROSS JOIN verification_events e
        WHERE e.verification_id = w.id AND e.kind = 'provider_call' AND e.provider_id IS NOT NULL
            AND e.latency_ms IS NOT NULL AND e.detail LIKE '%"operation":"sim_swap"%'
        GROUP BY w.provider_id, w.country, e.provider_id
        """)
    /// The vendor calls of the verifications made since `$1`, counted by vendor and latency in milliseconds:
    /// a histogram the percentiles are read from (the window's events by the `verification_id` index).
    static let latencies = StoreStatement(
        """
        \(window("id"))
        SELECT e.provider_id, e.latency_ms, count(*)
        FROM w CROSS JOIN verification_events e
        WHERE e.verification_id = w.id AND e.latency_ms IS NOT NULL AND e.provider_id IS NOT NULL
        GROUP BY e.provider_id, e.latency_ms
        """)
    /// A number's newest verifications, by the `(destination_value, created_at)` index: those to the number
    /// (`$1`) and those whose number was replaced by its keyed hash (`$2`, or the number again).
    static let byDestination = StoreStatement(
        """
        SELECT \(RecordRows.columns) FROM verifications
        WHERE destination_value IN ($1, $2) ORDER BY created_at DESC, id DESC LIMIT $3
        """)
    /// One more refusal of kind `$1` in the minute starting at `$2` (Unix seconds), one atomic upsert.
    static let countRefusal = StoreStatement(
        """
        INSERT INTO refusal_counts (kind, bucket_start, count) VALUES ($1, $2, 1)
        ON CONFLICT (kind, bucket_start) DO UPDATE SET count = refusal_counts.count + 1
        """)
    static let refusals = StoreStatement(
        "SELECT kind, bucket_start, count FROM refusal_counts WHERE bucket_start >= $1 ORDER BY bucket_start, kind")
    static let pruneRefusals = StoreStatement("DELETE FROM refusal_counts WHERE bucket_start < $1")
}
