import ArgumentParser
import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Testing

@testable import gateway

/// The commands that read the gateway's store: a `--data-dir` that holds none is an error, not an empty
/// answer, and leaves nothing behind.
@Suite("Commands that read the store")
struct StoreCommandTests {
    static let experiment = """
        sandbox: true
        experiments:
          - name: ab
            arms:
              - {provider: twilio, weight: 50, control: true}
              - {provider: firebase, weight: 50}
        """

    @Test("experiments report with a --data-dir that holds no store fails with its path, and makes nothing")
    func reportWithoutStore() async throws {
        let scratch = TemporaryDirectory("gateway-report")
        defer { withExtendedLifetime(scratch) {} }
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let config = scratch.url.appendingPathComponent("gateway.yaml")
        try Self.experiment.write(to: config, atomically: true, encoding: .utf8)
        let missing = scratch.url.appendingPathComponent("no-such-dir")
        let report = try #require(
            try Experiments.Report.parseAsRoot(["ab", "--config", config.path, "--data-dir", missing.path])
                as? Experiments.Report)
        let error = await #expect(throws: StoreFile.Missing.self) { try await report.run() }
        #expect(error?.description.contains(missing.appendingPathComponent("gateway.sqlite").path) == true)
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        // An existing directory without a store is refused the same way, and stays empty.
        let empty = scratch.url.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(throws: StoreFile.Missing.self) { try StoreFile.existing(dataDirectory: empty.path) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).isEmpty)
    }

    @Test("retention applies the configuration now and says what it did; off says so; no store is an error")
    func retention() async throws {
        let scratch = TemporaryDirectory("gateway-retention-command")
        defer { withExtendedLifetime(scratch) {} }
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let store = try SQLiteVerificationStore(path: scratch.path("gateway.sqlite"), logger: .quiet)
        var old = try StoreConformance.phoneRecord(id: "VEretention01")
        old.createdAt = Date().addingTimeInterval(-40 * 86_400)
        old.expiresAt = old.createdAt.addingTimeInterval(600)
        try await store.insert(
            old, events: [VerificationEvent(verificationID: old.id, kind: .started, at: old.createdAt)])
        store.close()
        let config = scratch.url.appendingPathComponent("gateway.yaml")
        try "sandbox: true\nretention: {verifications: 30d}\n".write(to: config, atomically: true, encoding: .utf8)
        let command = try #require(
            try RetentionRun.parseAsRoot(["--config", config.path, "--data-dir", scratch.url.path]) as? RetentionRun)
        let (lines, error) = await CommandOutput.collecting { try await command.run() }
        #expect(error == nil)
        #expect(lines.first?.hasPrefix("deleted 1 verifications, 1 events and 0 other rows; anonymized 0;") == true)
        let again = await CommandOutput.collecting { try await command.run() }
        #expect(again.lines.first?.hasPrefix("deleted 0 verifications, 0 events") == true)
        try "sandbox: true\nretention: off\n".write(to: config, atomically: true, encoding: .utf8)
        let off = await CommandOutput.collecting { try await command.run() }
        #expect(off.lines == ["retention is off in this configuration: nothing to do"])
        let missing = try #require(
            try RetentionRun.parseAsRoot(["--data-dir", scratch.url.appendingPathComponent("typo").path])
                as? RetentionRun)
        await #expect(throws: StoreFile.Missing.self) { try await missing.run() }
    }

    @Test("retention --as-of applies the horizons at that time: a verification 10 days old goes 25 days later")
    func retentionAsOf() async throws {
        let scratch = TemporaryDirectory("gateway-retention-as-of")
        defer { withExtendedLifetime(scratch) {} }
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let store = try SQLiteVerificationStore(path: scratch.path("gateway.sqlite"), logger: .quiet)
        var record = try StoreConformance.phoneRecord(id: "VEretention02")
        record.createdAt = Date().addingTimeInterval(-10 * 86_400)
        record.expiresAt = record.createdAt.addingTimeInterval(600)
        try await store.insert(record)
        store.close()
        let config = scratch.url.appendingPathComponent("gateway.yaml")
        try "sandbox: true\nretention: {verifications: 30d}\n".write(to: config, atomically: true, encoding: .utf8)
        func run(asOf: Date) async throws -> [String] {
            let command = try #require(
                try RetentionRun.parseAsRoot([
                    "--config", config.path, "--data-dir", scratch.url.path,
                    "--as-of", String(asOf.timeIntervalSince1970),
                ]) as? RetentionRun)
            let (lines, error) = await CommandOutput.collecting { try await command.run() }
            #expect(error == nil)
            return lines
        }
        // Ten days from now it is 20 days old: kept. Twenty-five days from now, 35: deleted.
        #expect(try await run(asOf: Date().addingTimeInterval(10 * 86_400)).first?.hasPrefix("deleted 0 ") == true)
        #expect(try await run(asOf: Date().addingTimeInterval(25 * 86_400)).first?.hasPrefix("deleted 1 ") == true)
    }

    @Test("keys list says so when there is no key; list and revoke make no store where --data-dir points at none")
    func keysList() async throws {
        #expect(Keys.List.lines([]) == ["no API keys in the store (`gateway keys create` makes one)"])
        let scratch = TemporaryDirectory("gateway-keys-list")
        defer { withExtendedLifetime(scratch) {} }
        let missing = scratch.url.appendingPathComponent("typo")
        let list = try #require(try Keys.List.parseAsRoot(["--data-dir", missing.path]) as? Keys.List)
        await #expect(throws: StoreFile.Missing.self) { try await list.run() }
        let revoke = try #require(try Keys.Revoke.parseAsRoot(["key_0", "--data-dir", missing.path]) as? Keys.Revoke)
        await #expect(throws: StoreFile.Missing.self) { try await revoke.run() }
        #expect(!FileManager.default.fileExists(atPath: missing.path))

        // A store with one key lists it, without its secret.
        try FileManager.default.createDirectory(at: scratch.url, withIntermediateDirectories: true)
        let store = try SQLiteVerificationStore(
            path: scratch.path("gateway.sqlite"), logger: .quiet)
        #expect(
            Keys.List.lines(try await store.apiKeys()) == ["no API keys in the store (`gateway keys create` makes one)"]
        )
        let made = StoredAPIKey.make(name: "app", scopes: [.verify], countries: ["GB"], at: Date())
        try await store.insertAPIKey(made.stored)
        let lines = Keys.List.lines(try await store.apiKeys())
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("\(made.stored.key.id)  app  scopes=verify countries=GB  created ") == true)
        #expect(lines.first?.contains(made.secret) == false)
    }
}
