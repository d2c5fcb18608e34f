import Foundation
import Logging
import Synchronization

/// An emulator's entities as rows it reads and writes per call, for state that grows with traffic (a
/// vendor's verifications): nothing of it is held in memory or read at startup, so neither an emulator's
/// memory nor its restart grows with what it holds (docs/design.md §7). Each row has a key, a value
/// (the entity, as the emulator encodes it), a `lookup` (a second key that many rows may share, such as
/// the number a verification was sent to) and a `due` time (when the emulator wants to look at it again:
/// its expiry, or when it is forgotten).
///
/// The sandbox keeps the rows in `sandbox/emulators.sqlite`; tests use ``InMemoryEmulatorTable``. Build
/// one with ``EmulatorPersistence/table(_:)``.
public protocol EmulatorTable: Sendable {
    /// Runs `body` alone: no other transaction of this table runs meanwhile, and what `body` wrote is saved
    /// (committed, for the sandbox's file) before this returns. If `body` throws, what it wrote is rolled
    /// back and the error is rethrown; a failure to save is thrown as well.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any EmulatorRows) throws -> T) async throws -> T

    /// ``transaction(_:)`` for a caller that cannot suspend: an emulator moving rows from an earlier format
    /// while it is built. It blocks its thread until the rows are saved.
    func transactionNow<T>(_ body: (any EmulatorRows) throws -> T) throws -> T
}

#if compiler(>=6.2)
    /// ``EmulatorTable/attempt(_:logger:now:_:)`` builds a view inside a `@Sendable` closure, which captures the
    /// view's type: Swift 6.2 and later require that metatype to be sendable.
    public typealias EmulatorRowsViewMetatype = SendableMetatype
#else
    /// Before Swift 6.2, an empty protocol: metatypes need not be sendable there.
    public protocol EmulatorRowsViewMetatype {}
#endif

/// One call's view of an emulator's rows as of the call's time (its entity-level reads and writes, over
/// ``EmulatorRows``). ``EmulatorTable/attempt(_:logger:now:_:)`` builds it and sweeps what is due before the
/// call's own work; a struct with `rows` and `now` as its stored properties gets `init(rows:now:)` for free.
public protocol EmulatorRowsView: EmulatorRowsViewMetatype {
    init(rows: any EmulatorRows, now: Date)

    /// Handles what is due by `now` (expiry, forgetting), at most ``sweepBatch`` rows; reads treat what is
    /// due as handled already, so no call pays for more than one batch however much comes due at once.
    func sweep() throws
}

extension EmulatorRowsView {
    /// How many due rows one call handles at most.
    public static var sweepBatch: Int { 256 }
}

extension EmulatorTable {
    /// One call of an emulator on its rows: the view as of `now`, swept, then `body`, in one transaction; a
    /// failure is logged and gives `nil`, which the emulator answers with its vendor's 500.
    public func attempt<View: EmulatorRowsView, T: Sendable>(
        _ what: String, logger: Logger, now: Date, _ body: @escaping @Sendable (View) throws -> T
    ) async -> T? {
        await attempt(what, logger: logger) { rows in
            let view = View(rows: rows, now: now)
            try view.sweep()
            return try body(view)
        }
    }

    /// ``transaction(_:)`` for one call of an emulator: a failure (the sandbox's file) is logged as
    /// `"<what> failed"` and gives `nil`, which the emulator answers with its vendor's 500.
    public func attempt<T: Sendable>(
        _ what: String, logger: Logger, _ body: @escaping @Sendable (any EmulatorRows) throws -> T
    ) async -> T? {
        do {
            return try await transaction(body)
        } catch {
            logger.warning("\(what) failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Moves what an earlier version saved one entity per key (`saved`, all of it read back at startup) into
    /// this table with `move`, once, then deletes it from `context`'s persistence; a failure is logged and
    /// leaves the entities where they are, for the next start.
    public func moveSaved(
        _ saved: [String: Data], context: EmulatorContext, _ what: String,
        _ move: (any EmulatorRows, [String: Data]) throws -> Void
    ) {
        guard !saved.isEmpty else { return }
        do {
            try transactionNow { rows in try move(rows, saved) }
            context.persistence.save(saved.mapValues { _ in nil })
        } catch {
            context.logger.warning("\(what) saved by an earlier version not moved", metadata: ["error": "\(error)"])
        }
    }
}

/// The rows of one ``EmulatorTable``, valid inside the transaction that handed them out.
public protocol EmulatorRows {
    /// The value stored under `key`, if any.
    func value(forKey key: String) throws -> Data?

    /// The keys stored with `lookup`, in the order they were first stored.
    func keys(lookup: String) throws -> [String]

    /// Up to `limit` keys whose due time is at or before `now`, earliest first.
    func keysDue(at now: Date, limit: Int) throws -> [String]

    /// Stores `value` under `key` (replacing any value, lookup and due time; a key keeps its place in its
    /// lookup's order as long as it is stored).
    func put(_ value: Data, forKey key: String, lookup: String, due: Date) throws

    /// Removes `key`; nothing happens if it is not stored.
    func remove(_ key: String) throws
}

/// An ``EmulatorTable`` in memory: for tests and for an emulator without persistence. A transaction whose
/// body throws keeps what it wrote before throwing (the emulators' bodies throw only what the rows throw,
/// and these rows never do).
package final class InMemoryEmulatorTable: EmulatorTable, @unchecked Sendable {
    // unchecked: `rows` is only touched while `lock` is held.
    private let lock = Mutex(())
    private let rows = MemoryRows()

    package init() {}

    package func transaction<T: Sendable>(
        _ body: @escaping @Sendable (any EmulatorRows) throws -> T
    ) async throws -> T {
        try transactionNow(body)
    }

    package func transactionNow<T>(_ body: (any EmulatorRows) throws -> T) throws -> T {
        try lock.withLock { _ in try body(rows) }
    }

    /// Rows written (a put or a removal of a stored key counts one), to show a call writes only what it
    /// changed.
    package var writeCount: Int { lock.withLock { _ in rows.writes } }

    /// Rows stored.
    package var count: Int { lock.withLock { _ in rows.entries.count } }
}

/// The rows of ``InMemoryEmulatorTable``: a dictionary, an index per lookup, and a heap of due times whose
/// stale entries (a row removed or given another due time since) are skipped when they come up.
private final class MemoryRows: EmulatorRows {
    struct Entry {
        var value: Data
        var lookup: String
        var due: Date
        var order: Int
    }

    var entries: [String: Entry] = [:]
    var byLookup: [String: [String]] = [:]
    var dueHeap = DueHeap()
    var nextOrder = 0
    var writes = 0

    func value(forKey key: String) -> Data? { entries[key]?.value }

    func keys(lookup: String) -> [String] { byLookup[lookup] ?? [] }

    func keysDue(at now: Date, limit: Int) -> [String] {
        var due: [String] = []
        var seen: Set<String> = []
        var skipped: [DueHeap.Item] = []
        while due.count < limit, let top = dueHeap.peek, top.due <= now {
            dueHeap.pop()
            guard let entry = entries[top.key], entry.due == top.due, entry.order == top.order,
                seen.insert(top.key).inserted
            else { continue }
            due.append(top.key)
            skipped.append(top)
        }
        // Still stored: they stay due until the caller removes them or gives them another due time.
        for item in skipped { dueHeap.push(item) }
        return due
    }

    func put(_ value: Data, forKey key: String, lookup: String, due: Date) {
        writes += 1
        if var entry = entries[key] {
            if entry.lookup != lookup {
                removeFromLookup(key, entry.lookup)
                // In the order keys were first stored, as a key that was there all along.
                var keys = byLookup[lookup, default: []]
                let place = keys.firstIndex { (entries[$0]?.order ?? 0) > entry.order } ?? keys.count
                keys.insert(key, at: place)
                byLookup[lookup] = keys
                entry.lookup = lookup
            }
            if entry.due != due {
                dueHeap.push(DueHeap.Item(due: due, key: key, order: entry.order))
                entry.due = due
            }
            entry.value = value
            entries[key] = entry
            return
        }
        let order = nextOrder
        nextOrder += 1
        entries[key] = Entry(value: value, lookup: lookup, due: due, order: order)
        byLookup[lookup, default: []].append(key)
        dueHeap.push(DueHeap.Item(due: due, key: key, order: order))
    }

    func remove(_ key: String) {
        guard let entry = entries.removeValue(forKey: key) else { return }
        writes += 1
        removeFromLookup(key, entry.lookup)
    }

    private func removeFromLookup(_ key: String, _ lookup: String) {
        byLookup[lookup]?.removeAll { $0 == key }
        if byLookup[lookup]?.isEmpty == true { byLookup[lookup] = nil }
    }
}

/// A binary min-heap of due times (ties broken by the order rows were first stored).
struct DueHeap {
    struct Item {
        var due: Date
        var key: String
        var order: Int

        func precedes(_ other: Item) -> Bool { (due, order) < (other.due, other.order) }
    }

    private var items: [Item] = []

    var peek: Item? { items.first }

    mutating func push(_ item: Item) {
        items.append(item)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].precedes(items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func pop() -> Item? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var first = parent
            if left < items.count, items[left].precedes(items[first]) { first = left }
            if right < items.count, items[right].precedes(items[first]) { first = right }
            guard first != parent else { break }
            items.swapAt(parent, first)
            parent = first
        }
        return top
    }
}
