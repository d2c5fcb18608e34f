import Foundation
import Yams

/// The API's OpenAPI document, `Sources/gateway/openapi.yaml`: written by hand, embedded in the binary (a SwiftPM
/// `.embedInCode` resource, so an installed binary needs no bundle beside it), served as written at
/// `/openapi.yaml` and as JSON at `/openapi.json`.
enum OpenAPIDocument {
    /// The file as written.
    static var yaml: [UInt8] { PackageResources.openapi_yaml }

    /// The file as JSON, keys in the file's order; made once, at first use. A file that cannot be JSON (a YAML
    /// syntax error, a date, a repeated key) fails here, and `OpenAPIDocumentTests` with it.
    static let json = Result { () throws(ConversionError) -> String in
        try convert(yaml: String(decoding: yaml, as: UTF8.self))
    }

    struct ConversionError: Error, CustomStringConvertible {
        var description: String
    }

    /// The JSON text of a YAML document. Scalars are typed as YAML 1.1 readers (Yams's loader, PyYAML) type
    /// them, so every reader of either form sees the same values: `true`/`yes`/`on` are booleans, `1` an
    /// integer, `0.5` a float, `null`/`~` null, and anything quoted a string. A plain scalar that reads as a
    /// date, a repeated key or a key that is not a scalar is refused: JSON has no such thing.
    static func convert(yaml text: String) throws(ConversionError) -> String {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw ConversionError(description: "openapi.yaml: \(error)")
        }
        guard let node else { throw ConversionError(description: "openapi.yaml is empty") }
        var out = ""
        try write(node, to: &out)
        return out
    }

    private static func write(_ node: Node, to out: inout String) throws(ConversionError) {
        switch node {
        case .scalar(let scalar):
            try writeScalar(scalar, node: node, to: &out)
        case .sequence(let sequence):
            out += "["
            for (index, element) in sequence.enumerated() {
                if index > 0 { out += "," }
                try write(element, to: &out)
            }
            out += "]"
        case .mapping(let mapping):
            out += "{"
            var seen: Set<String> = []
            for (index, (key, value)) in mapping.enumerated() {
                guard case .scalar(let keyScalar) = key else {
                    throw ConversionError(description: "openapi.yaml:\(line(key)): a mapping key must be a scalar")
                }
                guard seen.insert(keyScalar.string).inserted else {
                    throw ConversionError(
                        description: "openapi.yaml:\(line(key)): the key `\(keyScalar.string)` is given twice")
                }
                if index > 0 { out += "," }
                writeString(keyScalar.string, to: &out)
                out += ":"
                try write(value, to: &out)
            }
            out += "}"
        }
    }

    private static func writeScalar(_ scalar: Node.Scalar, node: Node, to out: inout String) throws(ConversionError) {
        let tag = Resolver.default.resolveTag(of: node)
        switch tag {
        case .null:
            out += "null"
        case .bool:
            guard let value = Bool.construct(from: scalar) else { return writeString(scalar.string, to: &out) }
            out += value ? "true" : "false"
        case .int, .float:
            if tag == .int, let value = Int.construct(from: scalar) {
                out += String(value)
            } else if let value = Double.construct(from: scalar), value.isFinite {
                out += String(value)
            } else {
                throw ConversionError(
                    description: "openapi.yaml:\(line(node)): `\(scalar.string)` is no JSON number; quote it")
            }
        case .str:
            writeString(scalar.string, to: &out)
        default:
            throw ConversionError(
                description: "openapi.yaml:\(line(node)): `\(scalar.string)` reads as a YAML \(tag); quote it")
        }
    }

    private static func line(_ node: Node) -> String { node.mark.map { "\($0.line)" } ?? "?" }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as UTF-8.
    private static func writeString(_ string: String, to out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
