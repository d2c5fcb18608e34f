import Foundation

/// A vendor-specific operation a provider exposes through the API.
public struct ProviderAction: Sendable, Equatable, Codable {
    /// The action's name in the route (`refresh_id_token`).
    public var name: String
    /// A one-line description of what the action does.
    public var summary: String
    /// Input keys the action requires.
    public var requiredInputs: [String]

    /// An action with no required inputs unless told.
    public init(name: String, summary: String, requiredInputs: [String] = []) {
        self.name = name
        self.summary = summary
        self.requiredInputs = requiredInputs
    }
}
