import Foundation
import GatewayCore

/// A JSON object from a request body, read field by field with every problem named.
struct JSONObjectReader {
    let fields: [String: JSONValue]
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
            value = try JSONValue(jsonData: data)
        } catch {
            throw GatewayError.invalidRequest("The \(context) is not valid JSON.")
        }
        guard case .object(let fields) = value else {
            throw GatewayError.invalidRequest("The \(context) must be a JSON object, not \(value.typeName).")
        }
        // The decoder keeps one of two equal keys silently; the client meant one of them, so ask which.
        if let key = JSONDuplicateKeyScanner.firstDuplicate(in: data) {
            throw GatewayError.invalidRequest("The \(context) repeats the key `\(key)`; send each key once.")
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

    /// An array of objects, each read with its own reader.
    func objectArray(_ name: String, maxCount: Int) throws(GatewayError) -> [JSONObjectReader]? {
        switch fields[name] {
        case .none, .some(.null): return nil
        case .array(let items):
            guard items.count <= maxCount else {
                throw GatewayError.invalidRequest("`\(prefix)\(name)` has more than \(maxCount) items.")
            }
            var readers: [JSONObjectReader] = []
            for (index, item) in items.enumerated() {
                guard case .object(let fields) = item else {
                    throw GatewayError.invalidRequest("`\(prefix)\(name)[\(index)]` must be an object.")
                }
                readers.append(
                    JSONObjectReader(
                        fields: fields, context: "`\(prefix)\(name)[\(index)]` object",
                        prefix: "\(prefix)\(name)[\(index)]."))
            }
            return readers
        case .some(let other):
            throw GatewayError.invalidRequest("`\(prefix)\(name)` must be an array of objects, not \(other.typeName).")
        }
    }
}
