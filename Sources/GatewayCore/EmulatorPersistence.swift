import Foundation
import Synchronization

/// Where an emulator keeps its state across restarts: one JSON value per key (a verification, a session),
/// written when that entity changes, so a call costs the same whatever else the emulator holds
/// (DESIGN.md §7). The sandbox backs it with rows in a SQLite file under the data directory; tests use
/// ``InMemoryEmulatorPersistence`` or nothing at all.
public protocol EmulatorPersistence: Sendable {
    /// Every entity saved and not deleted: read once, when the emulator is built.
    func load() -> [String: Data]

    /// Saves the changed entities (`nil` deletes). Called in the order the changes happened, inside the
    /// emulator's own lock, so a later change never lands before an earlier one.
    func save(_ changes: [String: Data?])

    /// ``save(_:)`` without waiting for it: queues the changes, in the same order and inside the same lock,
    /// and returns at once; the emulator awaits the answer's ``EmulatorSave/completed()`` outside its lock,
    /// before it answers the call. Under load the SQLite-backed sandbox commits the saves that queued up
    /// together as one transaction, and no thread waits on the emulator's lock while a save is written. By
    /// default it saves at once and returns a save already complete.
    func enqueue(_ changes: [String: Data?]) -> EmulatorSave

    /// The emulator's table `name` (``EmulatorTable``): rows it reads and writes per call, kept beside
    /// what ``load()`` returns and never part of it. Every call with the same name gives the same rows.
    func table(_ name: String) -> any EmulatorTable
}

extension EmulatorPersistence {
    public func enqueue(_ changes: [String: Data?]) -> EmulatorSave {
        save(changes)
        return .done
    }
}

/// A save queued by ``EmulatorPersistence/enqueue(_:)``.
public struct EmulatorSave: Sendable {
    private let wait: @Sendable () async -> Void

    /// Waits with `wait` for the save to complete.
    public init(_ wait: @escaping @Sendable () async -> Void) {
        self.wait = wait
    }

    /// A save that has completed already.
    public static let done = EmulatorSave {}

    /// Returns once the changes are saved (or their save failed, which the persistence reports itself).
    public func completed() async {
        await wait()
    }
}

/// Keeps nothing: an emulator that starts empty every time.
public struct NoEmulatorPersistence: EmulatorPersistence {
    public init() {}
    public func load() -> [String: Data] { [:] }
    public func save(_ changes: [String: Data?]) {}

    /// A new, empty table in memory each time: nothing survives the emulator.
    public func table(_ name: String) -> any EmulatorTable { InMemoryEmulatorTable() }
}

/// Keeps the entities in memory, for tests that build a second emulator over the first one's state.
public final class InMemoryEmulatorPersistence: EmulatorPersistence {
    private let entities = Mutex<[String: Data]>([:])
    private let writes = Mutex(0)
    private let tables = Mutex<[String: InMemoryEmulatorTable]>([:])

    public init() {}

    public func load() -> [String: Data] { entities.withLock { $0 } }

    public func save(_ changes: [String: Data?]) {
        entities.withLock { entities in
            for (key, value) in changes {
                if let value { entities[key] = value } else { entities.removeValue(forKey: key) }
            }
        }
        writes.withLock { $0 += changes.count }
    }

    public func table(_ name: String) -> any EmulatorTable { memoryTable(name) }

    /// The table `name` itself, for tests that count its rows and writes.
    public func memoryTable(_ name: String) -> InMemoryEmulatorTable {
        tables.withLock { tables in
            if let table = tables[name] { return table }
            let table = InMemoryEmulatorTable()
            tables[name] = table
            return table
        }
    }

    /// Entities written so far (a save of one entity counts one), to show a call writes only what it changed.
    public var writeCount: Int { writes.withLock { $0 } }
}
