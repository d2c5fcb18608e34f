import Crypto
import Foundation
import GatewayCore

extension GatewayConfiguration {
    /// ```yaml
    /// webhooks:
    ///   endpoints:
    ///     - {name: app, url: "https://app.example.com/hooks/verification", secret_env: APP_WEBHOOK_SECRET,
    ///        events: [verification.approved, verification.denied]}   # events: optional, all by default
    ///     - {name: bus, url: "https://events.example.com/in", secret_env: [NEW_SECRET, OLD_SECRET],  # rotation
    ///        signing_key_env: BUS_ED25519_KEY, format: cloudevents}
    ///     - {name: old, url: "https://old.example.com/hooks", secret_env: OLD_APP_SECRET, signing: legacy}
    ///   cloudevents: {source: "https://gateway.example.com", type_prefix: com.example}
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
            "poll_interval_ms", "cloudevents",
        ])
        if let cloud = fields.map(
            "cloudevents", message: "webhooks.cloudevents must be a mapping of source, type_prefix")
        {
            cloud.rejectUnknown(["source", "type_prefix"])
            settings.cloudEventsSource = cloud.string(
                "source", nonEmpty: true, message: "webhooks.cloudevents.source must be a non-empty URI reference")
            if let prefix = cloud.string("type_prefix", nonEmpty: true) {
                if prefix.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" }),
                    !prefix.hasPrefix("."), !prefix.hasSuffix(".")
                {
                    settings.cloudEventsTypePrefix = prefix
                } else {
                    cloud.problem(
                        "webhooks.cloudevents.type_prefix must be a reverse-DNS name such as com.example",
                        at: "type_prefix")
                }
            }
        }
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
                ["name", "url", "secret_env", "events", "signing", "signing_key_env", "format"],
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
            let signing = readSigning(endpoint, at: at, environment: environment)
            var format = WebhookEndpoint.Format.json
            if let value = endpoint.value("format") {
                format =
                    value.choice(WebhookEndpoint.Format.self, message: "\(at).format must be json or cloudevents")
                    ?? .json
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
            guard let name, let url, let signing else { continue }
            settings.endpoints.append(
                WebhookEndpoint(name: name, url: url, signing: signing, events: events, format: format))
        }
        return settings
    }

    /// An endpoint's signing: `standard` (the default) with one or several `whsec_` secrets and an optional
    /// `whsk_` Ed25519 key, or `legacy` with one secret of at least 16 bytes. Each from the environment.
    static func readSigning(_ endpoint: ConfigMap, at: String, environment: [String: String])
        -> WebhookEndpoint.Signing?
    {
        var legacy = false
        if let value = endpoint.value("signing") {
            guard let raw = value.string(), raw == "standard" || raw == "legacy" else {
                value.problem("\(at).signing must be standard or legacy")
                return nil
            }
            legacy = raw == "legacy"
        }
        let secretMessage =
            "\(at).secret_env must name the environment variable that holds the signing secret"
            + (legacy ? "" : " (or a list of them, during a rotation)")
        guard let value = endpoint.value("secret_env") else {
            endpoint.problem(secretMessage)
            return nil
        }
        let variables: [String]
        if let items = value.node.items {
            variables = items.compactMap(\.string)
            if legacy || variables.isEmpty || variables.count != items.count || variables.count > 4 {
                value.problem(legacy ? "\(at).secret_env must name one variable with signing: legacy" : secretMessage)
                return nil
            }
        } else if let variable = value.string() {
            variables = [variable]
        } else {
            value.problem(secretMessage)
            return nil
        }
        if legacy {
            if endpoint.has("signing_key_env") {
                endpoint.problem("\(at).signing_key_env needs signing: standard", at: "signing_key_env")
            }
            guard let secret = environment[variables[0]], secret.utf8.count >= 16 else {
                value.problem("\(at): environment variable \(variables[0]) must hold a secret of at least 16 bytes")
                return nil
            }
            return .legacy(secret: secret)
        }
        var secrets: [Data] = []
        for variable in variables {
            guard let text = environment[variable], let secret = standardKey(text, prefix: "whsec_"),
                (24...64).contains(secret.count)
            else {
                value.problem(
                    "\(at): environment variable \(variable) must hold a Standard Webhooks secret: whsec_ and 24 to 64 "
                        + "random bytes in Base64 (or set signing: legacy to keep the X-Gateway-Signature scheme)")
                return nil
            }
            secrets.append(secret)
        }
        var seed: Data?
        if let keyValue = endpoint.value("signing_key_env") {
            guard let variable = keyValue.string(), let text = environment[variable],
                let key = standardKey(text, prefix: "whsk_"), key.count == 32 || key.count == 64,
                (try? Curve25519.Signing.PrivateKey(rawRepresentation: key.prefix(32))) != nil
            else {
                keyValue.problem(
                    "\(at).signing_key_env must name a variable holding an Ed25519 key: whsk_ and its 32-byte seed "
                        + "in Base64")
                return nil
            }
            seed = key.prefix(32)
        }
        return .standard(secrets: secrets, ed25519Seed: seed)
    }

    /// The bytes of a Standard Webhooks key: `prefix` and Base64 (padding optional).
    static func standardKey(_ text: String, prefix: String) -> Data? {
        guard text.hasPrefix(prefix) else { return nil }
        var base64 = String(text.dropFirst(prefix.count))
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
