import Foundation
import GatewayCore

/// The JSON text of the schema's JSON columns (record maps and lists, event details, API-key scopes), the
/// same in both stores: sorted keys, slashes unescaped.
enum StoreJSON {
    static func text(_ value: some Encodable) throws(StoreError) -> String {
        try foundationJSON(value)
    }

    static func foundationJSON(_ value: some Encodable) throws(StoreError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw StoreError("value does not encode as JSON")
        }
    }

    // The JSON columns' own types, written and read without Foundation's coders (the same text: see
    // JSONFastPath.swift); anything the fast path leaves goes through JSONEncoder and JSONDecoder.

    static func text(_ value: [String]) throws(StoreError) -> String { JSONTextWriter.write(strings: value) }

    static func text(_ value: [String: String]) throws(StoreError) -> String { JSONTextWriter.write(stringMap: value) }

    static func text(_ value: [Channel]) throws(StoreError) -> String {
        JSONTextWriter.write(strings: value.map(\.rawValue))
    }

    /// A plugin's state: its numbers with a fraction (an own code's dates) in Swift's shortest round-trip form, not
    /// `JSONEncoder`'s, which reads back the same.
    static func text(_ value: ProviderState) throws(StoreError) -> String {
        if let text = value.json.storedJSON { return text }
        return try foundationJSON(value)
    }

    static func text(_ value: [String: JSONValue]) throws(StoreError) -> String {
        if let text = JSONValue.object(value).sortedJSON { return text }
        return try foundationJSON(value)
    }

    /// Through the fast parser when it reads `text` and `convert` accepts the value, else ``decode(_:_:what:)``.
    static func decodeFast<T: Decodable>(
        _ type: T.Type, _ text: String?, what: String, _ convert: (JSONValue) -> T?
    ) throws(StoreError) -> T {
        if let text, let parsed = JSONValue.parse(text), let value = convert(parsed) { return value }
        return try decode(type, text, what: what)
    }

    static func decode(_ type: [String].Type, _ text: String?, what: String) throws(StoreError) -> [String] {
        try decodeFast(type, text, what: what) { value in
            guard case .array(let items) = value else { return nil }
            var strings: [String] = []
            strings.reserveCapacity(items.count)
            for item in items {
                guard case .string(let string) = item else { return nil }
                strings.append(string)
            }
            return strings
        }
    }

    static func decode(_ type: [String: String].Type, _ text: String?, what: String) throws(StoreError)
        -> [String: String]
    {
        try decodeFast(type, text, what: what) { value in
            guard case .object(let fields) = value else { return nil }
            var strings: [String: String] = [:]
            strings.reserveCapacity(fields.count)
            for (key, field) in fields {
                guard case .string(let string) = field else { return nil }
                strings[key] = string
            }
            return strings
        }
    }

    static func decode(_ type: ProviderState.Type, _ text: String?, what: String) throws(StoreError)
        -> ProviderState
    {
        try decodeFast(type, text, what: what) { ProviderState(json: $0) }
    }

    static func decode(_ type: [String: JSONValue].Type, _ text: String?, what: String) throws(StoreError)
        -> [String: JSONValue]
    {
        try decodeFast(type, text, what: what) { value in
            guard case .object(let fields) = value else { return nil }
            return fields
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String?, what: String) throws(StoreError) -> T {
        guard let text else { throw StoreError.undecodableRow("\(what) is NULL") }
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError.undecodableRow("\(what) is not the expected JSON")
        }
    }
}
