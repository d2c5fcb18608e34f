import Foundation
import Synchronization

/// Where an emulator keeps its state across restarts: its tables (``table(_:)``), rows it reads and writes
/// per call, so a call costs the same whatever else the emulator holds and nothing is held in memory or read
/// at startup (docs/design.md §7). Beside them, the entities earlier versions saved one JSON value per key, all read
/// back at startup (``load()``), which each emulator moves into its tables once and deletes (``save(_:)``).
/// The sandbox backs both with rows in a SQLite file under the data directory; tests use
/// ``InMemoryEmulatorPersistence`` or nothing at all.
public protocol EmulatorPersistence: Sendable {
    /// Every entity saved one by one and not deleted: read once, when the emulator is built.
    func load() -> [String: Data]

    /// Saves or deletes (`nil`) entities saved one by one, at once.
    func save(_ changes: [String: Data?])

    /// The emulator's table `name` (``EmulatorTable``): rows it reads and writes per call, kept beside
    /// what ``load()`` returns and never part of it. Every call with the same name gives the same rows.
    func table(_ name: String) -> any EmulatorTable
}

/// Keeps nothing: an emulator that starts empty every time.
public struct NoEmulatorPersistence: EmulatorPersistence {
    /// Persistence that keeps nothing.
    public init() {}
    /// Nothing: no entity was kept.
    public func load() -> [String: Data] { [:] }
    /// Discards the changes.
    public func save(_ changes: [String: Data?]) {}

    /// A new, empty table in memory each time: nothing survives the emulator.
    public func table(_ name: String) -> any EmulatorTable { InMemoryEmulatorTable() }
}

/// Keeps the entities in memory, for tests that build a second emulator over the first one's state.
package final class InMemoryEmulatorPersistence: EmulatorPersistence {
    private let entities = Mutex<[String: Data]>([:])
    private let writes = Mutex(0)
    private let tables = Mutex<[String: InMemoryEmulatorTable]>([:])

    package init() {}

    package func load() -> [String: Data] { entities.withLock { $0 } }

    package func save(_ changes: [String: Data?]) {
        entities.withLock { entities in
            for (key, value) in changes {
                if let value { entities[key] = value } else { entities.removeValue(forKey: key) }
            }
        }
        writes.withLock { $0 += changes.count }
    }

    package func table(_ name: String) -> any EmulatorTable { memoryTable(name) }

    /// The table `name` itself, for tests that count its rows and writes.
    package func memoryTable(_ name: String) -> InMemoryEmulatorTable {
        tables.withLock { tables in
            if let table = tables[name] { return table }
            let table = InMemoryEmulatorTable()
            tables[name] = table
            return table
        }
    }

    /// Entities written so far (a save of one entity counts one), to show a call writes only what it changed.
    package var writeCount: Int { writes.withLock { $0 } }
}
