import Synchronization

/// What a store ran, by operation: calls, the statements they sent, and the transactions that committed.
/// Counted by both stores on every call (one lock and one dictionary update per call, never per statement)
/// and published at scrape time as `gateway_store_calls_total`, `gateway_store_statements_total` and
/// `gateway_store_commits_total` (docs/operations.md), so a benchmark reads what a request costs the store from
/// `/metrics` before and after a run (`scripts/bench/cost_report.py`, issue 48).
final class StoreCallCounts: Sendable {
    /// One operation's totals.
    struct Tally: Sendable, Equatable {
        var calls = 0
        /// Statements sent: each of the call's `StoreStep.run` steps and advisory locks, not `BEGIN`,
        /// `COMMIT` or the group commit's savepoints.
        var statements = 0
    }

    private let tallies = Mutex<[String: Tally]>([:])
    private let committed = Atomic<Int>(0)

    /// Counts one call of `operation` that sent `statements` statements (whether it succeeded or not).
    func record(_ operation: String, statements: Int) {
        tallies.withLock { tallies in
            tallies[operation, default: Tally()].calls += 1
            tallies[operation, default: Tally()].statements += statements
        }
    }

    /// Counts `count` committed transactions: SQLite's commit hook on the writer connection (each commit of
    /// a group, a call's own transaction, or a statement committing by itself); PostgreSQL's transactions and
    /// statements run outside one.
    func recordCommits(_ count: Int = 1) {
        committed.add(count, ordering: .relaxed)
    }

    /// Every operation's totals so far.
    var snapshot: [String: Tally] { tallies.withLock { $0 } }

    /// Transactions committed so far.
    var commits: Int { committed.load(ordering: .relaxed) }
}
