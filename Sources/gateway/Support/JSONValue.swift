import Foundation
import GatewayCore

/// Any JSON value, decoded strictly: a number is never a boolean and a boolean never a number.
///
/// The API parses request bodies into this first, so that unknown fields, wrong types and missing
/// fields can all be reported by name in the one error shape.
enum JSONValue: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
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

    func encode(to encoder: any Encoder) throws {
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

    var typeName: String {
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
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .number(Double(value)) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    init(nilLiteral: ()) { self = .null }
}

/// A JSON object from a request body, read field by field with every problem named.
struct JSONObjectReader {
    private let fields: [String: JSONValue]
    private let context: String
    /// Prepended to field names in messages (`app_verification.`).
    private let prefix: String

    /// Parses `data` as a JSON object. An empty body is an empty object when `allowEmpty`.
    init(data: Data, allowEmpty: Bool = false, context: String = "request body") throws(GatewayError) {
        self.context = context
        self.prefix = ""
        if data.isEmpty || data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            guard allowEmpty else { throw GatewayError.invalidRequest("The \(context) must be a JSON object.") }
            self.fields = [:]
            return
        }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw GatewayError.invalidRequest("The \(context) is not valid JSON.")
        }
        guard case .object(let fields) = value else {
            throw GatewayError.invalidRequest("The \(context) must be a JSON object, not \(value.typeName).")
        }
        self.fields = fields
    }

    init(fields: [String: JSONValue], context: String, prefix: String = "") {
        self.fields = fields
        self.context = context
        self.prefix = prefix
    }

    /// Fails on any field not in `allowed`, naming them.
    func rejectUnknown(allowing allowed: Set<String>) throws(GatewayError) {
        let unknown = fields.keys.filter { !allowed.contains($0) }.sorted().map { prefix + $0 }
        guard unknown.isEmpty else {
            let list = unknown.map { "`\($0)`" }.joined(separator: ", ")
            throw GatewayError.invalidRequest("Unknown field(s) in the \(context): \(list).")
        }
    }

    func string(_ name: String, required: Bool = false, maxLength: Int = 1024) throws(GatewayError) -> String? {
        switch fields[name] {
        case .none, .some(.null):
            if required { throw GatewayError.invalidRequest("`\(prefix)\(name)` is required.") }
            return nil
        case .string(let value):
            if required && value.isEmpty { throw GatewayError.invalidRequest("`\(prefix)\(name)` must not be empty.") }
            guard value.count <= maxLength else {
                throw GatewayError.invalidRequest("`\(prefix)\(name)` is longer than \(maxLength) characters.")
            }
            return value
        case .some(let other):
            throw GatewayError.invalidRequest("`\(prefix)\(name)` must be a string, not \(other.typeName).")
        }
    }

    func integer(_ name: String, in range: ClosedRange<Int>) throws(GatewayError) -> Int? {
        switch fields[name] {
        case .none, .some(.null): return nil
        case .number(let value):
            guard value.rounded() == value, let int = Int(exactly: value), range.contains(int) else {
                throw GatewayError.invalidRequest(
                    "`\(prefix)\(name)` must be a whole number from \(range.lowerBound) to \(range.upperBound).")
            }
            return int
        case .some(let other):
            throw GatewayError.invalidRequest("`\(prefix)\(name)` must be a number, not \(other.typeName).")
        }
    }

    func number(_ name: String) throws(GatewayError) -> Double? {
        switch fields[name] {
        case .none, .some(.null): return nil
        case .number(let value): return value
        case .some(let other):
            throw GatewayError.invalidRequest("`\(prefix)\(name)` must be a number, not \(other.typeName).")
        }
    }

    func bool(_ name: String) throws(GatewayError) -> Bool? {
        switch fields[name] {
        case .none, .some(.null): return nil
        case .bool(let value): return value
        case .some(let other):
            throw GatewayError.invalidRequest("`\(prefix)\(name)` must be a boolean, not \(other.typeName).")
        }
    }

    func stringArray(_ name: String, maxCount: Int, maxLength: Int = 64) throws(GatewayError) -> [String]? {
        switch fields[name] {
        case .none, .some(.null): return nil
        case .array(let items):
            guard items.count <= maxCount else {
                throw GatewayError.invalidRequest("`\(prefix)\(name)` has more than \(maxCount) items.")
            }
            var result: [String] = []
            for (index, item) in items.enumerated() {
                guard case .string(let value) = item, !value.isEmpty, value.count <= maxLength else {
                    throw GatewayError.invalidRequest("`\(prefix)\(name)[\(index)]` must be a non-empty string.")
                }
                result.append(value)
            }
            return result
        case .some(let other):
            throw GatewayError.invalidRequest("`\(prefix)\(name)` must be an array of strings, not \(other.typeName).")
        }
    }

    func stringMap(_ name: String, maxCount: Int, maxLength: Int = 512) throws(GatewayError) -> [String: String]? {
        switch fields[name] {
        case .none, .some(.null): return nil
        case .object(let items):
            guard items.count <= maxCount else {
                throw GatewayError.invalidRequest("`\(prefix)\(name)` has more than \(maxCount) entries.")
            }
            var result: [String: String] = [:]
            for (key, item) in items {
                guard case .string(let value) = item, key.count <= 64, value.count <= maxLength else {
                    throw GatewayError.invalidRequest(
                        "`\(prefix)\(name).\(key)` must be a string of at most \(maxLength) characters.")
                }
                result[key] = value
            }
            return result
        case .some(let other):
            throw GatewayError.invalidRequest("`\(prefix)\(name)` must be an object of strings, not \(other.typeName).")
        }
    }

    func object(_ name: String) throws(GatewayError) -> JSONObjectReader? {
        switch fields[name] {
        case .none, .some(.null): return nil
        case .object(let fields):
            return JSONObjectReader(fields: fields, context: "`\(prefix)\(name)` object", prefix: "\(prefix)\(name).")
        case .some(let other):
            throw GatewayError.invalidRequest("`\(prefix)\(name)` must be an object, not \(other.typeName).")
        }
    }
}
