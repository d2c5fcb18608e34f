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
    static func parseWebhooks(
        _ value: JSONValue, environment: [String: String], problems: inout [String]
    ) -> WebhookSettings {
        var settings = WebhookSettings()
        guard case .object(let fields) = value else {
            problems.append("`webhooks` must be a mapping with `endpoints`")
            return settings
        }
        func number(_ key: String, _ range: ClosedRange<Int>) -> Int? {
            guard let raw = fields[key] else { return nil }
            guard let n = raw.numberValue.flatMap({ Int(exactly: $0) }), range.contains(n) else {
                problems.append("webhooks.\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
                return nil
            }
            return n
        }
        let known: Set<String> = [
            "endpoints", "max_attempts", "initial_backoff_seconds", "max_backoff_seconds", "timeout_seconds",
            "poll_interval_ms",
        ]
        for key in fields.keys.sorted() where !known.contains(key) { problems.append("webhooks: unknown key `\(key)`") }
        if let n = number("max_attempts", 1...50) { settings.retry.maxAttempts = n }
        if let n = number("initial_backoff_seconds", 1...3600) { settings.retry.initialBackoff = TimeInterval(n) }
        if let n = number("max_backoff_seconds", 1...86_400) { settings.retry.maxBackoff = TimeInterval(n) }
        if let n = number("timeout_seconds", 1...60) { settings.timeout = .seconds(n) }
        if let n = number("poll_interval_ms", 10...60_000) { settings.pollInterval = .milliseconds(n) }
        guard case .array(let entries)? = fields["endpoints"] else {
            problems.append("webhooks.endpoints must be a list of {name, url, secret_env}")
            return settings
        }
        for (index, entry) in entries.enumerated() {
            let at = "webhooks.endpoints[\(index)]"
            guard case .object(let endpoint) = entry else {
                problems.append("\(at) must be a mapping with name, url and secret_env")
                continue
            }
            for key in endpoint.keys.sorted() where !["name", "url", "secret_env", "events"].contains(key) {
                problems.append(
                    "\(at): unknown key `\(key)`\(key == "secret" ? " (give the secret as secret_env, never in clear)" : "")")
            }
            guard let name = endpoint["name"]?.stringValue, !name.isEmpty, name.count <= 64 else {
                problems.append("\(at).name must be a non-empty string of at most 64 characters")
                continue
            }
            if settings.endpoints.contains(where: { $0.name == name }) {
                problems.append("\(at).name `\(name)` is used twice")
                continue
            }
            guard let text = endpoint["url"]?.stringValue, let url = URL(string: text),
                let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host?.isEmpty == false
            else {
                problems.append("\(at).url must be an http(s) URL")
                continue
            }
            guard let variable = endpoint["secret_env"]?.stringValue else {
                problems.append("\(at).secret_env must name the environment variable that holds the signing secret")
                continue
            }
            guard let secret = environment[variable], secret.utf8.count >= 16 else {
                problems.append("\(at): environment variable \(variable) must hold a secret of at least 16 bytes")
                continue
            }
            var events: Set<WebhookEventType>?
            if let raw = endpoint["events"] {
                let names = raw.stringList ?? []
                let parsed = names.compactMap(WebhookEventType.init(rawValue:))
                if names.isEmpty || parsed.count != names.count {
                    let all = WebhookEventType.allCases.map(\.rawValue).joined(separator: ", ")
                    problems.append("\(at).events must be a list of: \(all)")
                    continue
                }
                events = Set(parsed)
            }
            settings.endpoints.append(WebhookEndpoint(name: name, url: url, secret: secret, events: events))
        }
        return settings
    }
}
