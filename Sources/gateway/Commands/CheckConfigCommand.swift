import ArgumentParser
import Foundation
import GatewayCore

/// `gateway check-config FILE`: validates a configuration as startup would, without the network, and prints
/// every problem at once, each as `FILE:LINE:COLUMN: problem`; exits 78 (EX_CONFIG) when there is one.
struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config", abstract: "Validate a configuration file and print every problem.")

    @Argument(help: "The configuration file (JSON or YAML).") var file: String

    func run() async throws {
        let check = ConfigurationCheck(
            file: URL(fileURLWithPath: file), plugins: InstalledPlugins.all,
            environment: ProcessInfo.processInfo.environment)
        let report = Self.report(check, file: file)
        CommandOutput.write(report.lines.joined(separator: "\n"))
        if report.failed { throw ExitCode(78) }  // EX_CONFIG
    }

    /// What the command prints: notes, then every problem and their count, or the providers it would serve.
    static func report(_ check: ConfigurationCheck, file: String) -> (lines: [String], failed: Bool) {
        var lines = check.notes.map { note in
            ConfigProblem("note: " + note.message, at: note.position).located(in: file)
        }
        guard let error = check.error(file: file) else {
            let ids = check.providerIDs
            lines.append("\(file): OK (\(ids.count) provider(s): \(ids.joined(separator: ", ")))")
            return (lines, false)
        }
        lines += error.problems
        lines.append("\(file): \(error.problems.count) problem\(error.problems.count == 1 ? "" : "s")")
        return (lines, true)
    }
}
