import Foundation

/// Any JSON value, decoded strictly: a number is never a boolean and a boolean never a number.
///
/// The API parses request bodies into this first, so that unknown fields, wrong types and missing
/// fields can all be reported by name in the one error shape. Plugins use it for vendor tokens, action
/// input and output, challenge data and their own state (``ProviderState``).
public enum JSONValue: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Reads any JSON value, trying null, boolean, number, string, array and object in that order.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Writes the value; a whole number below 10^15 in magnitude is written without a fraction (`3`, not `3.0`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value.rounded() == value, abs(value) < 1e15 {
                try container.encode(Int64(value))
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The JSON type's name for messages (`boolean`, `object`).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A number value.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An object value; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// An array value.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue {
    /// The string, for a `.string`; `nil` for any other kind of value.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, for a `.number`; `nil` for any other kind of value.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The boolean, for a `.bool`; `nil` for any other kind of value.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The members, for an `.object`; `nil` for any other kind of value.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The member `key` of an object; `nil` for a missing key and for any other kind of value.
    public subscript(key: String) -> JSONValue? { objectValue?[key] }

    /// The JSON form of any `Encodable` value (a plugin's own state or answer type).
    public init<T: Encodable>(encoding value: T) throws(GatewayError) {
        do {
            let data = try JSONEncoder().encode(value)
            self = try JSONValue(jsonData: data)
        } catch {
            throw GatewayError.internal("A value did not encode as JSON.")
        }
    }

    /// Decodes this JSON as `type`; a mismatch is an `internal` error, since only the gateway's own code
    /// writes the values read this way.
    public func decode<T: Decodable>(as type: T.Type) throws(GatewayError) -> T {
        do {
            return try JSONDecoder().decode(type, from: sortedJSON.map { Data($0.utf8) } ?? JSONEncoder().encode(self))
        } catch {
            throw GatewayError.internal("Stored JSON does not have the expected shape.")
        }
    }
}
