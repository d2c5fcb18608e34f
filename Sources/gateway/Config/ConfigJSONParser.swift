import Foundation

/// Reads a JSON configuration file into ``ConfigNode``s that know their line and column.
///
/// Foundation's decoder gives no positions and keeps one of two equal keys without a word, so the
/// configuration has its own small parser (RFC 8259, nothing more: no comments, no trailing commas). A
/// syntax error ends the parse and is reported where it is; a repeated key is reported where it repeats and
/// the parse goes on (the first value is kept), so it comes out with the file's other problems.
struct ConfigJSONParser {
    struct SyntaxError: Error {
        var message: String
        var position: SourcePosition
    }

    /// Deeper than this is refused rather than recursed into.
    static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    private(set) var duplicates: [ConfigProblem] = []

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    /// The document's one value, and the repeated keys found on the way.
    static func parse(_ text: String) throws(SyntaxError) -> (ConfigNode, duplicates: [ConfigProblem]) {
        var parser = ConfigJSONParser(text)
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }  // a byte order mark
        parser.skipWhitespace()
        let root = try parser.value(depth: 0)
        parser.skipWhitespace()
        if parser.index < parser.bytes.count {
            throw parser.error("unexpected \(parser.describeNext()) after the document's value")
        }
        return (root, parser.duplicates)
    }

    /// The position of the byte at `offset`, its column counted in characters.
    private func position(_ offset: Int) -> SourcePosition {
        let column = bytes[lineStart..<min(offset, bytes.count)].reduce(1) { count, byte in
            byte & 0xC0 == 0x80 ? count : count + 1
        }
        return SourcePosition(line: line, column: column)
    }

    private func error(_ message: String, at offset: Int? = nil) -> SyntaxError {
        SyntaxError(message: message, position: position(offset ?? index))
    }

    private func describeNext() -> String {
        guard index < bytes.count else { return "end of file" }
        let byte = bytes[index]
        guard byte >= 0x21, byte < 0x7F else { return String(format: "byte 0x%02X", byte) }
        return "`\(Character(UnicodeScalar(byte)))`"
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    private mutating func value(depth: Int) throws(SyntaxError) -> ConfigNode {
        guard depth < Self.maximumDepth else { throw error("values nest deeper than \(Self.maximumDepth) levels") }
        guard index < bytes.count else { throw error("the file ends where a value should be") }
        let start = position(index)
        switch bytes[index] {
        case UInt8(ascii: "{"): return ConfigNode(.map(try members(depth: depth)), at: start)
        case UInt8(ascii: "["): return ConfigNode(.list(try items(depth: depth)), at: start)
        case UInt8(ascii: "\""): return ConfigNode(.string(try string()), at: start)
        case UInt8(ascii: "t"):
            try literal("true")
            return ConfigNode(.bool(true), at: start)
        case UInt8(ascii: "f"):
            try literal("false")
            return ConfigNode(.bool(false), at: start)
        case UInt8(ascii: "n"):
            try literal("null")
            return ConfigNode(.null, at: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return ConfigNode(.number(try number()), at: start)
        default: throw error("expected a value, found \(describeNext())")
        }
    }

    private mutating func members(depth: Int) throws(SyntaxError) -> [ConfigNode.Member] {
        index += 1  // {
        var members: [ConfigNode.Member] = []
        var seen: [String: SourcePosition] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a key in double quotes, found \(describeNext())")
            }
            let keyPosition = position(index)
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected `:` after the key \"\(key)\", found \(describeNext())")
            }
            index += 1
            skipWhitespace()
            let member = try value(depth: depth + 1)
            if let first = seen[key] {
                duplicates.append(ConfigProblem(repeatedKey: key, at: keyPosition, first: first))
            } else {
                seen[key] = keyPosition
                members.append(ConfigNode.Member(key: key, keyPosition: keyPosition, value: member))
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("the file ends inside an object (a `}` is missing)") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return members
            default: throw error("expected `,` or `}` after a member, found \(describeNext())")
            }
        }
    }

    private mutating func items(depth: Int) throws(SyntaxError) -> [ConfigNode] {
        index += 1  // [
        var items: [ConfigNode] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return items
        }
        while true {
            skipWhitespace()
            items.append(try value(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("the file ends inside an array (a `]` is missing)") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return items
            default: throw error("expected `,` or `]` after an item, found \(describeNext())")
            }
        }
    }

    private mutating func literal(_ word: String) throws(SyntaxError) {
        let expected = Array(word.utf8)
        guard bytes[index...].starts(with: expected) else { throw error("expected a value, found \(describeNext())") }
        index += expected.count
    }

    private mutating func number() throws(SyntaxError) -> Double {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - first
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0 else { throw error("a number needs digits", at: start) }
        if integerDigits > 1, bytes[integerStart] == UInt8(ascii: "0") {
            throw error("a number must not start with 0", at: start)
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw error("a number needs digits after its `.`", at: start) }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw error("a number needs digits in its exponent", at: start) }
        }
        guard let number = Double(String(decoding: bytes[start..<index], as: UTF8.self)), number.isFinite else {
            throw error("the number is out of range", at: start)
        }
        return number
    }

    private mutating func string() throws(SyntaxError) -> String {
        let start = index
        index += 1  // "
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun() {
            scalars.append(contentsOf: String(decoding: bytes[runStart..<index], as: UTF8.self).unicodeScalars)
        }
        while true {
            guard index < bytes.count else { throw error("the string has no closing `\"`", at: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                flushRun()
                index += 1
                return String(scalars)
            }
            if byte < 0x20 {
                throw error("a string must not hold a control character or a line break (write \\n)")
            }
            guard byte == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            flushRun()
            index += 1
            guard index < bytes.count else { throw error("the string has no closing `\"`", at: start) }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"): scalars.append(try unicodeEscape())
            default: throw error("unknown escape `\\\(Character(UnicodeScalar(escape)))` in a string", at: index - 2)
            }
            runStart = index
        }
    }

    /// The scalar of `\uXXXX` (the `\u` already read), or of a surrogate pair `\uD83D\uDE00`.
    private mutating func unicodeEscape() throws(SyntaxError) -> Unicode.Scalar {
        let escapeStart = index - 2
        func hex4() throws(SyntaxError) -> UInt32 {
            guard index + 4 <= bytes.count,
                let value = UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16)
            else { throw error("`\\u` needs four hex digits", at: escapeStart) }
            index += 4
            return value
        }
        let first = try hex4()
        if (0xD800..<0xDC00).contains(first), bytes[index...].starts(with: Array("\\u".utf8)) {
            index += 2
            let second = try hex4()
            if (0xDC00..<0xE000).contains(second),
                let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
            {
                return scalar
            }
        }
        guard let scalar = Unicode.Scalar(first) else {
            throw error("`\\u` escapes half of a surrogate pair", at: escapeStart)
        }
        return scalar
    }
}
