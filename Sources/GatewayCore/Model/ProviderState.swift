import Foundation

/// Vendor state the gateway keeps with a verification for the plugin that started it, and never shows to
/// API clients (Firebase's `sessionInfo`, an IDaaS captcha token, a Vonage workflow position).
///
/// The value is the plugin's own `Codable` type, stored as JSON: the core neither reads nor writes its
/// fields. A plugin stores it with ``init(_:)`` and reads it back with ``decode(_:)``.
public struct ProviderState: Sendable, Equatable, Codable, ExpressibleByDictionaryLiteral {
    /// The stored JSON; `.object([:])` when the plugin keeps nothing.
    public var json: JSONValue

    /// No state: an empty JSON object.
    public static let empty = ProviderState(json: .object([:]))

    /// State holding `json` as it is.
    public init(json: JSONValue) {
        self.json = json
    }

    /// Stores a plugin's own state value.
    public init<T: Encodable>(_ value: T) throws(GatewayError) {
        self.json = try JSONValue(encoding: value)
    }

    /// Reads the plugin's state back as its own type.
    public func decode<T: Decodable>(_ type: T.Type) throws(GatewayError) -> T {
        try json.decode(as: type)
    }

    /// State as a JSON object of the given fields; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.json = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// Whether the plugin keeps nothing: JSON `null` or an empty object.
    public var isEmpty: Bool {
        switch json {
        case .null: return true
        case .object(let fields): return fields.isEmpty
        default: return false
        }
    }

    /// Reads the stored JSON as it is.
    public init(from decoder: any Decoder) throws {
        self.json = try JSONValue(from: decoder)
    }

    /// Writes the stored JSON as it is.
    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}
