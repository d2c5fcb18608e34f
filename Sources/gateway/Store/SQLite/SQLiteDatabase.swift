import CSQLite
import Dispatch
import Synchronization

/// Owns a ``SQLiteConnection`` and runs every call on it one at a time, committing calls that queued up
/// together as one group (docs/performance.md, "Group commit").
///
/// A dedicated serial queue rather than a `Mutex`: SQLite calls do disk I/O and can wait up to
/// `busy_timeout` for another process, which must not pin a thread of the cooperative pool.
///
/// **Group commit.** Calls of ``perform(durability:_:)`` are queued in order. The queue takes every call
/// waiting when it gets to them (up to ``groupLimit``) and runs them in one `BEGIN IMMEDIATE` transaction,
/// each inside its own savepoint: a call that throws is rolled back to its savepoint alone and the others
/// carry on, exactly as if each had been its own transaction. One `COMMIT`, so one `fdatasync` of the WAL
/// under `synchronous=FULL`, then covers the group, and only then is any call of the group answered,
/// reads included (a read in the group may have seen a write of the group). If the commit fails, every
/// call of the group that had succeeded fails with that error instead: nothing is answered that is not on
/// disk. A call alone in the queue runs as before, in its own transaction.
///
/// Under load this turns one sync per write into one sync per group: the writes that arrive while a sync
/// is under way share the next one. Without load nothing waits for a group to fill.
///
/// **Commit delay.** With a ``SQLiteCommitDelay``, a group that needs a sync waits before it runs, for at
/// most the delay after its oldest call was queued, while at least `siblings` other requests are in flight
/// (the way PostgreSQL's `commit_delay` and `commit_siblings` work): their writes join the group instead of
/// each paying for a sync of its own. It stops waiting as soon as so many calls are queued that fewer than
/// `siblings` requests remain outside the group, or the group is full. A lone request never waits.
final class SQLiteDatabase: @unchecked Sendable {  // unchecked: `connection` is only ever touched on `queue`.
    private let connection: SQLiteConnection
    private let queue: DispatchQueue
    private let waiting = Mutex(Waiting())
    private let counters = Mutex(GroupCounters())
    /// Wakes the queue when calls arrive during a commit delay.
    private let arrivals = DispatchSemaphore(value: 0)
    /// `nil`: a group runs as soon as the queue gets to it.
    private let commitDelay: SQLiteCommitDelay?

    /// The most calls committed as one group: bounds how long the first of them waits for the last.
    static let groupLimit = 64

    private struct Waiting: ~Copyable {
        var calls: [Call] = []
        /// A drain of ``calls`` is queued on `queue` or running.
        var draining = false
        /// During a commit delay: wake the queue once this many calls are waiting (0: no one is waiting).
        var wakeAt = 0
    }

    /// One queued call: ``run`` executes it and returns whether it succeeded and how to answer its caller
    /// once its group's fate is known; ``fail`` answers it without running it.
    private struct Call: Sendable {
        let durability: SQLiteWriteDurability
        /// When it was queued (`DispatchTime.uptimeNanoseconds`), read only with a commit delay.
        var queuedAt: UInt64 = 0
        let run: @Sendable (SQLiteConnection) -> (succeeded: Bool, answer: @Sendable (SQLiteError?) -> Void)
        let fail: @Sendable (SQLiteError) -> Void
    }

    /// How many groups the queue committed and how many calls they carried: `calls / groups` is the mean
    /// group size. For tests and operators.
    struct GroupCounters: Sendable, Equatable {
        var groups = 0
        var calls = 0
        var largestGroup = 0
        /// Groups whose commit waited for the calls of other requests in flight (``SQLiteCommitDelay``).
        var delayed = 0
    }

    /// Runs the file's WAL checkpoints off ``queue``; `nil` for an in-memory database, which has no WAL.
    let checkpointer: SQLiteCheckpointer?
    /// The connections of ``read(_:)``; `nil` for an in-memory database, which only its own connection sees.
    private let readers: SQLiteReaders?

    /// `checkpoints` defaults to ``SQLiteCheckpointer/Thresholds/standard(for:)``. `commitDelay` applies only
    /// to a file under `synchronous=FULL`, the only case where a commit waits for a sync. `cacheKiB`: the
    /// writer's page cache (``SQLiteConnection``).
    init(
        path: String, synchronous: SQLiteSynchronous, checkpoints: SQLiteCheckpointer.Thresholds? = nil,
        commitDelay: SQLiteCommitDelay? = nil, cacheKiB: Int? = nil
    ) throws(SQLiteError) {
        connection = try SQLiteConnection(path: path, synchronous: synchronous, cacheKiB: cacheKiB)
        queue = DispatchQueue(label: "gateway.store.sqlite")
        if path == ":memory:" || path.isEmpty {
            checkpointer = nil
            readers = nil
            self.commitDelay = nil
        } else {
            self.commitDelay = synchronous == .full && commitDelay?.isActive == true ? commitDelay : nil
            readers = SQLiteReaders(path: path)
            let checkpointer = SQLiteCheckpointer(
                path: path, synchronous: synchronous, thresholds: checkpoints ?? .standard(for: synchronous))
            connection.checkpoint(with: checkpointer)
            self.checkpointer = checkpointer
        }
    }

    var groupCounters: GroupCounters { counters.withLock { $0 } }

    /// What ``checkpointer`` did so far (all zero for an in-memory database).
    var checkpointCounters: SQLiteCheckpointer.Counters { checkpointer?.snapshot ?? .init() }

    /// Read-only connections open and idle (``read(_:)``).
    var idleReaders: Int { readers?.idleCount ?? 0 }

    /// Whether a group's commit is waiting for the calls of others in flight (``SQLiteCommitDelay``).
    var isWaitingForCalls: Bool { waiting.withLock { $0.wakeAt > 0 } }

    /// Calls queued and not yet taken into a group.
    var queuedCalls: Int { waiting.withLock { $0.calls.count } }

    /// Runs `body` on the database queue; the calling task suspends instead of blocking. It returns once
    /// what `body` wrote is committed (and, with `.synced` under `synchronous=FULL`, on the device).
    @discardableResult
    func perform<T: Sendable>(
        durability: SQLiteWriteDurability = .synced,
        _ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T
    ) async throws(SQLiteError) -> T {
        let result: Result<T, SQLiteError> = await withCheckedContinuation { continuation in
            enqueue(Self.call(durability: durability, body) { continuation.resume(returning: $0) })
        }
        return try result.get()
    }

    /// A queued call that runs `body` and answers `answer` once its group's fate is known.
    private static func call<T: Sendable>(
        durability: SQLiteWriteDurability,
        _ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T,
        answer: @escaping @Sendable (Result<T, SQLiteError>) -> Void
    ) -> Call {
        Call(
            durability: durability,
            run: { connection in
                let result = Result { () throws(SQLiteError) -> T in try body(connection) }
                let succeeded: Bool
                if case .success = result { succeeded = true } else { succeeded = false }
                return (
                    succeeded,
                    { groupFailure in
                        // A call that failed by itself keeps its own error; one that succeeded is answered
                        // only if its group was committed.
                        if succeeded, let groupFailure {
                            answer(.failure(groupFailure))
                        } else {
                            answer(result)
                        }
                    }
                )
            },
            fail: { error in answer(.failure(error)) })
    }

    /// Runs `body` on the database queue and blocks until it is done: for set-up and synchronous callers.
    /// It runs alone, outside any group.
    @discardableResult
    func performSync<T>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        let result = queue.sync { Result { () throws(SQLiteError) -> T in try body(connection) } }
        return try result.get()
    }

    /// Runs `body`, a read of committed rows, on a read-only connection on the calling thread, without the
    /// hop to ``queue`` and back: for a short indexed read on a hot path (the adaptive routes' sticky lookup,
    /// docs/performance.md). In WAL mode a reader does not wait for the writer, and it never waits at all
    /// here: when SQLite would make it wait (`SQLITE_BUSY`, rare: a WAL being reset) or no reader can be
    /// opened, the read goes through ``perform(durability:_:)`` instead. It sees what is committed, not a write
    /// still queued or in an uncommitted group. An in-memory database always reads through the queue.
    func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T)
        async throws(SQLiteError) -> T
    {
        if let readers, let reader = readers.take() {
            let result = Result { () throws(SQLiteError) -> T in try body(reader.connection) }
            switch result {
            case .success(let value):
                readers.give(back: reader)
                return value
            case .failure(let error) where error.code & 0xFF == SQLITE_BUSY:
                readers.give(back: reader)
            case .failure(let error):
                // Whatever else went wrong, the writer's connection answers for the file; this one goes.
                reader.connection.close()
                if error.code == SQLITE_MISMATCH { throw error }  // the caller's own decoding failed
            }
        }
        return try await perform(body)
    }

    /// Closes the file after the work already queued; later calls fail with ``SQLiteError/closed``.
    func close() {
        readers?.close()
        queue.sync {
            // The checkpointer's connection first: the last connection to close checkpoints the WAL and removes it.
            connection.checkpoint(with: nil)
            checkpointer?.close()
            connection.close()
        }
    }

    // MARK: - The queue

    private func enqueue(_ call: Call) {
        var call = call
        if commitDelay != nil { call.queuedAt = DispatchTime.now().uptimeNanoseconds }
        let (startDrain, wake) = waiting.withLock { waiting -> (Bool, Bool) in
            waiting.calls.append(call)
            var wake = false
            if waiting.wakeAt > 0, waiting.calls.count >= waiting.wakeAt {
                waiting.wakeAt = 0
                wake = true
            }
            guard !waiting.draining else { return (false, wake) }
            waiting.draining = true
            return (true, wake)
        }
        if wake { arrivals.signal() }
        if startDrain { queue.async { self.drain() } }
    }

    /// Calls queued since the group began that join its open transaction, after waiting for them if others
    /// may still come: while at least `delay.siblings` requests in flight are neither in the group nor queued,
    /// until `delay.maximum` after the group's oldest call was queued, the group full, or nothing to wait for.
    /// Empty when the group should commit now. Runs on ``queue``.
    private func joiningCalls(_ delay: SQLiteCommitDelay, grouped: Int, oldest: UInt64, waited: inout Bool) -> [Call] {
        let room = Self.groupLimit - grouped
        guard room > 0 else { return [] }
        let deadline = oldest &+ UInt64(delay.maximumNanoseconds)
        while true {
            let queued = waiting.withLock { $0.calls.count }
            let outside = delay.inFlight() - grouped - queued
            // Woken when so many are queued that fewer than `siblings` requests remain outside, or the group is full.
            let target = min(room, queued + outside - delay.siblings + 1)
            guard queued < target, DispatchTime.now().uptimeNanoseconds < deadline else { break }
            let armed = waiting.withLock { waiting -> Bool in
                guard waiting.calls.count < target else { return false }
                waiting.wakeAt = target
                return true
            }
            guard armed else { continue }
            waited = true
            if arrivals.wait(timeout: DispatchTime(uptimeNanoseconds: deadline)) == .timedOut {
                let signalled = waiting.withLock { waiting -> Bool in
                    defer { waiting.wakeAt = 0 }
                    return waiting.wakeAt == 0
                }
                // An arrival disarmed the wait as it timed out: take its signal, so the next wait is not cut short.
                if signalled { arrivals.wait() }
            }
        }
        return take(upTo: room)
    }

    /// Up to `limit` of the waiting calls, the oldest first.
    private func take(upTo limit: Int) -> [Call] {
        waiting.withLock { waiting -> [Call] in
            let count = min(waiting.calls.count, limit)
            guard count > 0 else { return [] }
            let calls = Array(waiting.calls.prefix(count))
            waiting.calls.removeFirst(count)
            return calls
        }
    }

    /// Runs one group of the waiting calls, then queues itself again while calls are waiting, so that work
    /// queued on `queue` by other means (``performSync(_:)``, ``close()``) is not held back behind a load.
    private func drain() {
        run(take(upTo: Self.groupLimit))
        let more = waiting.withLock { waiting -> Bool in
            if !waiting.calls.isEmpty { return true }
            waiting.draining = false
            return false
        }
        if more { queue.async { self.drain() } }
    }

    private func run(_ group: [Call]) {
        guard !group.isEmpty else { return }
        // Only provisional writes (and reads) in the group: its commit need not be synced by itself.
        let unsynced = group.allSatisfy { $0.durability == .unsynced }
        // A synced commit may wait for the writes of others in flight (the call alone included: it is one).
        let delay = unsynced ? nil : commitDelay.flatMap { $0.inFlight() - group.count >= $0.siblings ? $0 : nil }
        do {
            try connection.withSynchronous(unsynced ? .normal : connection.synchronous) { () throws(SQLiteError) in
                if group.count == 1, delay == nil {
                    // Alone: the call's own statements and transaction, as without grouping.
                    let (_, answer) = group[0].run(connection)
                    record(calls: 1)
                    answer(nil)
                } else {
                    runGroup(group[...], delay: delay)
                }
            }
        } catch {
            // Only switching the sync mode can fail here (a closed file): nothing of the group has run.
            for call in group { call.fail(error) }
        }
    }

    /// Runs `calls` in as few transactions as it can: one, unless SQLite itself rolls back a transaction
    /// (an I/O error, a full disk), which fails the calls already run in it and starts another for the rest.
    /// With `delay`, a transaction that wrote takes in the calls queued meanwhile before it commits, after
    /// waiting for them while others are in flight (``joiningCalls(_:grouped:oldest:waited:)``).
    private func runGroup(_ calls: ArraySlice<Call>, delay: SQLiteCommitDelay? = nil) {
        var rest = calls
        let oldest = calls.first?.queuedAt ?? 0
        var delayed = false
        while !rest.isEmpty {
            do {
                try connection.run("BEGIN IMMEDIATE")
            } catch {
                for call in rest { call.fail(error) }
                return
            }
            let changesBefore = connection.totalChanges
            var answers: [@Sendable (SQLiteError?) -> Void] = []
            var lost: SQLiteError?
            while lost == nil {
                if rest.isEmpty {
                    // Everything so far has run: a transaction that wrote may take in the calls of others first.
                    guard let delay, connection.totalChanges != changesBefore else { break }
                    let joining = joiningCalls(delay, grouped: answers.count, oldest: oldest, waited: &delayed)
                    guard !joining.isEmpty else { break }
                    rest = joining[...]
                }
                guard let call = rest.first else { break }
                rest = rest.dropFirst()
                do {
                    try connection.run("SAVEPOINT grouped_call")
                } catch {
                    lost = error
                    call.fail(error)
                    break
                }
                let (succeeded, answer) = call.run(connection)
                if !connection.inTransaction {
                    // SQLite rolled the whole transaction back: the calls before this one lost their writes.
                    lost = SQLiteError(code: SQLITE_ABORT, message: "the group's transaction was rolled back")
                    answer(succeeded ? lost : nil)
                    break
                }
                do {
                    if !succeeded { try connection.run("ROLLBACK TO grouped_call") }
                    try connection.run("RELEASE grouped_call")
                    answers.append(answer)
                } catch {
                    lost = error
                    answer(succeeded ? error : nil)
                }
            }
            if let lost {
                if connection.inTransaction { try? connection.execute("ROLLBACK") }
                for answer in answers { answer(lost) }
                continue
            }
            do {
                try connection.run("COMMIT")
                record(calls: answers.count, delayed: delayed)
                for answer in answers { answer(nil) }
            } catch {
                if connection.inTransaction { try? connection.execute("ROLLBACK") }
                for answer in answers { answer(error) }
            }
        }
    }

    private func record(calls: Int, delayed: Bool = false) {
        counters.withLock { counters in
            if delayed { counters.delayed += 1 }
            counters.groups += 1
            counters.calls += calls
            counters.largestGroup = max(counters.largestGroup, calls)
        }
    }
}

/// How long a group that needs a sync may wait for more calls while other requests are in flight
/// (``SQLiteDatabase``, "Commit delay"; the configuration's `sqlite_commit_delay_ms` and
/// `sqlite_commit_siblings`).
struct SQLiteCommitDelay: Sendable {
    /// The longest a call waits, from when it was queued, for others to join its group.
    var maximum: Duration
    /// How many other requests must be in flight for a group to wait at all.
    var siblings: Int
    /// Requests in flight now that may write (``RequestsInFlight``).
    var inFlight: @Sendable () -> Int

    var isActive: Bool { maximum > .zero && siblings >= 1 }

    var maximumNanoseconds: Int64 {
        let (seconds, attoseconds) = maximum.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Whether a call's commit must reach the device before the call returns (under `synchronous=FULL`).
enum SQLiteWriteDurability: Sendable {
    /// As the file is configured: synced under `FULL`.
    case synced
    /// Written to the WAL, synced by the next synced commit (a ``StoreWriteDurability/provisional`` write).
    case unsynced
}
