import Foundation

extension GatewayConfiguration {
    /// ```yaml
    /// retention:
    ///   verifications: 30d          # default; `off` keeps them forever
    ///   events: 30d                 # default: as verifications; shorter deletes the timeline first
    ///   anonymize_after: 7d         # off by default; needs anonymize_key_env
    ///   anonymize_key_env: GATEWAY_ANONYMIZE_KEY
    /// ```
    /// or `retention: off`. Each horizon is at least two days (`RetentionSettings.minimumHorizon`).
    mutating func readRetention(_ top: ConfigMap, environment: [String: String]) {
        guard let value = top.value("retention") else { return }
        if value.node.scalarText == "off" || value.node.scalarText == "false" {
            retention = RetentionSettings(verifications: nil, events: nil)
            return
        }
        guard
            let section = value.map(
                message: "`retention` must be a mapping (verifications, events, anonymize_after) or off")
        else { return }
        section.rejectUnknown(
            ["verifications", "events", "anonymize_after", "anonymize_key_env"],
            hints: ["anonymize_key": "give the key as anonymize_key_env: VARIABLE, never in clear"])
        func horizon(_ key: String, default fallback: TimeInterval?) -> TimeInterval? {
            guard let value = section.value(key) else { return fallback }
            if value.node.scalarText == "off" || value.node.scalarText == "false" { return nil }
            guard let seconds = Self.duration(value.node), seconds >= RetentionSettings.minimumHorizon else {
                section.problem(
                    "retention.\(key) must be a duration of at least 2d (such as 30d or 720h), or off", at: key)
                return fallback
            }
            return seconds
        }
        var settings = RetentionSettings()
        settings.verifications = horizon("verifications", default: RetentionSettings.defaultHorizon)
        settings.events = horizon("events", default: settings.verifications)
        settings.anonymizeAfter = horizon("anonymize_after", default: nil)
        if let events = settings.events, let verifications = settings.verifications, events > verifications {
            section.problem(
                "retention.events cannot be longer than retention.verifications: an event goes with its verification",
                at: "events")
        }
        if let variable = section.string(
            "anonymize_key_env", nonEmpty: true,
            message: "retention: `anonymize_key_env` must name an environment variable")
        {
            if let secret = environment[variable], let anonymizer = DestinationAnonymizer(secret: Array(secret.utf8)) {
                settings.anonymizer = anonymizer
            } else {
                section.problem(
                    "retention: environment variable \(variable) is not set or shorter than "
                        + "\(DestinationAnonymizer.minimumSecretBytes) bytes",
                    at: "anonymize_key_env")
            }
        } else if settings.anonymizeAfter != nil, !section.has("anonymize_key_env") {
            section.problem("retention: `anonymize_after` needs `anonymize_key_env`, the key of the numbers' hash")
        }
        retention = settings
    }
}
