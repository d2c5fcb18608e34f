import Foundation
import GatewayCore

/// ```yaml
/// public_base_url: https://verify.example.com
/// tls: {cert_file: /etc/gateway/cert.pem, key_file: /etc/gateway/key.pem}
/// store: postgres://gateway@db:5432/gateway   # with store_password_env, store_pool_size, store_timeout
/// sqlite_sync: full                           # or normal; the embedded store only
/// sqlite_commit_delay_ms: 2                   # 0 turns it off; with sqlite_commit_siblings: 5
/// vendor_connections_per_host: 64
/// token: {signing_key_env: GATEWAY_TOKEN_SIGNING_KEY, verification_keys_env: [GATEWAY_TOKEN_PREVIOUS_KEY]}
/// ```
extension GatewayConfiguration {
    mutating func readServer(_ top: ConfigMap, environment: [String: String]) {
        if let value = top.value("public_base_url"),
            value.httpURL(
                message: "`public_base_url` must be an http(s) URL without query or fragment",
                accept: { $0.query == nil && $0.fragment == nil }) != nil,
            let text = value.node.string
        {
            publicBaseURL = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text)
        }
        if let section = top.map("tls", message: "`tls` must be a mapping with `cert_file` and `key_file`") {
            section.rejectUnknown(["cert_file", "key_file"])
            let message = "`tls` needs `cert_file` and `key_file` (paths to PEM files)"
            let certificate = section.string("cert_file", nonEmpty: true, message: message)
            let key = section.string("key_file", nonEmpty: true, message: message)
            if !section.has("cert_file") || !section.has("key_file") { section.problem(message) }
            if let certificate, let key {
                tlsCertificate = URL(fileURLWithPath: certificate)
                tlsKey = URL(fileURLWithPath: key)
            }
        }
        readStore(top, environment: environment)
        vendorConnectionsPerHost = top.int("vendor_connections_per_host", in: 1...1000) ?? vendorConnectionsPerHost
        readToken(top, environment: environment)
    }

    /// `store`, `store_password_env`, `store_pool_size` (connections per instance) and `store_timeout`
    /// (seconds per store operation); `sqlite_sync`, `sqlite_commit_delay_ms` and `sqlite_commit_siblings` for
    /// the embedded store.
    private mutating func readStore(_ top: ConfigMap, environment: [String: String]) {
        let passwordVariable = top.string(
            "store_password_env", nonEmpty: true, message: "`store_password_env` must name an environment variable")
        if let value = top.value("sqlite_sync") {
            if top.has("store") {
                value.problem("`sqlite_sync` applies to the embedded SQLite store, not to `store: postgres://…`")
            } else if let mode = value.node.string.flatMap(SQLiteSynchronous.init(rawValue:)) {
                sqliteSynchronous = mode
            } else {
                value.problem("`sqlite_sync` must be `full` or `normal`")
            }
        }
        for key in ["sqlite_commit_delay_ms", "sqlite_commit_siblings"] where top.has(key) && top.has("store") {
            top.problem("`\(key)` applies to the embedded SQLite store, not to `store: postgres://…`", at: key)
        }
        if let milliseconds = top.number(
            "sqlite_commit_delay_ms", in: 0...100,
            message: "`sqlite_commit_delay_ms` must be a number of milliseconds from 0 (off) to 100")
        {
            sqliteCommitDelay = .microseconds(Int64((milliseconds * 1000).rounded()))
        }
        sqliteCommitSiblings = top.int("sqlite_commit_siblings", in: 1...1000) ?? sqliteCommitSiblings
        guard let value = top.value("store") else {
            for key in ["store_password_env", "store_pool_size", "store_timeout"] where top.has(key) {
                top.problem("`\(key)` needs `store: postgres://…`", at: key)
            }
            return
        }
        let poolSize = top.int("store_pool_size", in: 1...200)
        let timeout = top.number(
            "store_timeout", in: 0.1...120, message: "`store_timeout` must be a number of seconds from 0.1 to 120")
        guard let url = value.node.string, PostgresStoreSettings.isPostgresURL(url) else {
            value.problem("`store` must be a postgres://user@host:port/database URL (SQLite is the default without it)")
            return
        }
        do {
            var settings = try PostgresStoreSettings.parse(
                url, passwordVariable: passwordVariable, environment: environment)
            if let poolSize { settings.poolSize = poolSize }
            if let timeout { settings.timeout = .milliseconds(Int64(timeout * 1000)) }
            store = settings
        } catch {
            for problem in error.problems {
                top.problem(problem, at: problem.contains("store_password_env") ? "store_password_env" : "store")
            }
        }
    }

    /// `token`: the signing key and the keys the JWKS also publishes, each from the environment. Without a
    /// signing key the key in the data directory is used (made there the first time); a shared store needs
    /// the one key every instance signs with, so there a variable that is not set is a problem.
    private mutating func readToken(_ top: ConfigMap, environment: [String: String]) {
        guard let token = top.map("token") else { return }
        token.rejectUnknown(["signing_key_env", "verification_keys_env"])
        if let items = token.list(
            "verification_keys_env", message: "token: `verification_keys_env` must be a list of variable names")
        {
            for item in items {
                guard let name = item.node.string else {
                    item.problem("token: `verification_keys_env` must list variable names")
                    continue
                }
                if let pem = environment[name], !pem.isEmpty {
                    tokenVerificationKeyPEMs.append(pem)
                } else {
                    item.problem("token: environment variable \(name) is not set")
                }
            }
        }
        guard
            let value = token.value("signing_key_env"),
            let variable = value.string(
                nonEmpty: true, message: "token: `signing_key_env` must name an environment variable")
        else { return }
        if let pem = environment[variable], !pem.isEmpty {
            tokenSigningKeyPEM = pem
        } else if top.has("store") {
            value.problem(
                "token: environment variable \(variable) is not set (a shared store needs the one key every instance signs with)"
            )
        } else {
            token.log.note(
                "token: environment variable \(variable) is not set: the key in --data-dir is used (made there if missing)",
                at: value.position)
        }
    }
}
