import Foundation
import GatewayCore
import Synchronization

/// Emulator persistence in memory that counts the rows its tables' transactions touch: a value read, a key a
/// lookup or a due sweep returned, a row written or removed. A coarse cost measure that does not depend on
/// the machine's speed: an emulator that keeps its state as rows (by key, by lookup, due) touches as many rows
/// per call when it holds 2,000 requests as when it holds 20; one that scans grows with them.
package final class CountingEmulatorPersistence: EmulatorPersistence {
    private let base = InMemoryEmulatorPersistence()
    private let counter = Counter()

    package init() {}

    /// Rows touched since the start.
    package var rowsTouched: Int { counter.value.withLock { $0 } }

    package func load() -> [String: Data] { base.load() }
    package func save(_ changes: [String: Data?]) { base.save(changes) }

    package func table(_ name: String) -> any EmulatorTable {
        CountingTable(base: base.memoryTable(name), counter: counter)
    }

    /// Rows the table `name` stores.
    package func rowCount(_ name: String) -> Int { base.memoryTable(name).count }

    final class Counter: Sendable {
        let value = Mutex(0)
        func add(_ count: Int) { value.withLock { $0 += count } }
    }

    private struct CountingTable: EmulatorTable {
        let base: InMemoryEmulatorTable
        let counter: Counter

        func transaction<T: Sendable>(_ body: @escaping @Sendable (any EmulatorRows) throws -> T) async throws -> T {
            let counter = counter
            return try await base.transaction { rows in try body(CountingRows(base: rows, counter: counter)) }
        }

        func transactionNow<T>(_ body: (any EmulatorRows) throws -> T) throws -> T {
            try base.transactionNow { rows in try body(CountingRows(base: rows, counter: counter)) }
        }
    }

    private struct CountingRows: EmulatorRows {
        let base: any EmulatorRows
        let counter: Counter

        func value(forKey key: String) throws -> Data? {
            let value = try base.value(forKey: key)
            counter.add(value == nil ? 0 : 1)
            return value
        }

        func keys(lookup: String) throws -> [String] {
            let keys = try base.keys(lookup: lookup)
            counter.add(keys.count)
            return keys
        }

        func keysDue(at now: Date, limit: Int) throws -> [String] {
            let keys = try base.keysDue(at: now, limit: limit)
            counter.add(keys.count)
            return keys
        }

        func put(_ value: Data, forKey key: String, lookup: String, due: Date) throws {
            counter.add(1)
            try base.put(value, forKey: key, lookup: lookup, due: due)
        }

        func remove(_ key: String) throws {
            counter.add(1)
            try base.remove(key)
        }
    }
}
