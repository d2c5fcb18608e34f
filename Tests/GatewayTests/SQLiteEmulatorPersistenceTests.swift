import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Synchronization
import Testing

@testable import gateway

/// The sandbox emulators' rows in `sandbox/emulators.sqlite`: saves queued with `enqueue` inside an
/// emulator's lock land in that order, and each is in the file once its wait returns.
@Suite("Sandbox emulator state in SQLite")
struct SQLiteEmulatorPersistenceTests {
    let directory = TemporaryDirectory("gateway-emulator-state")

    private var file: URL { directory.url.appendingPathComponent("emulators.sqlite") }

    private func persistence(_ plugin: String = "twilio") throws -> SQLiteEmulatorPersistence {
        let database = try #require(SQLiteEmulatorPersistence.open(file, logger: quietLogger))
        return SQLiteEmulatorPersistence(database: database, pluginID: plugin, logger: quietLogger)
    }

    @Test("saves queued under a lock by concurrent calls land in the order they were queued; the last one wins")
    func orderUnderConcurrency() async throws {
        let store = try persistence()
        // Stands for an emulator: its state and the lock it enqueues under.
        final class Lock: Sendable { let value = Mutex(0) }
        let counter = Lock()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<300 {
                group.addTask {
                    let saved = counter.value.withLock { value -> EmulatorSave in
                        value += 1
                        return store.enqueue(["VEshared": Data(String(value).utf8), "VE\(value)": Data("x".utf8)])
                    }
                    await saved.completed()
                }
            }
            try await group.waitForAll()
        }
        let reopened = try persistence()
        let rows = reopened.load()
        #expect(rows["VEshared"] == Data("300".utf8))
        #expect(rows.count == 301)
        // Calls that queued together shared transactions.
        let counters = store.database.groupCounters
        #expect(counters.calls == 300)
        #expect(counters.groups <= counters.calls)
    }

    @Test("a save's wait returns once its rows are in the file; deletes too; plugins keep apart")
    func visibleOnceCompleted() async throws {
        let twilio = try persistence("twilio")
        let sinch = SQLiteEmulatorPersistence(database: twilio.database, pluginID: "sinch", logger: quietLogger)
        await twilio.enqueue(["VE1": Data("one".utf8), "VE2": Data("two".utf8)]).completed()
        await sinch.enqueue(["VE1": Data("sinch".utf8)]).completed()
        let connection = try SQLiteConnection(path: file.path, synchronous: .normal)
        defer { connection.close() }
        let count = { () throws -> Int64 in
            try connection.query("SELECT count(*) FROM emulator_state") { (row) throws(SQLiteError) in row.int64(0) }
                .first.flatMap { $0 } ?? -1
        }
        #expect(try count() == 3)
        await twilio.enqueue(["VE1": nil]).completed()
        #expect(try count() == 2)
        #expect(twilio.load() == ["VE2": Data("two".utf8)])
        #expect(sinch.load() == ["VE1": Data("sinch".utf8)])
    }
}

private let quietLogger = Logger(label: "test.sandbox.state") { _ in SwiftLogNoOpLogHandler() }
