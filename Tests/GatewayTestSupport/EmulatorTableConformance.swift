import Foundation
import GatewayCore
import Testing

/// The behaviour every ``EmulatorTable`` must show (in memory, and the sandbox's SQLite file), written once:
/// keys, lookups in the order keys were first stored, due keys earliest first, replacement and removal, and
/// transactions that run one at a time.
public struct EmulatorTableConformance: Sendable {
    private let makeTable: @Sendable () throws -> any EmulatorTable

    /// A suite over the tables `makeTable` makes; each check makes its own.
    public init(makeTable: @escaping @Sendable () throws -> any EmulatorTable) {
        self.makeTable = makeTable
    }

    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    /// Runs every check in turn.
    public func runAll() async throws {
        try await keysLookupsAndDueTimes()
        try await transactionsRunOneAtATime()
    }

    /// Values by key; a lookup's keys in the order they were first stored (a replaced key keeps its place,
    /// a removed and stored-again one goes last); due keys earliest first, up to the limit, with new due
    /// times taking effect.
    public func keysLookupsAndDueTimes() async throws {
        let table = try makeTable()
        let epoch = Self.epoch
        try await table.transaction { rows in
            try rows.put(Data("a".utf8), forKey: "A", lookup: "+1", due: epoch.addingTimeInterval(30))
            try rows.put(Data("b".utf8), forKey: "B", lookup: "+1", due: epoch.addingTimeInterval(10))
            try rows.put(Data("c".utf8), forKey: "C", lookup: "+2", due: epoch.addingTimeInterval(20))
        }
        try await table.transaction { rows in
            #expect(try rows.value(forKey: "A") == Data("a".utf8))
            #expect(try rows.value(forKey: "Z") == nil)
            #expect(try rows.keys(lookup: "+1") == ["A", "B"])
            #expect(try rows.keys(lookup: "+3") == [])
            #expect(try rows.keysDue(at: epoch, limit: 10) == [])
            #expect(try rows.keysDue(at: epoch.addingTimeInterval(20), limit: 10) == ["B", "C"])
            #expect(try rows.keysDue(at: epoch.addingTimeInterval(60), limit: 2) == ["B", "C"])
            // Replaced: new value and due time, same place in its lookup.
            try rows.put(Data("a2".utf8), forKey: "A", lookup: "+1", due: epoch.addingTimeInterval(5))
            #expect(try rows.value(forKey: "A") == Data("a2".utf8))
            #expect(try rows.keys(lookup: "+1") == ["A", "B"])
            #expect(try rows.keysDue(at: epoch.addingTimeInterval(60), limit: 10) == ["A", "B", "C"])
            // Moved to a later due time: no longer due at the earlier one.
            try rows.put(Data("b".utf8), forKey: "B", lookup: "+1", due: epoch.addingTimeInterval(100))
            #expect(try rows.keysDue(at: epoch.addingTimeInterval(60), limit: 10) == ["A", "C"])
            // Removed, then stored again: last in its lookup.
            try rows.remove("A")
            try rows.remove("A")
            #expect(try rows.value(forKey: "A") == nil)
            #expect(try rows.keys(lookup: "+1") == ["B"])
            #expect(try rows.keysDue(at: epoch.addingTimeInterval(60), limit: 10) == ["C"])
            try rows.put(Data("a3".utf8), forKey: "A", lookup: "+1", due: epoch.addingTimeInterval(1))
            #expect(try rows.keys(lookup: "+1") == ["B", "A"])
            // Another lookup: it leaves the first one, and takes its place by when it was first stored.
            try rows.put(Data("c".utf8), forKey: "C", lookup: "+1", due: epoch.addingTimeInterval(20))
            #expect(try rows.keys(lookup: "+2") == [])
            #expect(try rows.keys(lookup: "+1") == ["B", "C", "A"])
        }
        // What a transaction wrote is there for the next one.
        let seen = try await table.transaction { rows in
            (try rows.keys(lookup: "+1"), try rows.value(forKey: "A"))
        }
        #expect(seen.0 == ["B", "C", "A"])
        #expect(seen.1 == Data("a3".utf8))
        #expect(try table.transactionNow { rows in try rows.value(forKey: "B") } == Data("b".utf8))
    }

    /// 200 concurrent read-increment-write transactions on one key lose no increment: no transaction sees
    /// another's state half-way.
    public func transactionsRunOneAtATime() async throws {
        let table = try makeTable()
        let due = Self.epoch
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try await table.transaction { rows in
                        let count =
                            try rows.value(forKey: "counter").map { Int(String(decoding: $0, as: UTF8.self)) ?? 0 } ?? 0
                        try rows.put(Data(String(count + 1).utf8), forKey: "counter", lookup: "all", due: due)
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = try await table.transaction { rows in try rows.value(forKey: "counter") }
        #expect(final == Data("200".utf8))
    }
}
