import CSQLite
import Dispatch
import Synchronization

/// Checkpoints a WAL file on a connection and queue of its own, so that no commit waits for a large
/// checkpoint (docs/performance.md, "Checkpoints off the writer").
///
/// By default SQLite checkpoints inside the commit that takes the WAL past 1,000 pages: that commit copies
/// the WAL's pages into the database file and syncs it before it returns (milliseconds: BENCHMARKS.md),
/// and every call queued behind it on ``SQLiteDatabase``'s queue waits as long. Here the writer's
/// connection reports each commit to ``walGrew(to:connection:schema:)`` (SQLite's WAL hook, which replaces
/// the automatic checkpoint):
///
/// - Every ``afterPages`` new frames it asks this queue for a `PASSIVE` checkpoint, which copies what no
///   reader still needs, never takes the write lock and never waits for one: commits go on meanwhile.
/// - A WAL starts over from its beginning only when a write begins with every frame copied, which a busy
///   writer rarely finds after a background checkpoint (its own commits keep adding frames). So once the WAL
///   holds ``restartAfterPages``, the writer copies the few frames the background checkpoint left behind
///   (at most ``tailPages``) itself, right after its commit, and its next write starts the WAL over.
/// - Should the checkpoints fall far behind (a reader holding an old snapshot keeps them from completing,
///   or the disk is slower than the writes), the commit that takes the WAL past ``inlineAfterPages`` runs
///   the checkpoint itself, as SQLite would by default, so the WAL cannot grow without bound.
///
/// Durability is unchanged: the checkpoints run with the writer's `synchronous` mode, so they sync the WAL
/// before copying from it and the database file after, exactly as the writer's own checkpoint would.
final class SQLiteCheckpointer: @unchecked Sendable {  // unchecked: `connection` is only touched on `queue`.
    /// What the checkpointer did: for tests and operators.
    struct Counters: Sendable, Equatable {
        /// Checkpoints run on the checkpointer's own queue.
        var background = 0
        /// WAL frames the background checkpoints copied into the database file.
        var framesCopied = 0
        /// Short checkpoints the writer ran to let the WAL start over (at most ``SQLiteCheckpointer/tailPages``
        /// frames to copy).
        var tails = 0
        /// Checkpoints the writer ran because the WAL reached ``SQLiteCheckpointer/inlineAfterPages``.
        var inline = 0
        /// Checkpoints that did not run: another was under way (`SQLITE_BUSY`), or the file could not be
        /// opened. The next commit past a threshold asks again.
        var skipped = 0
    }

    /// When the checkpoints run, in WAL frames (pages).
    struct Thresholds: Sendable, Equatable {
        /// New frames after which a commit asks for a background checkpoint.
        var afterPages: Int32
        /// The most frames the writer copies itself to let the WAL start over; it does so once the WAL holds
        /// twice ``afterPages``.
        var tailPages: Int32
        /// WAL length at which the committing writer checkpoints whatever is left.
        var inlineAfterPages: Int32 = 10_000

        /// Under `synchronous=FULL` every commit has synced its frames, and a checkpoint only writes pages
        /// into the database file: SQLite's own threshold, 1,000 frames. Under `NORMAL` nothing is synced
        /// before the checkpoint, which then has the WAL's every frame to flush as well: a tenth as many, so
        /// that no flush holds the disk long enough to stall another file's commits (the sandbox's file and
        /// the store share one disk; docs/performance.md).
        static func standard(for synchronous: SQLiteSynchronous) -> Thresholds {
            synchronous == .full
                ? Thresholds(afterPages: 1_000, tailPages: 128) : Thresholds(afterPages: 100, tailPages: 16)
        }
    }

    let path: String
    let synchronous: SQLiteSynchronous
    let afterPages: Int32
    /// WAL length from which the writer copies a short tail itself, so that the WAL can start over.
    let restartAfterPages: Int32
    let tailPages: Int32
    let inlineAfterPages: Int32

    private let queue: DispatchQueue
    private var connection: OpaquePointer?
    private let requested = Atomic(false)
    /// How far into the WAL, in frames, the last checkpoint copied.
    private let copiedThrough = Atomic<Int32>(0)
    private let counters = Mutex(Counters())

    init(path: String, synchronous: SQLiteSynchronous, thresholds: Thresholds) {
        self.path = path
        self.synchronous = synchronous
        afterPages = max(thresholds.afterPages, 1)
        restartAfterPages = 2 * afterPages
        tailPages = max(thresholds.tailPages, 0)
        inlineAfterPages = max(thresholds.inlineAfterPages, restartAfterPages)
        queue = DispatchQueue(label: "gateway.store.sqlite.checkpoint")
    }

    deinit {
        if let connection { sqlite3_close_v2(connection) }
    }

    var snapshot: Counters { counters.withLock { $0 } }

    /// Called by the writer's connection after each commit, on the writer's thread, with the WAL's length
    /// in frames. Always answers `SQLITE_OK`: the commit has happened whatever a checkpoint does.
    func walGrew(to pages: Int32, connection writer: OpaquePointer?, schema: UnsafePointer<CChar>?) -> Int32 {
        var reach = copiedThrough.load(ordering: .relaxed)
        if pages < reach {
            // The WAL has started over since the last checkpoint.
            reach = 0
            copiedThrough.store(0, ordering: .relaxed)
        }
        let uncopied = pages - reach
        if pages >= inlineAfterPages {
            checkpointInline(writer, schema, counting: \.inline)
        } else if pages >= restartAfterPages, uncopied <= tailPages {
            checkpointInline(writer, schema, counting: \.tails)
        } else if uncopied >= afterPages {
            request()
        }
        return SQLITE_OK
    }

    private func checkpointInline(
        _ writer: OpaquePointer?, _ schema: UnsafePointer<CChar>?, counting counter: WritableKeyPath<Counters, Int>
    ) {
        var logFrames: Int32 = 0
        var copied: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(writer, schema, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied)
        if code == SQLITE_OK { copiedThrough.store(max(copied, 0), ordering: .relaxed) }
        counters.withLock { counters in
            if code == SQLITE_OK { counters[keyPath: counter] += 1 } else { counters.skipped += 1 }
        }
    }

    /// Queues one background checkpoint unless one is already queued.
    func request() {
        guard requested.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        queue.async { self.checkpoint() }
    }

    /// Waits for a queued checkpoint and closes the checkpointer's connection. Later requests open it again.
    func close() {
        queue.sync {
            if let connection { sqlite3_close_v2(connection) }
            connection = nil
        }
    }

    /// Runs on `queue`.
    private func checkpoint() {
        // Cleared first: a commit from now on asks again, so a WAL that grew during this checkpoint gets another.
        requested.store(false, ordering: .releasing)
        guard let connection = openConnection() else {
            counters.withLock { $0.skipped += 1 }
            return
        }
        var logFrames: Int32 = 0
        var copied: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied)
        // `copied` counts from the WAL's start: what this checkpoint added is past the last one's reach, or
        // all of it if the WAL started over since.
        let reach = copiedThrough.load(ordering: .relaxed)
        let added = max(copied >= reach ? copied - reach : copied, 0)
        if code == SQLITE_OK { copiedThrough.store(max(copied, 0), ordering: .relaxed) }
        counters.withLock { counters in
            if code == SQLITE_OK {
                counters.background += 1
                counters.framesCopied += Int(added)
            } else {
                counters.skipped += 1
            }
        }
    }

    /// The checkpointer's own connection, opened on first use with the writer's `synchronous` mode (which
    /// decides whether the checkpoint syncs; both modes the gateway uses do).
    private func openConnection() -> OpaquePointer? {
        if let connection { return connection }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let opened else {
            sqlite3_close_v2(opened)
            return nil
        }
        let pragma = synchronous == .full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"
        guard sqlite3_exec(opened, "PRAGMA busy_timeout=5000; " + pragma, nil, nil, nil) == SQLITE_OK else {
            sqlite3_close_v2(opened)
            return nil
        }
        connection = opened
        return opened
    }
}
