import Foundation
import GatewayCore
import GatewayTestSupport
import GatewayTwilio
import HTTPTypes
import Logging
import Synchronization
import Testing

@testable import gateway

/// The sandbox emulators' rows in `sandbox/emulators.sqlite`: the entities saved one by one that emulators
/// move from, and the tables they keep their state in.
@Suite("Sandbox emulator state in SQLite")
struct SQLiteEmulatorPersistenceTests {
    let directory = TemporaryDirectory("gateway-emulator-state")

    private var file: URL { directory.url.appendingPathComponent("emulators.sqlite") }

    private func persistence(_ plugin: String = "twilio") throws -> SQLiteEmulatorPersistence {
        let database = try #require(SQLiteEmulatorPersistence.open(file, logger: Logger.quiet))
        return SQLiteEmulatorPersistence(database: database, pluginID: plugin, logger: Logger.quiet)
    }

    @Test("a save's rows are in the file when it returns; deletes too; plugins keep apart")
    func visibleOnceCompleted() async throws {
        let twilio = try persistence("twilio")
        let sinch = SQLiteEmulatorPersistence(database: twilio.database, pluginID: "sinch", logger: Logger.quiet)
        twilio.save(["VE1": Data("one".utf8), "VE2": Data("two".utf8)])
        sinch.save(["VE1": Data("sinch".utf8)])
        let connection = try SQLiteConnection(path: file.path, synchronous: .normal)
        defer { connection.close() }
        let count = { () throws -> Int64 in
            try connection.query("SELECT count(*) FROM emulator_state") { (row) throws(SQLiteError) in row.int64(0) }
                .first.flatMap { $0 } ?? -1
        }
        #expect(try count() == 3)
        twilio.save(["VE1": nil])
        #expect(try count() == 2)
        #expect(twilio.load() == ["VE2": Data("two".utf8)])
        #expect(sinch.load() == ["VE1": Data("sinch".utf8)])
    }

    @Test("the sandbox file's emulator tables keep the EmulatorTable contract")
    func tableConformance() async throws {
        let database = try #require(SQLiteEmulatorPersistence.open(file, logger: Logger.quiet))
        let made = Mutex(0)
        try await EmulatorTableConformance(makeTable: {
            // A table of its own per check, in one file.
            let n = made.withLock { value -> Int in
                value += 1
                return value
            }
            return SQLiteEmulatorTable(database: database, plugin: "twilio", name: "t\(n)")
        }).runAll()
    }

    @Test("a table's rows survive reopening the file, keep apart from other plugins and tables, and stay out of load()")
    func tableRowsPersist() async throws {
        let epoch = Date(timeIntervalSince1970: 1_800_000_000)
        do {
            let twilio = try persistence("twilio")
            try await twilio.table("verifications").transaction { rows in
                try rows.put(Data("one".utf8), forKey: "VE1", lookup: "+1", due: epoch)
            }
            try await twilio.table("other").transaction { rows in
                try rows.put(Data("other".utf8), forKey: "VE1", lookup: "+1", due: epoch)
            }
            try await persistence("sinch").table("verifications").transaction { rows in
                try rows.put(Data("sinch".utf8), forKey: "VE1", lookup: "+1", due: epoch)
            }
        }
        let reopened = try persistence("twilio")
        #expect(reopened.load().isEmpty)
        let value = try await reopened.table("verifications").transaction { rows in
            (try rows.value(forKey: "VE1"), try rows.keys(lookup: "+1"), try rows.keysDue(at: epoch, limit: 5))
        }
        #expect(value.0 == Data("one".utf8))
        #expect(value.1 == ["VE1"])
        #expect(value.2 == ["VE1"])
    }

    @Test("a transaction whose body throws writes nothing and rethrows the body's error; the next one runs")
    func tableRollback() async throws {
        struct Refused: Error, Equatable {}
        let table = try persistence().table("verifications")
        let epoch = Date(timeIntervalSince1970: 1_800_000_000)
        await #expect(throws: Refused.self) {
            try await table.transaction { rows in
                try rows.put(Data("x".utf8), forKey: "VE1", lookup: "+1", due: epoch)
                throw Refused()
            }
        }
        #expect(throws: Refused.self) {
            try table.transactionNow { rows in
                try rows.put(Data("x".utf8), forKey: "VE2", lookup: "+1", due: epoch)
                throw Refused()
            }
        }
        let left = try await table.transaction { rows in
            try rows.put(Data("y".utf8), forKey: "VE3", lookup: "+1", due: epoch)
            return try rows.keys(lookup: "+1")
        }
        #expect(left == ["VE3"])
    }

    @Test("the Twilio emulator on the sandbox file: racing starts for one To share one verification and stop at five")
    func twilioEmulatorRacesOnTheFile() async throws {
        let emulator = TwilioEmulator(
            context: EmulatorContext(clock: SystemClock(), logger: Logger.quiet, persistence: try persistence("twilio"))
        )
        var headers = HTTPFields()
        headers[.authorization] =
            "Basic " + Data("\(TwilioSandbox.accountSID):\(TwilioSandbox.authToken)".utf8).base64EncodedString()
        headers[.contentType] = "application/x-www-form-urlencoded"
        let request = EmulatorRequest(
            method: .post, path: "/v2/Services/\(TwilioSandbox.serviceSID)/Verifications", query: nil,
            headerFields: headers, body: Data("To=%2B14155550142&Channel=sms".utf8))
        let answers = await withTaskGroup(of: (Int, String?).self) { group in
            for _ in 0..<12 {
                group.addTask {
                    guard case .response(let response) = await emulator.handle(request) else { return (0, nil) }
                    let sid =
                        (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["sid"] as? String
                    return (response.status.code, sid)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.filter { $0.0 == 201 }.count == 5)
        #expect(answers.filter { $0.0 == 429 }.count == 7)
        #expect(Set(answers.filter { $0.0 == 201 }.compactMap(\.1)).count == 1)
        // A second emulator on the same file (a restart) finds the verification without loading anything.
        let restarted = TwilioEmulator(
            context: EmulatorContext(clock: SystemClock(), logger: Logger.quiet, persistence: try persistence("twilio"))
        )
        guard case .response(let again) = await restarted.handle(request) else { return }
        #expect(again.status.code == 429, "the sixth send of the same verification")
    }
}
