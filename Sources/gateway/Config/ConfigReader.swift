import Foundation

/// One problem with the configuration, with where it is when the file says (a value built in code has no
/// position, and some problems belong to no one place).
struct ConfigProblem: Sendable, Equatable, CustomStringConvertible {
    var message: String
    var position: SourcePosition?

    init(_ message: String, at position: SourcePosition?) {
        self.message = message
        self.position = position
    }

    init(repeatedKey key: String, at position: SourcePosition?, first: SourcePosition?) {
        let earlier = first.map { " (first on line \($0.line))" } ?? ""
        self.init("the key `\(key)` is given twice in one mapping\(earlier); give it once", at: position)
    }

    /// `3:7: message`, or the message alone.
    var description: String { position.map { "\($0): \(message)" } ?? message }

    /// `gateway.yaml:3:7: message` (or `gateway.yaml: message`), as compilers and linters print a problem.
    func located(in file: String) -> String {
        position.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)"
    }
}

extension [ConfigProblem] {
    /// By where they are in the file; problems of no one place last; otherwise in the order found.
    func byPosition() -> [ConfigProblem] {
        enumerated().sorted { left, right in
            switch (left.element.position, right.element.position) {
            case (let l?, let r?): l == r ? left.offset < right.offset : l < r
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): left.offset < right.offset
            }
        }.map(\.element)
    }
}

/// Every problem and note found in one configuration, in the order found; each reader of the file adds to
/// the same log, so one pass reports everything.
final class ConfigLog {
    private(set) var problems: [ConfigProblem] = []
    /// What is worth knowing but refuses nothing (a signing key made in the data directory).
    private(set) var notes: [ConfigProblem] = []

    func problem(_ message: String, at position: SourcePosition?) {
        problems.append(ConfigProblem(message, at: position))
    }

    func add(_ problems: [ConfigProblem]) { self.problems += problems }

    func note(_ message: String, at position: SourcePosition?) {
        notes.append(ConfigProblem(message, at: position))
    }
}

/// One value of the configuration being read, with the name messages give it (`` `sandbox` ``,
/// `policy.max_attempts`, `api_keys[0]`). Each typed read returns the value, or nil after logging why not;
/// nothing throws, so a section goes on after a problem and its siblings are all checked.
struct ConfigValue {
    let node: ConfigNode
    let name: String
    let log: ConfigLog
    /// How its items and members are named: `api_keys` gives `api_keys[0]` (its own name is `` `api_keys` ``).
    var path: String

    init(node: ConfigNode, name: String, log: ConfigLog, path: String? = nil) {
        self.node = node
        self.name = name
        self.log = log
        self.path = path ?? name
    }

    var position: SourcePosition? { node.position }

    func problem(_ message: String) { log.problem(message, at: position) }

    func string(nonEmpty: Bool = false, message: String? = nil) -> String? {
        guard let text = node.string, !nonEmpty || !text.isEmpty else {
            problem(message ?? "\(name) must be \(nonEmpty ? "a non-empty" : "a") string")
            return nil
        }
        return text
    }

    func bool(message: String? = nil) -> Bool? {
        guard case .bool(let flag) = node.value else {
            problem(message ?? "\(name) must be true or false")
            return nil
        }
        return flag
    }

    func int(in range: ClosedRange<Int>, message: String? = nil) -> Int? {
        guard let number = node.number, let int = Int(exactly: number), range.contains(int) else {
            problem(message ?? "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            return nil
        }
        return int
    }

    func int(atLeast minimum: Int, message: String? = nil) -> Int? {
        guard let number = node.number, let int = Int(exactly: number), int >= minimum else {
            problem(message ?? "\(name) must be a whole number of at least \(minimum)")
            return nil
        }
        return int
    }

    func number(in range: ClosedRange<Double>, message: String? = nil) -> Double? {
        guard let number = node.number, range.contains(number) else {
            problem(message ?? "\(name) must be a number from \(range.lowerBound) to \(range.upperBound)")
            return nil
        }
        return number
    }

    /// One of an enumeration's raw values.
    func choice<T: RawRepresentable & CaseIterable>(_: T.Type, message: String? = nil) -> T?
    where T.RawValue == String {
        guard let text = node.string, let value = T(rawValue: text) else {
            problem(message ?? "\(name) must be one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        return value
    }

    /// An absolute http or https URL with a host, and whatever more `accept` asks of it.
    func httpURL(message: String? = nil, accept: (URL) -> Bool = { _ in true }) -> URL? {
        guard let text = node.string, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            ["http", "https"].contains(scheme), url.host?.isEmpty == false, accept(url)
        else {
            problem(message ?? "\(name) must be an http(s) URL")
            return nil
        }
        return url
    }

    func list(message: String? = nil) -> [ConfigValue]? {
        guard let items = node.items else {
            problem(message ?? "\(name) must be a list")
            return nil
        }
        return items.enumerated().map { ConfigValue(node: $1, name: "\(path)[\($0)]", log: log) }
    }

    /// A list of strings; one problem for the list, at the first item that is not a string.
    func stringList(message: String? = nil) -> [String]? {
        guard let items = node.items else {
            problem(message ?? "\(name) must be a list of strings")
            return nil
        }
        var strings: [String] = []
        for item in items {
            guard let text = item.string else {
                log.problem(message ?? "\(name) must be a list of strings", at: item.position ?? position)
                return nil
            }
            strings.append(text)
        }
        return strings
    }

    /// This value as a mapping whose keys are named `<path>.<key>`.
    func map(message: String? = nil, path: String? = nil) -> ConfigMap? {
        guard node.members != nil else {
            problem(message ?? "\(name) must be a mapping")
            return nil
        }
        return ConfigMap(node: node, path: path ?? self.path, log: log)
    }
}

/// A mapping of the configuration being read: its values by key, and a check for keys it does not take.
struct ConfigMap {
    let node: ConfigNode
    /// Empty for the top level; else how keys are prefixed in messages (`policy`, `api_keys[0]`).
    let path: String
    let log: ConfigLog

    var position: SourcePosition? { node.position }
    var keys: [String] { node.members?.map(\.key) ?? [] }

    func has(_ key: String) -> Bool { node.member(key) != nil }

    /// Whether `key` is absent or an empty list (a value that is no list is a problem of its own).
    func isAbsentOrEmptyList(_ key: String) -> Bool {
        guard let member = node.member(key) else { return true }
        return member.value.items?.isEmpty == true
    }

    /// How messages name a key: `` `sandbox` `` at the top level, `policy.max_attempts` below it.
    func name(_ key: String) -> String { path.isEmpty ? "`\(key)`" : "\(path).\(key)" }

    /// The value under `key`, or nil when the key is absent.
    func value(_ key: String) -> ConfigValue? {
        node.member(key).map {
            ConfigValue(node: $0.value, name: name(key), log: log, path: path.isEmpty ? key : "\(path).\(key)")
        }
    }

    /// Where `key` is (its value, else the key), else where the mapping is.
    func position(of key: String) -> SourcePosition? {
        guard let member = node.member(key) else { return position }
        return member.value.position ?? member.keyPosition ?? position
    }

    func keyPosition(_ key: String) -> SourcePosition? { node.member(key)?.keyPosition ?? position }

    /// Logs a problem at `key` (when given and present) or at the mapping.
    func problem(_ message: String, at key: String? = nil) {
        log.problem(message, at: key.map(position(of:)) ?? position)
    }

    /// Logs every key not in `known`, where it is; `hints` adds a word for a likely mistake (`key` for `key_env`).
    func rejectUnknown(_ known: Set<String>, hints: [String: String] = [:]) {
        for member in node.members ?? [] where !known.contains(member.key) {
            let label = path.isEmpty ? "unknown top-level key" : "\(path): unknown key"
            let hint = hints[member.key].map { " (\($0))" } ?? ""
            log.problem("\(label) `\(member.key)`\(hint)", at: member.keyPosition ?? member.value.position)
        }
    }

    func string(_ key: String, nonEmpty: Bool = false, message: String? = nil) -> String? {
        value(key)?.string(nonEmpty: nonEmpty, message: message)
    }

    func bool(_ key: String, message: String? = nil) -> Bool? { value(key)?.bool(message: message) }

    func int(_ key: String, in range: ClosedRange<Int>, message: String? = nil) -> Int? {
        value(key)?.int(in: range, message: message)
    }

    func int(_ key: String, atLeast minimum: Int, message: String? = nil) -> Int? {
        value(key)?.int(atLeast: minimum, message: message)
    }

    func number(_ key: String, in range: ClosedRange<Double>, message: String? = nil) -> Double? {
        value(key)?.number(in: range, message: message)
    }

    func stringList(_ key: String, message: String? = nil) -> [String]? { value(key)?.stringList(message: message) }

    func list(_ key: String, message: String? = nil) -> [ConfigValue]? { value(key)?.list(message: message) }

    func map(_ key: String, message: String? = nil) -> ConfigMap? { value(key)?.map(message: message) }
}
