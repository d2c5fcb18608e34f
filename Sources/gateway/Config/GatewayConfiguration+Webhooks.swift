import Foundation
import GatewayCore

extension GatewayConfiguration {
    /// ```yaml
    /// webhooks:
    ///   endpoints:
    ///     - {name: app, url: "https://app.example.com/hooks/verification", secret_env: APP_WEBHOOK_SECRET,
    ///        events: [verification.approved, verification.denied]}   # events: optional, all by default
    ///   max_attempts: 10            # then the delivery is parked
    ///   initial_backoff_seconds: 2  # doubled after each failed attempt
    ///   max_backoff_seconds: 600
    ///   timeout_seconds: 10
    ///   poll_interval_ms: 500
    /// ```
    /// Each endpoint's fields are checked apart, so a missing `name` does not hide a bad `url`.
    static func readWebhooks(_ fields: ConfigMap, environment: [String: String]) -> WebhookSettings {
        var settings = WebhookSettings()
        fields.rejectUnknown([
            "endpoints", "max_attempts", "initial_backoff_seconds", "max_backoff_seconds", "timeout_seconds",
            "poll_interval_ms",
        ])
        if let n = fields.int("max_attempts", in: 1...50) { settings.retry.maxAttempts = n }
        if let n = fields.int("initial_backoff_seconds", in: 1...3600) {
            settings.retry.initialBackoff = TimeInterval(n)
        }
        if let n = fields.int("max_backoff_seconds", in: 1...86_400) { settings.retry.maxBackoff = TimeInterval(n) }
        if let n = fields.int("timeout_seconds", in: 1...60) { settings.timeout = .seconds(n) }
        if let n = fields.int("poll_interval_ms", in: 10...60_000) { settings.pollInterval = .milliseconds(n) }
        let message = "webhooks.endpoints must be a list of {name, url, secret_env}"
        guard let entries = fields.list("endpoints", message: message) else {
            if !fields.has("endpoints") { fields.problem(message) }
            return settings
        }
        var names: Set<String> = []
        for item in entries {
            let at = item.name
            guard let endpoint = item.map(message: "\(at) must be a mapping with name, url and secret_env") else {
                continue
            }
            endpoint.rejectUnknown(
                ["name", "url", "secret_env", "events"],
                hints: ["secret": "give the secret as secret_env, never in clear"])
            let nameMessage = "\(at).name must be a non-empty string of at most 64 characters"
            var name = endpoint.string("name", nonEmpty: true, message: nameMessage)
            if let long = name, long.count > 64 {
                endpoint.problem(nameMessage, at: "name")
                name = nil
            } else if !endpoint.has("name") {
                endpoint.problem(nameMessage)
            }
            if let unique = name, !names.insert(unique).inserted {
                endpoint.problem("\(at).name `\(unique)` is used twice", at: "name")
                name = nil
            }
            let url = endpoint.value("url")?.httpURL(message: "\(at).url must be an http(s) URL")
            if !endpoint.has("url") { endpoint.problem("\(at).url must be an http(s) URL") }
            let secretMessage = "\(at).secret_env must name the environment variable that holds the signing secret"
            var secret: String?
            if let variable = endpoint.string("secret_env", message: secretMessage) {
                if let value = environment[variable], value.utf8.count >= 16 {
                    secret = value
                } else {
                    endpoint.problem(
                        "\(at): environment variable \(variable) must hold a secret of at least 16 bytes",
                        at: "secret_env")
                }
            } else if !endpoint.has("secret_env") {
                endpoint.problem(secretMessage)
            }
            var events: Set<WebhookEventType>?
            if let value = endpoint.value("events") {
                let names = value.node.items?.compactMap(\.string) ?? []
                let parsed = names.compactMap(WebhookEventType.init(rawValue:))
                if names.isEmpty || parsed.count != names.count || names.count != value.node.items?.count {
                    let all = WebhookEventType.allCases.map(\.rawValue).joined(separator: ", ")
                    value.problem("\(at).events must be a list of: \(all)")
                    continue
                }
                events = Set(parsed)
            }
            guard let name, let url, let secret else { continue }
            settings.endpoints.append(WebhookEndpoint(name: name, url: url, secret: secret, events: events))
        }
        return settings
    }
}
