import Foundation
import GatewayTestSupport
import Testing

@testable import GatewayCore

@Suite("Emulator tables in memory")
struct EmulatorTableTests {
    @Test("the in-memory table keeps the EmulatorTable contract")
    func conformance() async throws {
        try await EmulatorTableConformance(makeTable: { InMemoryEmulatorTable() }).runAll()
    }

    @Test("persistence without storage hands out empty tables; the in-memory one the same table per name")
    func tablesPerPersistence() async throws {
        let none = NoEmulatorPersistence()
        try await none.table("t").transaction { rows in try rows.put(Data(), forKey: "k", lookup: "", due: .now) }
        #expect(try await none.table("t").transaction { rows in try rows.value(forKey: "k") } == nil)
        let memory = InMemoryEmulatorPersistence()
        try await memory.table("t").transaction { rows in try rows.put(Data(), forKey: "k", lookup: "", due: .now) }
        #expect(try await memory.table("t").transaction { rows in try rows.value(forKey: "k") } == Data())
        #expect(try await memory.table("u").transaction { rows in try rows.value(forKey: "k") } == nil)
        #expect(memory.load().isEmpty, "table rows are not entities")
    }

    @Test("due keys come out earliest first whatever order they were stored in, each once")
    func dueOrder() throws {
        let table = InMemoryEmulatorTable()
        var generator = SystemRandomNumberGenerator()
        let epoch = Date(timeIntervalSince1970: 0)
        var expected: [String: Double] = [:]
        try table.transactionNow { rows in
            for n in 0..<500 {
                let due = Double(Int.random(in: 0..<100, using: &generator))
                try rows.put(Data(), forKey: "k\(n)", lookup: "l\(n % 7)", due: epoch.addingTimeInterval(due))
                expected["k\(n)"] = due
            }
            // Every fifth key moves to a new due time, every seventh is removed.
            for n in stride(from: 0, to: 500, by: 5) {
                let due = Double(Int.random(in: 0..<100, using: &generator))
                try rows.put(Data(), forKey: "k\(n)", lookup: "l\(n % 7)", due: epoch.addingTimeInterval(due))
                expected["k\(n)"] = due
            }
            for n in stride(from: 0, to: 500, by: 7) {
                try rows.remove("k\(n)")
                expected["k\(n)"] = nil
            }
            let due = try rows.keysDue(at: epoch.addingTimeInterval(49), limit: 1000)
            #expect(due.count == Set(due).count)
            #expect(Set(due) == Set(expected.filter { $0.value <= 49 }.keys))
            let times = due.compactMap { expected[$0] }
            #expect(times == times.sorted())
        }
        #expect(table.count == expected.count)
    }
}
