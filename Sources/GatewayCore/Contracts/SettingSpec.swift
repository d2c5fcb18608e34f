import Foundation
import Logging

/// One setting a plugin takes.
public struct SettingSpec: Sendable {
    /// The setting's key in a provider's configuration (`account_sid`).
    public var name: String
    /// A one-line description of the setting, for people writing a configuration.
    public var summary: String
    /// Whether a provider of the plugin must set it; an empty value counts as absent.
    public var isRequired: Bool
    /// A secret must come from the environment (`<name>_env: VARIABLE` in the configuration file),
    /// never from the file in clear.
    public var isSecret: Bool
    /// Returns why a value is wrong, or `nil`.
    public var validate: (@Sendable (String) -> String?)?

    /// A spec that is required and not secret unless told; `validate` checks a value that is present.
    public init(
        name: String, summary: String, isRequired: Bool = true, isSecret: Bool = false,
        validate: (@Sendable (String) -> String?)? = nil
    ) {
        self.name = name
        self.summary = summary
        self.isRequired = isRequired
        self.isSecret = isSecret
        self.validate = validate
    }
}
