import Foundation
import HTTPTypes
import GatewayCore
import Yams

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
    /// `tls: {cert_file: PATH, key_file: PATH}`: serve HTTPS (the `--tls-cert`/`--tls-key` flags win).
    var tlsCertificate: URL?
    var tlsKey: URL?
    /// `store: postgres://user@host:port/db` (with `store_password_env`, `store_pool_size`, `store_timeout`):
    /// the shared PostgreSQL store instead of the embedded SQLite file.
    var store: PostgresStoreSettings?
    /// `sqlite_sync: full | normal`: whether the SQLite store syncs every commit to the device (`full`, the
    /// default) or at checkpoints only (`normal`: faster; survives a crash of the process, not of the machine).
    var sqliteSynchronous: SQLiteSynchronous = .full
    /// `vendor_connections_per_host` (1 to 1,000, default 64): the HTTP/1.1 connections the gateway keeps open
    /// to one vendor host (and one webhook host). Calls beyond it wait for a connection, so it bounds the calls
    /// in flight to a vendor that does not speak HTTP/2: about this many divided by the vendor's latency, per
    /// second (docs/performance.md, "Connections to a vendor").
    var vendorConnectionsPerHost = 64

    static let topLevelKeys: Set<String> = [
        "sandbox", "providers", "routing", "api_keys", "policy", "token", "experiments", "breakers", "test_numbers",
        "public_base_url", "rate_limits", "countries", "pumping_guard",
        "prices", "metrics", "webhooks", "tls", "store", "store_password_env", "store_pool_size", "store_timeout",
        "sqlite_sync", "vendor_connections_per_host",
    ]

    /// Reads and checks a configuration file; every problem is listed in one error.
    static func load(
        file: URL, plugins: [GatewayPlugin], environment: [String: String]
    ) throws(ConfigurationError) -> GatewayConfiguration {
        let text: String
        do {
            text = try String(contentsOf: file, encoding: .utf8)
        } catch {
            throw ConfigurationError(problems: ["cannot read \(file.path)"])
        }
        let root: JSONValue
        do {
            if file.pathExtension.lowercased() == "json" {
                root = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            } else {
                root = try JSONValue(yaml: Yams.load(yaml: text) as Any)
            }
        } catch {
            throw ConfigurationError(problems: [
                "\(file.lastPathComponent) is not valid \(file.pathExtension.lowercased() == "json" ? "JSON" : "YAML"): \(error)"
            ])
        }
        return try parse(root, plugins: plugins, environment: environment)
    }

    static func parse(
        _ root: JSONValue, plugins: [GatewayPlugin], environment: [String: String]
    ) throws(ConfigurationError) -> GatewayConfiguration {
        var problems: [String] = []
        var config = GatewayConfiguration()
        guard case .object(let top) = root else {
            throw ConfigurationError(problems: ["the configuration must be a mapping at the top level"])
        }
        for key in top.keys.sorted() where !topLevelKeys.contains(key) {
            problems.append("unknown top-level key `\(key)`")
        }
        if let value = top["sandbox"] {
            if case .bool(let flag) = value {
                config.sandbox = flag
            } else {
                problems.append("`sandbox` must be true or false")
            }
        }
        let pluginsByID = Dictionary(plugins.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })

        // providers
        if let value = top["providers"] {
            if case .array(let items) = value {
                for (index, item) in items.enumerated() {
                    guard case .object(let entry) = item else {
                        problems.append("providers[\(index)] must be a mapping")
                        continue
                    }
                    for key in entry.keys.sorted() where !["id", "plugin", "settings"].contains(key) {
                        problems.append("providers[\(index)]: unknown key `\(key)`")
                    }
                    guard case .string(let named)? = entry["plugin"] else {
                        problems.append("providers[\(index)]: `plugin` is required")
                        continue
                    }
                    // A former name of an installed plugin (`nexmo`) is that plugin.
                    let plugin = pluginsByID[named] == nil ? InstalledPlugins.aliases[named] ?? named : named
                    var id = plugin
                    if let raw = entry["id"] {
                        if case .string(let text) = raw {
                            id = text
                        } else {
                            problems.append("providers[\(index)]: `id` must be a string")
                        }
                    }
                    var settings: [String: String] = [:]
                    if let raw = entry["settings"] {
                        guard case .object(let map) = raw else {
                            problems.append("provider \(id): `settings` must be a mapping")
                            continue
                        }
                        let secretNames = Set(pluginsByID[plugin]?.settings.filter(\.isSecret).map(\.name) ?? [])
                        for (key, value) in map.sorted(by: { $0.key < $1.key }) {
                            let text: String
                            switch value {
                            case .string(let string): text = string
                            case .number(let number):
                                text = number.rounded() == number ? String(Int64(number)) : String(number)
                            case .bool(let flag): text = flag ? "true" : "false"
                            default:
                                problems.append("provider \(id): setting `\(key)` must be a scalar")
                                continue
                            }
                            if key.hasSuffix("_env") {
                                let name = String(key.dropLast(4))
                                if let resolved = environment[text], !resolved.isEmpty {
                                    settings[name] = resolved
                                } else {
                                    problems.append(
                                        "provider \(id): environment variable \(text) (for `\(name)`) is not set")
                                    settings[name] = "<unset>"
                                }
                            } else {
                                if secretNames.contains(key) {
                                    problems.append(
                                        "provider \(id): `\(key)` is a secret; give it as `\(key)_env: VARIABLE`, not in the file"
                                    )
                                }
                                settings[key] = text
                            }
                        }
                    }
                    config.providers.append(ProviderConfiguration(id: id, plugin: plugin, settings: settings))
                }
            } else {
                problems.append("`providers` must be a list")
            }
        }

        // routing, experiments, breakers, test numbers, prices (GatewayConfiguration+Routing.swift)
        let knownProviders =
            config.providers.isEmpty && config.sandbox ? Set(plugins.map(\.id)) : Set(config.providers.map(\.id))
        config.parseRouting(top, knownProviders: knownProviders, problems: &problems)

        // api keys
        if let value = top["api_keys"] {
            if case .array(let items) = value {
                for (index, item) in items.enumerated() {
                    guard case .object(let entry) = item else {
                        problems.append("api_keys[\(index)] must be a mapping")
                        continue
                    }
                    for key in entry.keys.sorted() where !["name", "key_env", "key_sha256", "scopes", "countries", "starts_per_hour"].contains(key) {
                        problems.append(
                            "api_keys[\(index)]: unknown key `\(key)`\(key == "key" ? " (give the key as key_env or key_sha256, never in clear)" : "")"
                        )
                    }
                    let name: String
                    if case .string(let text)? = entry["name"] {
                        name = text
                    } else {
                        problems.append("api_keys[\(index)]: `name` is required")
                        name = "api_keys[\(index)]"
                    }
                    var hash: String?
                    if case .string(let variable)? = entry["key_env"] {
                        if let secret = environment[variable], secret.count >= 16 {
                            hash = APIKeyring.hash(secret)
                        } else {
                            problems.append(
                                "api key \(name): environment variable \(variable) is not set or shorter than 16 characters"
                            )
                        }
                    } else if case .string(let digest)? = entry["key_sha256"] {
                        if digest.count == 64, digest.allSatisfy(\.isHexDigit) {
                            hash = digest.lowercased()
                        } else {
                            problems.append("api key \(name): key_sha256 must be 64 hex digits")
                        }
                    } else {
                        problems.append("api key \(name): give `key_env` or `key_sha256`")
                    }
                    var scopes: Set<APIKey.Scope> = [.verify]
                    if let raw = entry["scopes"] {
                        if let names = raw.stringList {
                            scopes = []
                            for scopeName in names {
                                if let scope = APIKey.Scope(rawValue: scopeName) {
                                    scopes.insert(scope)
                                } else {
                                    problems.append("api key \(name): unknown scope `\(scopeName)` (verify, admin, read)")
                                }
                            }
                        } else {
                            problems.append("api key \(name): `scopes` must be a list")
                        }
                    }
                    var countries: Set<String>?
                    if let raw = entry["countries"] {
                        countries = regionList(raw, "api key \(name): `countries`", &problems)
                    }
                    var startsPerHour: Int?
                    if let raw = entry["starts_per_hour"] {
                        if case .number(let n) = raw, let count = Int(exactly: n), count >= 1 {
                            startsPerHour = count
                        } else {
                            problems.append("api key \(name): `starts_per_hour` must be a whole number of at least 1")
                        }
                    }
                    if let hash {
                        config.apiKeys.append(
                            KeyEntry(
                                name: name, hash: hash, scopes: scopes, countries: countries,
                                startsPerHour: startsPerHour))
                    }
                }
            } else {
                problems.append("`api_keys` must be a list")
            }
        }

        // policy
        if let value = top["policy"] {
            if case .object(let policy) = value {
                func number(_ key: String, _ range: ClosedRange<Int>) -> Int? {
                    guard let raw = policy[key] else { return nil }
                    guard case .number(let number) = raw, let int = Int(exactly: number), range.contains(int) else {
                        problems.append(
                            "policy.\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
                        return nil
                    }
                    return int
                }
                let known = [
                    "code_validity_seconds", "max_attempts", "max_sends", "start_deadline_seconds", "allow_unknown_numbers",
                    "check_lease_seconds",
                ]
                for key in policy.keys.sorted() where !known.contains(key) {
                    problems.append("policy: unknown key `\(key)`")
                }
                if let seconds = number("code_validity_seconds", 60...86_400) {
                    config.policy.codeValidity = TimeInterval(seconds)
                }
                if let attempts = number("max_attempts", 1...20) { config.policy.maxAttempts = attempts }
                if let sends = number("max_sends", 1...20) { config.policy.maxSends = sends }
                if let seconds = number("start_deadline_seconds", 1...300) {
                    config.policy.startDeadline = .seconds(seconds)
                }
                // How long a check holds its verification while at the vendor; the checks of a verification
                // whose instance died mid-check wait this long. Above the 10-second vendor timeout.
                if let seconds = number("check_lease_seconds", 15...300) {
                    config.policy.checkLease = TimeInterval(seconds)
                }
                if let raw = policy["allow_unknown_numbers"],
                    let regions = regionList(raw, "policy.allow_unknown_numbers", &problems)
                {
                    config.policy.allowUnknownNumbers = regions
                }
            } else {
                problems.append("`policy` must be a mapping")
            }
        }

        if let value = top["webhooks"] {
            config.webhooks = parseWebhooks(value, environment: environment, problems: &problems)
        }

        if let value = top["metrics"] {
            config.metricsAccess = parseMetrics(value, problems: &problems) ?? config.metricsAccess
        }

        if let value = top["public_base_url"] {
            if case .string(let text) = value, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                ["http", "https"].contains(scheme), url.host?.isEmpty == false, url.query == nil, url.fragment == nil
            {
                config.publicBaseURL = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text)
            } else {
                problems.append("`public_base_url` must be an http(s) URL without query or fragment")
            }
        }

        if let value = top["countries"] {
            if case .object(let section) = value {
                for key in section.keys.sorted() where !["allow", "deny"].contains(key) {
                    problems.append("countries: unknown key `\(key)`")
                }
                config.policy.countries = CountryPermissions(
                    allow: section["allow"].flatMap { regionList($0, "countries.allow", &problems) },
                    deny: section["deny"].flatMap { regionList($0, "countries.deny", &problems) } ?? [])
            } else {
                problems.append("`countries` must be a mapping with `allow` and/or `deny` lists")
            }
        }
        if let value = top["rate_limits"] {
            parseRateLimits(value, into: &config, problems: &problems)
        }
        if let value = top["pumping_guard"] {
            config.policy.pumpingGuard = parsePumpingGuard(value, problems: &problems)
        }

        if let value = top["tls"] {
            if case .object(let section) = value {
                for key in section.keys.sorted() where !["cert_file", "key_file"].contains(key) {
                    problems.append("tls: unknown key `\(key)`")
                }
                if case .string(let cert)? = section["cert_file"], case .string(let key)? = section["key_file"],
                    !cert.isEmpty, !key.isEmpty
                {
                    config.tlsCertificate = URL(fileURLWithPath: cert)
                    config.tlsKey = URL(fileURLWithPath: key)
                } else {
                    problems.append("`tls` needs `cert_file` and `key_file` (paths to PEM files)")
                }
            } else {
                problems.append("`tls` must be a mapping with `cert_file` and `key_file`")
            }
        }

        parseStore(top, environment: environment, into: &config, problems: &problems)
        if let value = top["vendor_connections_per_host"] {
            if case .number(let count) = value, count.rounded() == count, (1...1000).contains(count) {
                config.vendorConnectionsPerHost = Int(count)
            } else {
                problems.append("`vendor_connections_per_host` must be a whole number from 1 to 1000")
            }
        }

        // token
        if let value = top["token"] {
            if case .object(let token) = value {
                for key in token.keys.sorted() where key != "signing_key_env" && key != "verification_keys_env" {
                    problems.append("token: unknown key `\(key)`")
                }
                if let listed = token["verification_keys_env"] {
                    if case .array(let variables) = listed {
                        for variable in variables {
                            guard case .string(let name) = variable else {
                                problems.append("token: `verification_keys_env` must list variable names")
                                continue
                            }
                            if let pem = environment[name], !pem.isEmpty {
                                config.tokenVerificationKeyPEMs.append(pem)
                            } else {
                                problems.append("token: environment variable \(name) is not set")
                            }
                        }
                    } else {
                        problems.append("token: `verification_keys_env` must be a list of variable names")
                    }
                }
                if case .string(let variable)? = token["signing_key_env"] {
                    if let pem = environment[variable], !pem.isEmpty {
                        config.tokenSigningKeyPEM = pem
                    } else {
                        problems.append("token: environment variable \(variable) is not set")
                    }
                }
            } else {
                problems.append("`token` must be a mapping")
            }
        }

        if !config.sandbox {
            if config.providers.isEmpty {
                problems.append("no provider is configured (add `providers`, or `sandbox: true`)")
            }
            if config.apiKeys.isEmpty { problems.append("no API key is configured (add `api_keys`)") }
        }
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        return config
    }
}

extension GatewayConfiguration {
    /// `store`, `store_password_env`, `store_pool_size` (connections per instance) and `store_timeout`
    /// (seconds per store operation).
    static func parseStore(
        _ top: [String: JSONValue], environment: [String: String], into config: inout GatewayConfiguration,
        problems: inout [String]
    ) {
        var passwordVariable: String?
        if let value = top["store_password_env"] {
            if case .string(let name) = value, !name.isEmpty { passwordVariable = name } else {
                problems.append("`store_password_env` must name an environment variable")
            }
        }
        if let value = top["sqlite_sync"] {
            if top["store"] != nil {
                problems.append("`sqlite_sync` applies to the embedded SQLite store, not to `store: postgres://…`")
            } else if case .string(let raw) = value, let mode = SQLiteSynchronous(rawValue: raw) {
                config.sqliteSynchronous = mode
            } else {
                problems.append("`sqlite_sync` must be `full` or `normal`")
            }
        }
        guard let value = top["store"] else {
            for key in ["store_password_env", "store_pool_size", "store_timeout"] where top[key] != nil {
                problems.append("`\(key)` needs `store: postgres://…`")
            }
            return
        }
        guard case .string(let url) = value, PostgresStoreSettings.isPostgresURL(url) else {
            problems.append("`store` must be a postgres://user@host:port/database URL (SQLite is the default without it)")
            return
        }
        do {
            var settings = try PostgresStoreSettings.parse(url, passwordVariable: passwordVariable, environment: environment)
            if let raw = top["store_pool_size"] {
                if case .number(let size) = raw, size.rounded() == size, (1...200).contains(size) {
                    settings.poolSize = Int(size)
                } else {
                    problems.append("`store_pool_size` must be a whole number from 1 to 200")
                }
            }
            if let raw = top["store_timeout"] {
                if case .number(let seconds) = raw, seconds.isFinite, (0.1...120).contains(seconds) {
                    settings.timeout = .milliseconds(Int64(seconds * 1000))
                } else {
                    problems.append("`store_timeout` must be a number of seconds from 0.1 to 120")
                }
            }
            config.store = settings
        } catch {
            problems.append(contentsOf: error.problems)
        }
    }
}

extension JSONValue {
    /// Converts what Yams loads (dictionaries, arrays, strings, numbers, booleans) into a JSON value.
    init(yaml: Any) throws {
        switch yaml {
        case let value as String: self = .string(value)
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .number(Double(value))
        case let value as Double: self = .number(value)
        case let value as [Any]: self = .array(try value.map { try JSONValue(yaml: $0) })
        case let value as [String: Any]: self = .object(try value.mapValues { try JSONValue(yaml: $0) })
        case let value as [AnyHashable: Any]:
            var object: [String: JSONValue] = [:]
            for (key, item) in value {
                guard let key = key.base as? String else {
                    throw YAMLShapeError(message: "mapping keys must be strings")
                }
                object[key] = try JSONValue(yaml: item)
            }
            self = .object(object)
        case is NSNull: self = .null
        default:
            if Mirror(reflecting: yaml).displayStyle == .optional {
                self = .null
            } else {
                throw YAMLShapeError(message: "unsupported value \(type(of: yaml))")
            }
        }
    }

    var stringList: [String]? {
        guard case .array(let items) = self else { return nil }
        var result: [String] = []
        for item in items {
            guard case .string(let value) = item else { return nil }
            result.append(value)
        }
        return result
    }
}

struct YAMLShapeError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension GatewayConfiguration {
    /// `rate_limits:` each limit `{limit: N, window_seconds: S}` (`starts_per_prefix` also takes `digits`),
    /// and `trusted_proxy_header`.
    static func parseRateLimits(_ value: JSONValue, into config: inout GatewayConfiguration, problems: inout [String]) {
        guard case .object(let section) = value else {
            problems.append("`rate_limits` must be a mapping")
            return
        }
        let names = [
            "starts_per_destination", "starts_per_api_key", "starts_per_ip", "starts_per_country",
            "starts_per_prefix", "checks_per_api_key",
        ]
        for key in section.keys.sorted() where !names.contains(key) && key != "trusted_proxy_header" {
            problems.append("rate_limits: unknown key `\(key)`")
        }
        func limit(_ name: String) -> RateLimit? {
            guard let raw = section[name] else { return nil }
            guard case .object(let fields) = raw,
                case .number(let count)? = fields["limit"], let limit = Int(exactly: count), limit >= 1,
                case .number(let seconds)? = fields["window_seconds"], let window = Int(exactly: seconds),
                (1...86_400 * 31).contains(window)
            else {
                problems.append(
                    "rate_limits.\(name) must be {limit: a whole number of at least 1, window_seconds: 1 to 2678400}")
                return nil
            }
            for key in fields.keys.sorted() where !["limit", "window_seconds", "digits"].contains(key) {
                problems.append("rate_limits.\(name): unknown key `\(key)`")
            }
            return RateLimit(limit: limit, window: TimeInterval(window))
        }
        var limits = RateLimits(
            startsPerDestination: limit("starts_per_destination"), startsPerAPIKey: limit("starts_per_api_key"),
            startsPerIP: limit("starts_per_ip"), startsPerCountry: limit("starts_per_country"),
            startsPerPrefix: limit("starts_per_prefix"), checksPerAPIKey: limit("checks_per_api_key"))
        if case .object(let prefix)? = section["starts_per_prefix"], let raw = prefix["digits"] {
            if case .number(let digits) = raw, let count = Int(exactly: digits), (2...12).contains(count) {
                limits.prefixDigits = count
            } else {
                problems.append("rate_limits.starts_per_prefix.digits must be a whole number from 2 to 12")
            }
        }
        config.policy.rateLimits = limits
        if let raw = section["trusted_proxy_header"] {
            if case .string(let name) = raw, HTTPField.Name(name) != nil {
                config.trustedProxyHeader = name
            } else {
                problems.append("rate_limits.trusted_proxy_header must be an HTTP header name")
            }
        }
    }
}

/// A list of region codes (`[GB, us]` → `["GB", "US"]`), or nil with a problem named `what`.
func regionList(_ value: JSONValue, _ what: String, _ problems: inout [String]) -> Set<String>? {
    guard let names = value.stringList, names.allSatisfy({ PhoneRegion.named($0.uppercased()) != nil }) else {
        problems.append("\(what) must be a list of region codes such as [GB, US]")
        return nil
    }
    return Set(names.map { $0.uppercased() })
}

extension GatewayConfiguration {
    /// `pumping_guard: {prefix_digits: 6, window_seconds: 3600, min_starts: 20, conversion_floor: 0.2,
    /// cool_down_seconds: 3600}` (each optional, with these defaults), or `pumping_guard: true`.
    static func parsePumpingGuard(_ value: JSONValue, problems: inout [String]) -> PumpingGuard? {
        if case .bool(let on) = value { return on ? PumpingGuard() : nil }
        guard case .object(let fields) = value else {
            problems.append("`pumping_guard` must be true, false or a mapping")
            return nil
        }
        var settings = PumpingGuard()
        for key in fields.keys.sorted() {
            let number = fields[key]?.numberValue
            switch key {
            case "prefix_digits":
                guard let n = number.flatMap({ Int(exactly: $0) }), (2...12).contains(n) else {
                    problems.append("pumping_guard.prefix_digits must be a whole number from 2 to 12")
                    continue
                }
                settings.prefixDigits = n
            case "window_seconds", "cool_down_seconds":
                guard let n = number.flatMap({ Int(exactly: $0) }), (60...86_400 * 7).contains(n) else {
                    problems.append("pumping_guard.\(key) must be a whole number from 60 to 604800")
                    continue
                }
                if key == "window_seconds" { settings.window = TimeInterval(n) } else { settings.coolDown = TimeInterval(n) }
            case "min_starts":
                guard let n = number.flatMap({ Int(exactly: $0) }), n >= 1 else {
                    problems.append("pumping_guard.min_starts must be a whole number of at least 1")
                    continue
                }
                settings.minStarts = n
            case "conversion_floor":
                guard let floor = number, (0...1).contains(floor) else {
                    problems.append("pumping_guard.conversion_floor must be a number from 0 to 1")
                    continue
                }
                settings.conversionFloor = floor
            default:
                problems.append("pumping_guard: unknown key `\(key)`")
            }
        }
        return settings
    }
}

extension GatewayConfiguration {
    /// `metrics: {access: loopback_or_admin}` (the default), `admin` or `open`.
    static func parseMetrics(_ value: JSONValue, problems: inout [String]) -> MetricsAccess? {
        guard case .object(let fields) = value else {
            problems.append("`metrics` must be a mapping such as {access: loopback_or_admin}")
            return nil
        }
        for key in fields.keys.sorted() where key != "access" {
            problems.append("metrics: unknown key `\(key)`")
        }
        guard let raw = fields["access"] else { return nil }
        guard case .string(let name) = raw, let access = MetricsAccess(rawValue: name) else {
            let names = MetricsAccess.allCases.map(\.rawValue).joined(separator: ", ")
            problems.append("metrics.access must be one of \(names)")
            return nil
        }
        return access
    }
}
