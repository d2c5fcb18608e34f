import Foundation
import GatewayCore

/// The configuration file (`--config FILE`, JSON or YAML). Secrets never appear in it in clear: a
/// setting `<name>_env: VARIABLE` takes its value from that environment variable.
///
/// ```yaml
/// sandbox: false
/// providers:
///   - id: twilio
///     plugin: twilio
///     settings: {account_sid: AC…, service_sid: VA…, auth_token_env: TWILIO_AUTH_TOKEN}
/// routing:
///   default: [twilio]
///   channels: {sms: [twilio]}
/// api_keys:
///   - {name: backend, key_env: GATEWAY_API_KEY, scopes: [verify]}
///   - {name: ops, key_sha256: 9f86d0…, scopes: [verify, admin]}
/// policy: {code_validity_seconds: 600, max_attempts: 5, max_sends: 5, start_deadline_seconds: 30, check_lease_seconds: 30,
///          allow_unknown_numbers: [GB]}
/// token: {signing_key_env: GATEWAY_TOKEN_SIGNING_KEY, verification_keys_env: [GATEWAY_TOKEN_PREVIOUS_KEY]}
/// ```
///
/// Every section is read through ``ConfigMap`` into one ``ConfigLog``: a problem is logged where it is in
/// the file and reading goes on, so one pass lists them all.
struct GatewayConfiguration: Sendable {
    struct KeyEntry: Sendable, Equatable {
        var name: String
        var hash: String
        var scopes: Set<APIKey.Scope>
        var countries: Set<String>? = nil
        var startsPerHour: Int? = nil
    }

    var sandbox = false
    var providers: [ProviderConfiguration] = []
    var routing: RoutingTable?
    var apiKeys: [KeyEntry] = []
    var policy = VerificationPolicy()
    var tokenSigningKeyPEM: String?
    /// `token.verification_keys_env`: more keys the JWKS publishes (PEM, public or private; only the public
    /// part is used): the next key before a rotation, the previous one until its tokens have expired.
    var tokenVerificationKeyPEMs: [String] = []
    /// Where vendors reach the gateway (`https://verify.example.com`): callback URLs are
    /// `<public base URL>/callbacks/<provider id>`. The sandbox defaults it to its own address.
    var publicBaseURL: URL?
    /// `rate_limits.trusted_proxy_header`: where the client IP comes from behind a trusted proxy.
    var trustedProxyHeader: String?
    var breakers = CircuitBreakers.Settings()
    var prices = PriceTable()
    /// `metrics: {access: loopback_or_admin | admin | open}`: who may read `GET /metrics`.
    var metricsAccess = MetricsAccess.loopbackOrAdmin
    /// `webhooks`: status webhooks to the application (none by default).
    var webhooks = WebhookSettings()
    /// Where traces are exported; nil: tracing is off (docs/operations.md, "Traces").
    var tracing: TracingSettings?
    /// `retention`: how long the store keeps verifications, their events and their numbers (docs/operations.md,
    /// "Retention"); 30 days by default.
    var retention = RetentionSettings()
    /// `tls: {cert_file: PATH, key_file: PATH}`: serve HTTPS (the `--tls-cert`/`--tls-key` flags win).
    var tlsCertificate: URL?
    var tlsKey: URL?
    /// `store: postgres://user@host:port/db` (with `store_password_env`, `store_pool_size`, `store_timeout`):
    /// the shared PostgreSQL store instead of the embedded SQLite file.
    var store: PostgresStoreSettings?
    /// `sqlite_sync: full | normal`: whether the SQLite store syncs every commit to the device (`full`, the
    /// default) or at checkpoints only (`normal`: faster; survives a crash of the process, not of the machine).
    var sqliteSynchronous: SQLiteSynchronous = .full
    /// `sqlite_commit_delay_ms` (0 to 100, default 2; 0 turns it off) and `sqlite_commit_siblings` (1 to 1,000,
    /// default 5): how long a synced commit of the SQLite store may wait for the writes of other requests in
    /// flight, and how many must be in flight for it to wait (docs/performance.md, "Commit delay").
    var sqliteCommitDelay: Duration = .milliseconds(2)
    var sqliteCommitSiblings = 5
    /// `vendor_connections_per_host` (1 to 1,000, default 64): the HTTP/1.1 connections the gateway keeps open
    /// to one vendor host (and one webhook host). Calls beyond it wait for a connection, so it bounds the calls
    /// in flight to a vendor that does not speak HTTP/2: about this many divided by the vendor's latency, per
    /// second (docs/performance.md, "Connections to a vendor").
    var vendorConnectionsPerHost = 64
    /// `twilio_compat`: the Twilio Verify–compatible front door under `/twilio` (off without it).
    var twilioCompat: TwilioCompatSettings?
    /// `own_codes`, `messages` and the providers' `senders`: how messaging providers issue the gateway's own
    /// codes (docs/own-codes.md).
    var ownCodes = OwnCodeConfiguration()

    static let topLevelKeys: Set<String> = [
        "sandbox", "providers", "routing", "api_keys", "policy", "token", "experiments", "breakers", "test_numbers",
        "public_base_url", "rate_limits", "countries", "pumping_guard", "risk",
        "prices", "metrics", "webhooks", "tracing", "retention", "tls", "store", "store_password_env",
        "store_pool_size",
        "store_timeout",
        "sqlite_sync", "sqlite_commit_delay_ms", "sqlite_commit_siblings", "vendor_connections_per_host",
        "twilio_compat", "own_codes", "messages",
    ]
}

/// What reading a configuration gave: the configuration as far as it could be read, every problem (where it
/// is), notes, and where the providers and routes are (for problems found later, by the plugins and the
/// routing table).
struct ConfigurationReading {
    var configuration = GatewayConfiguration()
    var problems: [ConfigProblem] = []
    var notes: [ConfigProblem] = []
    var sources = ConfigSources()

    /// The problems as one error, each message prefixed with `file:line:column:` when a file is named.
    func error(file: String? = nil) -> ConfigurationError? {
        guard !problems.isEmpty else { return nil }
        return ConfigurationError(problems: problems.map { problem in file.map(problem.located) ?? problem.message })
    }
}

extension GatewayConfiguration {
    /// Reads and checks a configuration file; every problem is listed in one error (messages without their
    /// positions: ``read(file:plugins:environment:)`` has those).
    static func load(
        file: URL, plugins: [GatewayPlugin], environment: [String: String]
    ) throws(ConfigurationError) -> GatewayConfiguration {
        let reading = read(file: file, plugins: plugins, environment: environment)
        if let error = reading.error() { throw error }
        return reading.configuration
    }

    /// A command's `--config FILE`: every problem in one error, each prefixed with `FILE:LINE:COLUMN:`.
    static func load(
        path: String, plugins: [GatewayPlugin], environment: [String: String]
    ) throws(ConfigurationError) -> GatewayConfiguration {
        let reading = read(file: URL(fileURLWithPath: path), plugins: plugins, environment: environment)
        if let error = reading.error(file: path) { throw error }
        return reading.configuration
    }

    /// Checks a configuration built in code (tests): every problem in one error.
    static func parse(
        _ root: JSONValue, plugins: [GatewayPlugin], environment: [String: String]
    ) throws(ConfigurationError) -> GatewayConfiguration {
        let reading = read(ConfigNode(root), plugins: plugins, environment: environment)
        if let error = reading.error() { throw error }
        return reading.configuration
    }

    /// Reads a configuration file, JSON when it is named `*.json` and YAML otherwise. A syntax error is the
    /// one problem (where it is); anything else is read through, problems sorted by where they are.
    static func read(file: URL, plugins: [GatewayPlugin], environment: [String: String]) -> ConfigurationReading {
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch {
            return ConfigurationReading(problems: [ConfigProblem("cannot read \(file.path)", at: nil)])
        }
        let root: ConfigNode
        let repeated: [ConfigProblem]
        if file.pathExtension.lowercased() == "json" {
            do { (root, repeated) = try ConfigJSONParser.parse(text) } catch {
                return ConfigurationReading(problems: [
                    ConfigProblem("the file is not valid JSON: \(error.message)", at: error.position)
                ])
            }
        } else {
            do { (root, repeated) = try ConfigYAML.parse(text) } catch {
                return ConfigurationReading(problems: [
                    ConfigProblem("the file is not valid YAML: \(error.message)", at: error.position)
                ])
            }
        }
        var reading = read(root, plugins: plugins, environment: environment, repeated: repeated)
        reading.problems = reading.problems.byPosition()
        return reading
    }

    static func read(
        _ root: ConfigNode, plugins: [GatewayPlugin], environment: [String: String], repeated: [ConfigProblem] = []
    ) -> ConfigurationReading {
        let log = ConfigLog()
        log.add(repeated)
        var reading = ConfigurationReading()
        guard
            let top = ConfigValue(node: root, name: "the configuration", log: log).map(
                message: "the configuration must be a mapping at the top level", path: "")
        else {
            reading.problems = log.problems
            return reading
        }
        top.rejectUnknown(topLevelKeys)
        var config = GatewayConfiguration()
        config.sandbox = top.bool("sandbox") ?? false
        config.readProviders(top, plugins: plugins, environment: environment, sources: &reading.sources)
        // Routing names providers: the configured ones, or every plugin's in a sandbox that configures none.
        let knownProviders =
            config.providers.isEmpty && config.sandbox ? Set(plugins.map(\.id)) : Set(config.providers.map(\.id))
        config.readRouting(top, knownProviders: knownProviders, sources: &reading.sources)
        config.readBreakersAndPrices(top)
        config.readTwilioCompat(top, knownProviders: knownProviders)
        config.readAPIKeys(top, environment: environment)
        config.readPolicy(top)
        config.readOwnCodes(top, environment: environment)
        for problem in config.ownCodeProblems() { log.problem(problem, at: top.position(of: "messages")) }
        config.readServer(top, environment: environment)
        config.readTracing(top, environment: environment)
        config.readRetention(top, environment: environment)
        if let webhooks = top.map("webhooks", message: "`webhooks` must be a mapping with `endpoints`") {
            config.webhooks = readWebhooks(webhooks, environment: environment)
            if let base = config.publicBaseURL, let host = base.host(), !host.isEmpty {
                // CloudEvents' source and type prefix default to the gateway's public address.
                if config.webhooks.cloudEventsSource == nil { config.webhooks.cloudEventsSource = base.absoluteString }
                if config.webhooks.cloudEventsTypePrefix == nil, host.contains("."),
                    !host.allSatisfy({ $0.isNumber || $0 == "." })
                {
                    config.webhooks.cloudEventsTypePrefix = host.split(separator: ".").reversed().joined(separator: ".")
                }
            }
        }
        if !config.sandbox {
            // Entries listed but unusable (a plugin misspelt, a variable not set) are problems of their own,
            // where they are: these two are for sections absent or empty.
            if top.isAbsentOrEmptyList("providers") {
                log.problem("no provider is configured (add `providers`, or `sandbox: true`)", at: nil)
            }
            if top.isAbsentOrEmptyList("api_keys") {
                log.problem("no API key is configured (add `api_keys`)", at: nil)
            }
        }
        reading.configuration = config
        reading.problems = log.problems
        reading.notes = log.notes
        return reading
    }
}
