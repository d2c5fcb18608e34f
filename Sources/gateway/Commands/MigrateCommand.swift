import ArgumentParser
import Foundation
import GatewayCore
import Logging

/// `gateway migrate --store postgres://…`: applies pending schema steps and prints the version, so an
/// operator can migrate before rolling new instances out (the server also migrates at startup).
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending schema migrations to a PostgreSQL store (password in PGPASSWORD).")

    @Option(help: "The store, postgres://user@host:port/database.") var store: String
    @Option(help: "Seconds to wait for the server.") var timeout = 10.0

    func validate() throws {
        guard PostgresStoreSettings.isPostgresURL(store) else {
            throw ValidationError("--store must be a postgres://user@host:port/database URL.")
        }
        guard timeout.isFinite, (0.1...600).contains(timeout) else {
            throw ValidationError("--timeout must be from 0.1 to 600 seconds.")
        }
    }

    func run() async throws {
        var settings: PostgresStoreSettings
        do {
            settings = try PostgresStoreSettings.parse(
                store, passwordVariable: nil, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("gateway migrate: \(error)\n".utf8))
            throw ExitCode(78)
        }
        settings.timeout = .milliseconds(Int64(timeout * 1000))
        settings.poolSize = 1
        var logger = Logger(label: "gateway.migrate")
        logger.logLevel = .critical
        do {
            let opened = try await PostgresVerificationStore(settings: settings, logger: logger)
            let version = try await opened.schemaVersion()
            opened.close()
            CommandOutput.write(
                "\(settings.displayURL): schema version \(version) (newest \(PostgresMigration.all.last?.version ?? 0))"
            )
        } catch {
            FileHandle.standardError.write(Data("gateway migrate: \(settings.displayURL): \(error)\n".utf8))
            throw ExitCode(69)  // EX_UNAVAILABLE
        }
    }
}

extension PostgresVerificationStore {
    /// The newest applied step of `schema_migrations`.
    func schemaVersion() async throws(GatewayError) -> Int {
        let logger = logger
        return try await perform("schema version") { connection in
            try await connection.rows("SELECT coalesce(max(version), 0)::BIGINT FROM schema_migrations", logger: logger)
            {
                row in Int(row.int64(0) ?? 0)
            }.first ?? 0
        }
    }
}
