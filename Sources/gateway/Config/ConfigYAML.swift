import Foundation
import Yams

/// Reads a YAML configuration file into ``ConfigNode``s that know their line and column, through Yams's
/// node tree (which keeps each node's mark) rather than its loader (which keeps none). Scalars are typed as
/// the loader types them: YAML 1.1's booleans, integers, floats and null; anything else (a quoted number, a
/// date) is a string. A repeated key is reported where it repeats and the first value is kept.
enum ConfigYAML {
    struct SyntaxError: Error {
        var message: String
        var position: SourcePosition?
    }

    static func parse(_ text: String) throws(SyntaxError) -> (ConfigNode, duplicates: [ConfigProblem]) {
        let document: Node?
        do {
            document = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw syntaxError(error)
        } catch {
            throw SyntaxError(message: "\(error)", position: nil)
        }
        guard let document else { return (ConfigNode(.null, at: SourcePosition(line: 1, column: 1)), []) }
        var duplicates: [ConfigProblem] = []
        var budget = maximumValues
        let root = convert(document, depth: 0, budget: &budget, duplicates: &duplicates)
        guard budget >= 0 else {
            throw SyntaxError(
                message: "the file expands to more than \(maximumValues) values (aliases of aliases?)", position: nil)
        }
        return (root, duplicates)
    }

    /// More values than any configuration has: a few aliases of aliases can expand to billions.
    static let maximumValues = 100_000

    private static func position(_ mark: Mark?) -> SourcePosition? {
        mark.map { SourcePosition(line: $0.line, column: $0.column) }
    }

    private static func convert(
        _ node: Node, depth: Int, budget: inout Int, duplicates: inout [ConfigProblem]
    ) -> ConfigNode {
        let at = position(node.mark)
        budget -= 1
        // Aliases can make a small file a deep or a huge tree; a configuration is never this deep or this big.
        guard depth < ConfigJSONParser.maximumDepth, budget >= 0 else { return ConfigNode(.null, at: at) }
        switch node {
        case .scalar(let scalar):
            switch Resolver.default.resolveTag(of: node) {
            case .null: return ConfigNode(.null, at: at)
            case .bool:
                return ConfigNode(Bool.construct(from: scalar).map { .bool($0) } ?? .string(scalar.string), at: at)
            case .int:
                if let int = Int.construct(from: scalar) { return ConfigNode(.number(Double(int)), at: at) }
                return ConfigNode(Double.construct(from: scalar).map { .number($0) } ?? .string(scalar.string), at: at)
            case .float:
                return ConfigNode(Double.construct(from: scalar).map { .number($0) } ?? .string(scalar.string), at: at)
            default: return ConfigNode(.string(scalar.string), at: at)
            }
        case .sequence(let sequence):
            return ConfigNode(
                .list(sequence.map { convert($0, depth: depth + 1, budget: &budget, duplicates: &duplicates) }), at: at)
        case .mapping(let mapping):
            var members: [ConfigNode.Member] = []
            var seen: [String: SourcePosition?] = [:]
            for (keyNode, valueNode) in mapping {
                let keyPosition = position(keyNode.mark)
                // A key is its text as written: `+15005550006:` is that number's key, not 15005550006.
                guard case .scalar(let keyScalar) = keyNode else {
                    duplicates.append(
                        ConfigProblem("a mapping key must be a plain value, not a list or a mapping", at: keyPosition))
                    continue
                }
                let key = keyScalar.string
                if let first = seen[key] {
                    duplicates.append(ConfigProblem(repeatedKey: key, at: keyPosition, first: first))
                    continue
                }
                seen[key] = keyPosition
                members.append(
                    ConfigNode.Member(
                        key: key, keyPosition: keyPosition,
                        value: convert(valueNode, depth: depth + 1, budget: &budget, duplicates: &duplicates)))
            }
            return ConfigNode(.map(members), at: at)
        }
    }

    private static func syntaxError(_ error: YamlError) -> SyntaxError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let detail = context.map { "\(problem) (\($0.text) at line \($0.mark.line))" } ?? problem
            return SyntaxError(message: detail, position: position(mark))
        case .reader(let problem, _, _, _):
            return SyntaxError(message: problem, position: nil)
        default:
            return SyntaxError(message: "\(error)", position: nil)
        }
    }
}
