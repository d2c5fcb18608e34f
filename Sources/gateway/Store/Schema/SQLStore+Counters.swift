import Foundation
import GatewayCore

/// Rate-limit counters and the pumping guard's prefix blocks (``RateCounterStore``): each counter change is
/// one upsert, atomic under the row's lock, so concurrent hits never pass a limit.
extension SQLStore {
    func hit(_ key: String, limit: Int, window: TimeInterval, at: Date) async throws(GatewayError) -> RateDecision {
        let (start, retryAfter) = rateWindow(at: at, window: window)
        let purge = counterPurge.isDue()
        let counted = try await run(
            StoreCall("hit") {
                // One statement: a new window starts at one, a full window changes nothing.
                let hit = StoreStep<Bool>.run(
                    CounterRows.hit, [.text(key), .integer(start), .real(Double(start) + window), .int(limit)]
                ) { .done($0.changed == 1) }
                return purge ? .run(CounterRows.purge, [.date(at)], then: hit) : hit
            })
        return counted ? .allowed : .refused(retryAfter: retryAfter)
    }

    func add(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int {
        let (start, _) = rateWindow(at: at, window: window)
        return try await run("add", CounterRows.add, [.text(key), .integer(start), .real(Double(start) + window)]) {
            try $0.first { $0.int(0) ?? 0 } ?? 0
        }
    }

    func count(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int {
        let (start, _) = rateWindow(at: at, window: window)
        return try await run("count", CounterRows.count, [.text(key), .integer(start)]) {
            try $0.first { $0.int(0) ?? 0 } ?? 0
        }
    }

    func block(_ block: PrefixBlock) async throws(GatewayError) {
        try await change(
            "block", CounterRows.block,
            [
                .text(block.prefix), .date(block.blockedAt), .date(block.until), .int(block.starts),
                .int(block.approvals), .optionalText(block.verificationID),
            ])
    }

    func activeBlock(prefix: String, at: Date) async throws(GatewayError) -> PrefixBlock? {
        try await rows("blocks", CounterRows.activeBlock, [.text(prefix), .date(at)], CounterRows.block(from:)).first
    }

    func blocks(at: Date) async throws(GatewayError) -> [PrefixBlock] {
        try await rows("blocks", CounterRows.activeBlocks, [.date(at)], CounterRows.block(from:))
    }

    func liftBlock(prefix: String, at: Date) async throws(GatewayError) -> Bool {
        try await change("lift", CounterRows.lift, [.text(prefix), .date(at)])
    }
}

/// The statements of `rate_counters` and `prefix_blocks`.
enum CounterRows {
    /// Adds one to a counter in one statement: a new window starts at one. ``hit`` adds a condition (a full
    /// window changes nothing), ``add`` returns the count.
    private static let upsert = """
        INSERT INTO rate_counters (key, window_start, expires_at, count) VALUES ($1, $2, $3, 1)
        ON CONFLICT (key) DO UPDATE SET
            count = CASE WHEN rate_counters.window_start = excluded.window_start
                THEN rate_counters.count + 1 ELSE 1 END,
            window_start = excluded.window_start,
            expires_at = excluded.expires_at
        """
    static let hit = StoreStatement(
        upsert + " WHERE rate_counters.window_start <> excluded.window_start OR rate_counters.count < $4")
    static let add = StoreStatement(upsert + " RETURNING count")
    static let count = StoreStatement("SELECT count FROM rate_counters WHERE key = $1 AND window_start = $2")
    static let purge = StoreStatement("DELETE FROM rate_counters WHERE expires_at < $1")

    static let block = StoreStatement(
        """
        INSERT INTO prefix_blocks (prefix, blocked_at, until, starts, approvals, verification_id)
        VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (prefix) DO UPDATE SET blocked_at = excluded.blocked_at, until = excluded.until,
            starts = excluded.starts, approvals = excluded.approvals, verification_id = excluded.verification_id
        """)
    private static let blockColumns =
        "SELECT prefix, blocked_at, until, starts, approvals, verification_id FROM prefix_blocks"
    static let activeBlock = StoreStatement("\(blockColumns) WHERE prefix = $1 AND until > $2 ORDER BY prefix")
    static let activeBlocks = StoreStatement("\(blockColumns) WHERE until > $1 ORDER BY prefix")
    static let lift = StoreStatement("DELETE FROM prefix_blocks WHERE prefix = $1 AND until > $2")

    static func block(from row: any StoreRow) -> PrefixBlock {
        PrefixBlock(
            prefix: row.text(0) ?? "", blockedAt: Date(timeIntervalSince1970: row.double(1) ?? 0),
            until: Date(timeIntervalSince1970: row.double(2) ?? 0), starts: row.int(3) ?? 0,
            approvals: row.int(4) ?? 0, verificationID: row.text(5))
    }
}
