import Foundation
import GatewayCore

/// Where something is in the configuration file: line and column, both from 1 (columns count characters).
struct SourcePosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    var line: Int
    var column: Int

    var description: String { "\(line):\(column)" }

    static func < (lhs: SourcePosition, rhs: SourcePosition) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}

/// One value of the configuration file and where it is. The JSON and the YAML reader both make these; a
/// value built in code (`GatewayConfiguration.parse(JSONValue)`) has no positions.
struct ConfigNode: Sendable {
    enum Value: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case list([ConfigNode])
        /// In file order; each key once (a repeated key is a problem of the reader that made the node).
        case map([Member])
    }

    struct Member: Sendable {
        var key: String
        var keyPosition: SourcePosition?
        var value: ConfigNode
    }

    var value: Value
    var position: SourcePosition?

    init(_ value: Value, at position: SourcePosition? = nil) {
        self.value = value
        self.position = position
    }

    /// A value built in code: no positions; an object's keys in sorted order, so problems come in a fixed order.
    init(_ json: JSONValue) {
        switch json {
        case .null: value = .null
        case .bool(let flag): value = .bool(flag)
        case .number(let number): value = .number(number)
        case .string(let text): value = .string(text)
        case .array(let items): value = .list(items.map(ConfigNode.init))
        case .object(let fields):
            value = .map(fields.sorted { $0.key < $1.key }.map { Member(key: $0.key, value: ConfigNode($0.value)) })
        }
        position = nil
    }

    /// The kind of value, for messages (`a string`, `a list`).
    var kindName: String {
        switch value {
        case .null: "nothing"
        case .bool: "true or false"
        case .number: "a number"
        case .string: "a string"
        case .list: "a list"
        case .map: "a mapping"
        }
    }

    var string: String? {
        if case .string(let text) = value { return text }
        return nil
    }

    var number: Double? {
        if case .number(let number) = value { return number }
        return nil
    }

    var members: [Member]? {
        if case .map(let members) = value { return members }
        return nil
    }

    var items: [ConfigNode]? {
        if case .list(let items) = value { return items }
        return nil
    }

    /// The member `key` of a mapping.
    func member(_ key: String) -> Member? { members?.first { $0.key == key } }

    /// A scalar as text: a string as is, a whole number without a fraction, true or false.
    var scalarText: String? {
        switch value {
        case .string(let text): text
        case .number(let number):
            number.rounded() == number && abs(number) < 9.2e18 ? String(Int64(number)) : String(number)
        case .bool(let flag): flag ? "true" : "false"
        default: nil
        }
    }
}
