import Foundation
import GatewayCore

/// Where the shared PostgreSQL store is and how the gateway talks to it: `store: postgres://user@host:port/db`
/// in the configuration (or `--store`), the password from the environment (`store_password_env: VAR`, else
/// `PGPASSWORD`, as libpq reads it), never from the URL or the file.
struct PostgresStoreSettings: Sendable, Equatable {
    enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    var host: String
    var port = 5432
    var username: String
    var database: String
    var password: String?
    var tls = TLSMode.prefer
    /// Connections per instance.
    var poolSize = 10
    /// Deadline for one store operation (pool lease included) and the server-side `statement_timeout`:
    /// past it the API answers `503 store_unavailable` instead of waiting.
    var timeout: Duration = .seconds(5)
    /// Deadline for opening one connection.
    var connectTimeout: Duration = .seconds(3)

    /// Whether `text` names a PostgreSQL store rather than SQLite.
    static func isPostgresURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Reads `postgres://user@host[:port]/database[?sslmode=disable|prefer|require]`. `passwordVariable`
    /// names the environment variable with the password (PGPASSWORD when nil).
    static func parse(
        _ text: String, passwordVariable: String?, environment: [String: String]
    ) throws(ConfigurationError) -> PostgresStoreSettings {
        var problems: [String] = []
        guard isPostgresURL(text), let components = URLComponents(string: text), let host = components.host,
            !host.isEmpty
        else {
            throw ConfigurationError(problems: ["store: `\(text)` is not a postgres://user@host:port/database URL"])
        }
        if components.password != nil {
            problems.append(
                "store: the URL holds a password; give it in the environment (store_password_env, or PGPASSWORD)")
        }
        let user = components.user.flatMap { $0.removingPercentEncoding } ?? ""
        if user.isEmpty { problems.append("store: the URL needs a user (postgres://USER@host/database)") }
        let database = String(components.path.drop { $0 == "/" })
        if database.isEmpty || database.contains("/") {
            problems.append("store: the URL needs a database name (postgres://user@host/DATABASE)")
        }
        var settings = PostgresStoreSettings(host: host, username: user, database: database)
        if let port = components.port {
            if (1...65535).contains(port) { settings.port = port } else { problems.append("store: bad port \(port)") }
        }
        for item in components.queryItems ?? [] {
            if item.name == "sslmode", let mode = item.value.flatMap(TLSMode.init(rawValue:)) {
                settings.tls = mode
            } else {
                problems.append("store: unknown URL parameter `\(item.name)` (only sslmode=disable|prefer|require)")
            }
        }
        if let passwordVariable {
            if let password = environment[passwordVariable], !password.isEmpty {
                settings.password = password
            } else {
                problems.append("store: environment variable \(passwordVariable) (store_password_env) is not set")
            }
        } else if let password = environment["PGPASSWORD"], !password.isEmpty {
            settings.password = password
        }
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        return settings
    }

    /// The settings to use from `--store` (`url`, with the file's password, pool size and timeout) or the
    /// configuration file's `store` (`file`); nil means SQLite.
    static func resolve(
        url: String?, file: PostgresStoreSettings?, environment: [String: String]
    ) throws(ConfigurationError) -> PostgresStoreSettings? {
        guard let url else { return file }
        var settings = try parse(url, passwordVariable: nil, environment: environment)
        if let file {
            settings.password = settings.password ?? file.password
            settings.poolSize = file.poolSize
            settings.timeout = file.timeout
        }
        return settings
    }

    /// The URL without secrets, for logs and the banner.
    var displayURL: String {
        "postgres://\(username)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
    }
}
