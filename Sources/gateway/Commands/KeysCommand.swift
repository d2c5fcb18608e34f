import ArgumentParser
import Foundation
import GatewayCore
import Logging

/// `gateway keys create|list|revoke`: API keys kept in the store (the data directory's SQLite file, or the
/// shared PostgreSQL store with `--store` or `--config`). A running gateway sees a new or revoked key on its
/// next request; no restart.
struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create, list and revoke API keys kept in the store.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct StoreOptions: ParsableArguments {
        @Option(name: .customLong("data-dir"), help: "The gateway's data directory (its SQLite store).")
        var dataDirectory = ".gateway"
        @Option(
            help:
                "Shared PostgreSQL store, postgres://user@host:port/database (password in PGPASSWORD); the SQLite file under --data-dir without it."
        )
        var store: String?
        @Option(help: "The gateway's configuration file: its `store` (and store_password_env, store_timeout) is used.")
        var config: String?

        func validate() throws {
            if let store, !PostgresStoreSettings.isPostgresURL(store) {
                throw ValidationError("--store must be a postgres://user@host:port/database URL.")
            }
        }

        /// The PostgreSQL settings from `--store` and `--config` (as the server reads them), or nil for SQLite.
        func postgresSettings(environment: [String: String]) throws(ConfigurationError) -> PostgresStoreSettings? {
            let file = try config.map { path throws(ConfigurationError) in
                try GatewayConfiguration.load(path: path, plugins: InstalledPlugins.all, environment: environment)
            }
            return try PostgresStoreSettings.resolve(url: store, file: file?.store, environment: environment)
        }

        /// Runs `body` on the store the gateway uses, closing a PostgreSQL pool after. `existing`: the SQLite
        /// store must be there already (listing or revoking keys makes no store where a mistyped --data-dir points).
        func withStore<T>(existing: Bool = false, _ body: (any APIKeyStore) async throws -> T) async throws -> T {
            let environment = ProcessInfo.processInfo.environment
            let logger = Logger(label: "gateway.keys") { _ in SwiftLogNoOpLogHandler() }
            let settings: PostgresStoreSettings?
            do { settings = try postgresSettings(environment: environment) } catch {
                FileHandle.standardError.write(Data("gateway keys: \(error)\n".utf8))
                throw ExitCode(78)  // EX_CONFIG
            }
            guard var settings else {
                let directory = URL(fileURLWithPath: dataDirectory, isDirectory: true)
                var file = directory.appendingPathComponent("gateway.sqlite").path
                if existing {
                    file = try StoreFile.existing(dataDirectory: dataDirectory)
                } else {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                }
                return try await body(SQLiteVerificationStore(path: file, logger: logger))
            }
            settings.poolSize = 1
            let opened: PostgresVerificationStore
            do { opened = try await PostgresVerificationStore(settings: settings, logger: logger) } catch {
                FileHandle.standardError.write(Data("gateway keys: \(settings.displayURL): \(error)\n".utf8))
                throw ExitCode(69)  // EX_UNAVAILABLE
            }
            defer { opened.close() }
            return try await body(opened)
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a key and print its secret, once: only its SHA-256 is kept.")

        @Option(help: "A name for the key (the application that uses it).") var name: String
        @Option(help: "Comma-separated scopes: verify, read, admin.") var scopes = "verify"
        @Option(help: "Comma-separated region codes the key may send to (all the policy allows when absent).")
        var countries: String?
        @Option(
            name: .customLong("starts-per-hour"),
            help: "Starts this key may make per hour, on top of the gateway's own rate limits.")
        var startsPerHour: Int?
        @OptionGroup var store: StoreOptions

        func validate() throws {
            if let startsPerHour, startsPerHour < 1 { throw ValidationError("--starts-per-hour must be at least 1.") }
            guard (1...64).contains(name.count) else { throw ValidationError("--name must be 1 to 64 characters.") }
            _ = try Keys.parseScopes(scopes)
            _ = try countries.map(Keys.parseCountries)
        }

        func run() async throws {
            let made = StoredAPIKey.make(
                name: name, scopes: try Keys.parseScopes(scopes), countries: try countries.map(Keys.parseCountries),
                startsPerHour: startsPerHour, at: Date())
            try await store.withStore { try await $0.insertAPIKey(made.stored) }
            CommandOutput.write(
                "created \(made.stored.key.id) (\(name), scopes: \(made.stored.key.scopes.map(\.rawValue).sorted().joined(separator: ",")))"
            )
            CommandOutput.write("secret (shown once; only its SHA-256 is kept): \(made.secret)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the stored keys (never their secrets).")
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let keys = try await store.withStore(existing: true) { try await $0.apiKeys() }
            CommandOutput.write(Self.lines(keys).joined(separator: "\n"))
        }

        /// One line per key (never its secret); one line that says so when there is none.
        static func lines(_ keys: [StoredAPIKey]) -> [String] {
            guard !keys.isEmpty else { return ["no API keys in the store (`gateway keys create` makes one)"] }
            return keys.map { stored in
                let scopes = stored.key.scopes.map(\.rawValue).sorted().joined(separator: ",")
                var countries = stored.key.countries.map { " countries=" + $0.sorted().joined(separator: ",") } ?? ""
                if let limit = stored.key.startsPerHour { countries += " starts_per_hour=\(limit)" }
                let state = stored.revokedAt.map { " revoked " + VerificationsController.timestamp($0) } ?? ""
                return "\(stored.key.id)  \(stored.key.name)  scopes=\(scopes)\(countries)  created "
                    + "\(VerificationsController.timestamp(stored.createdAt))\(state)"
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key; a running gateway refuses it at once.")
        @Argument(help: "The key's id (key_…).") var id: String
        @OptionGroup var store: StoreOptions

        func run() async throws {
            guard try await store.withStore(existing: true, { try await $0.revokeAPIKey(id: id, at: Date()) }) else {
                CommandOutput.write("\(id): no such key, or already revoked")
                throw ExitCode(1)
            }
            CommandOutput.write("revoked \(id)")
        }
    }

    static func parseScopes(_ text: String) throws -> Set<APIKey.Scope> {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let scopes = names.compactMap(APIKey.Scope.init(rawValue:))
        guard !scopes.isEmpty, scopes.count == names.count else {
            throw ValidationError("--scopes takes verify, read and admin, comma-separated.")
        }
        return Set(scopes)
    }

    static func parseCountries(_ text: String) throws -> Set<String> {
        let codes = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }
        guard !codes.isEmpty, codes.allSatisfy({ PhoneRegion.named($0) != nil }) else {
            throw ValidationError("--countries takes region codes such as GB,FR.")
        }
        return Set(codes)
    }
}
