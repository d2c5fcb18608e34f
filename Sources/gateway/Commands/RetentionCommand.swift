import ArgumentParser
import Foundation
import GatewayCore
import Logging

/// `gateway retention`: applies the configuration's `retention` now, round after round until nothing is left,
/// and prints what it did (docs/operations.md, "Retention"). The server does the same in the background; this is
/// for an operator who lowered a horizon and wants the space back at once, or who runs it from a scheduler.
struct RetentionRun: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Delete and anonymize what the configuration's retention says, now, and print what was done.")

    @OptionGroup var store: Keys.StoreOptions

    @Option(
        name: .customLong("as-of"),
        help:
            "Apply the horizons as if it were this time (Unix seconds) instead of now: for a replay or a simulation of days of traffic."
    )
    var asOf: Double?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings: RetentionSettings
        do {
            settings =
                try store.config.map { path throws(ConfigurationError) in
                    try GatewayConfiguration.load(path: path, plugins: InstalledPlugins.all, environment: environment)
                }?.retention ?? RetentionSettings()
        } catch {
            FileHandle.standardError.write(Data("gateway retention: \(error)\n".utf8))
            throw ExitCode(78)  // EX_CONFIG
        }
        guard settings.isActive else {
            CommandOutput.write("retention is off in this configuration: nothing to do")
            return
        }
        let logger = Logger(label: "gateway.retention") { _ in SwiftLogNoOpLogHandler() }
        let total = try await store.withStore(existing: true) { opened -> RetentionService.Round in
            guard let sql = opened as? any SQLStore else { throw ExitCode(1) }
            let clock: any WallClock = asOf.map { ShiftedClock(to: Date(timeIntervalSince1970: $0)) } ?? SystemClock()
            let service = RetentionService(store: sql, settings: settings, clock: clock, logger: logger)
            var total = RetentionService.Round()
            while true {
                let round = await service.round()
                total.add(round)
                if let failure = round.failure {
                    FileHandle.standardError.write(Data("gateway retention: \(failure.message)\n".utf8))
                    throw ExitCode(69)  // EX_UNAVAILABLE
                }
                if !round.more { return total }
            }
        }
        CommandOutput.write(
            "deleted \(total.deletedVerifications) verifications, \(total.deletedEvents) events and "
                + "\(total.deletedOther) other rows; anonymized \(total.anonymized); \(total.batches) batches, "
                + "the longest \(total.longestBatch.wholeMilliseconds) ms")
    }
}

/// The system's clock moved to `start`: it reads `start` when made, and runs on from there in real time.
private struct ShiftedClock: WallClock {
    let offset: TimeInterval

    init(to start: Date) { offset = start.timeIntervalSinceNow }

    var now: Date { Date().addingTimeInterval(offset) }
    var instant: ContinuousClock.Instant { ContinuousClock.now }
    func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
