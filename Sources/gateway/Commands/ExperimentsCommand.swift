import ArgumentParser
import Foundation
import GatewayCore
import Logging

/// `gateway experiments report NAME`: the A/B report from the stored verifications, as a table.
struct Experiments: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Experiment reports.", subcommands: [Report.self])

    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Per-arm starts, approvals, conversion with a 95% interval, p-value against control, cost.")

        @Argument(help: "The experiment's name, as in the configuration.") var name: String
        @Option(help: "The configuration file that defines the experiment and the prices.") var config: String
        @Option(name: .customLong("data-dir"), help: "The gateway's data directory (its SQLite store).")
        var dataDirectory = ".gateway"
        @Option(help: "Only verifications started at or after this RFC 3339 time.") var from: String?
        @Option(help: "Only verifications started before this RFC 3339 time.") var to: String?
        @Option(help: "Only numbers of this region (GB, US…).") var country: String?
        @Option(help: "Minimum difference in conversion to size the sample for (absolute).") var mde = 0.05
        @Flag(help: "Print JSON, as GET /v1/admin/experiments/{name} does.") var json = false

        func run() async throws {
            let configuration: GatewayConfiguration
            do {
                configuration = try GatewayConfiguration.load(
                    path: config, plugins: InstalledPlugins.all, environment: ProcessInfo.processInfo.environment)
            } catch {
                FileHandle.standardError.write(Data("gateway: \(error)\n".utf8))
                throw ExitCode(78)
            }
            guard let experiment = configuration.routing?.experiments[name] else {
                FileHandle.standardError.write(Data("gateway: no experiment named `\(name)` in \(config)\n".utf8))
                throw ExitCode(64)
            }
            // A report of a store that is not there would be all zeros (and would leave an empty store behind).
            let file = try StoreFile.existing(dataDirectory: dataDirectory)
            let store = try SQLiteVerificationStore(path: file, logger: Logger(label: "gateway"))
            let region = try PhoneNumbersController.region(country, name: "--country")
            let records = try await store.records(
                experiment: name, from: try AdminController.date(from, name: "from"),
                to: try AdminController.date(to, name: "to"))
            let report = ExperimentReport.build(
                experiment: experiment, records: records, prices: configuration.prices,
                from: try AdminController.date(from, name: "from"), to: try AdminController.date(to, name: "to"),
                country: region, minimumEffect: mde)
            if json {
                CommandOutput.write(String(decoding: JSONResponse.encode(report.json), as: UTF8.self))
            } else {
                CommandOutput.write(report.table)
            }
        }
    }
}
