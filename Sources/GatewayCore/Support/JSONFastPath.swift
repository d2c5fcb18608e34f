import Foundation

/// A direct reader and writer of ``JSONValue``, for the request and store paths where Foundation's coders
/// cost more than the work around them (a start reads and writes JSON many times).
///
/// Both give exactly what Foundation gives, or nothing: ``JSONValue/parse(_:)`` returns `nil` for any
/// input it does not handle the way `JSONDecoder` would (lone surrogate escapes, numbers out of range,
/// very deep nesting, invalid UTF-8…), and ``JSONValue/sortedJSON`` for values `JSONEncoder` might
/// write differently (numbers with a fraction); callers then fall back to Foundation, so the fast path
/// changes no answer, only its cost.
extension JSONValue {
    /// Parses one JSON text (surrounding whitespace allowed) as `JSONDecoder` would; `nil` when the text
    /// is not JSON or is a case left to `JSONDecoder`.
    public static func parse(_ data: Data) -> JSONValue? {
        data.withUnsafeBytes { raw -> JSONValue? in
            var parser = FastJSONParser(bytes: raw.bindMemory(to: UInt8.self))
            return parser.document()
        }
    }

    /// Parses UTF-8 text; see ``parse(_:)-swift.type.method``.
    public static func parse(_ text: String) -> JSONValue? {
        var text = text
        return text.withUTF8 { bytes -> JSONValue? in
            var parser = FastJSONParser(bytes: bytes)
            return parser.document()
        }
    }

    /// This value as `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` writes it, byte for byte;
    /// `nil` when it holds a number with a fraction (left to `JSONEncoder`'s own formatting).
    public var sortedJSON: String? {
        var out = ""
        return JSONTextWriter.write(self, into: &out) ? out : nil
    }

    /// ``sortedJSON``, but a number with a fraction is written in Swift's shortest round-trip form rather than
    /// left to `JSONEncoder`: text the gateway stores and reads back itself (a plugin's state, whose dates have
    /// fractions), where any JSON reader gets the same values. `nil` only for an infinity or NaN.
    package var storedJSON: String? {
        var out = ""
        return JSONTextWriter.write(self, into: &out, fractions: true) ? out : nil
    }

    /// Decodes `data` as JSON: the fast parser, else `JSONDecoder` (whose error is thrown).
    public init(jsonData data: Data) throws {
        if let value = JSONValue.parse(data) {
            self = value
        } else {
            self = try JSONDecoder().decode(JSONValue.self, from: data)
        }
    }
}

/// Writes JSON text the way `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` does.
package enum JSONTextWriter {
    /// Appends `value`; `false` (with `out` partly written) when it holds a number with a fraction, unless
    /// `fractions` lets such numbers be written in Swift's shortest round-trip form (``write(number:into:)``).
    package static func write(_ value: JSONValue, into out: inout String, fractions: Bool = false) -> Bool {
        switch value {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .number(let number):
            // JSONValue writes whole numbers below 1e15 as integers; anything else goes to JSONEncoder.
            guard number.rounded() == number, abs(number) < 1e15 else {
                return fractions && write(number: number, into: &out)
            }
            out += String(Int64(number))
        case .string(let text): writeString(text, into: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                guard write(item, into: &out, fractions: fractions) else { return false }
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (index, key) in sortedKeys(fields.keys).enumerated() {
                if index > 0 { out += "," }
                writeString(key, into: &out)
                out += ":"
                guard let field = fields[key], write(field, into: &out, fractions: fractions) else { return false }
            }
            out += "}"
        }
        return true
    }

    /// `["a","b"]`.
    package static func write(strings: [String]) -> String {
        var out = "["
        for (index, item) in strings.enumerated() {
            if index > 0 { out += "," }
            writeString(item, into: &out)
        }
        return out + "]"
    }

    /// `{"k":"v"}`, keys sorted.
    package static func write(stringMap: [String: String]) -> String {
        var out = "{"
        for (index, key) in sortedKeys(stringMap.keys).enumerated() {
            if index > 0 { out += "," }
            writeString(key, into: &out)
            out += ":"
            writeString(stringMap[key] ?? "", into: &out)
        }
        return out + "}"
    }

    /// A number `JSONDecoder` reads back as exactly `value` (Swift's shortest round-trip text, such as
    /// `785000000.123456` or `1e+16`): for files the gateway writes and reads itself, where the text need not
    /// be `JSONEncoder`'s. `false` (and nothing written) for infinities and NaN, which JSON cannot hold.
    package static func write(number value: Double, into out: inout String) -> Bool {
        guard value.isFinite else { return false }
        out += value.description
        return true
    }

    /// Keys in the order `.sortedKeys` gives them: by their UTF-8 bytes.
    static func sortedKeys(_ keys: some Collection<String>) -> [String] {
        keys.sorted(by: utf8Precedes)
    }

    /// Whether `a`'s UTF-8 bytes sort before `b`'s: one `memcmp` where both are stored contiguously (native and
    /// small strings are), else the byte-by-byte walk.
    static func utf8Precedes(_ a: String, _ b: String) -> Bool {
        let compared = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y -> Bool in
                let common = min(x.count, y.count)
                if common > 0, let left = x.baseAddress, let right = y.baseAddress {
                    let order = memcmp(left, right, common)
                    if order != 0 { return order < 0 }
                }
                return x.count < y.count
            }
        }
        if let compared, let result = compared { return result }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// A string literal: `"` and `\` escaped, the C0 controls as `\b \f \n \r \t` or `\u00xx`, nothing else.
    package static func writeString(_ text: String, into out: inout String) {
        out += "\""
        var plainStart = text.utf8.startIndex
        var index = plainStart
        let utf8 = text.utf8
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == 0x22 || byte == 0x5C || byte < 0x20 {
                out += Substring(utf8[plainStart..<index])
                switch byte {
                case 0x22: out += "\\\""
                case 0x5C: out += "\\\\"
                case 0x08: out += "\\b"
                case 0x0C: out += "\\f"
                case 0x0A: out += "\\n"
                case 0x0D: out += "\\r"
                case 0x09: out += "\\t"
                default:
                    let hex = String(byte, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
                plainStart = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        out += Substring(utf8[plainStart..<utf8.endIndex])
        out += "\""
    }
}

/// A strict RFC 8259 parser over UTF-8 bytes that gives up (returns `nil`) on anything unusual.
struct FastJSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    var depth = 0
    /// Deeper documents are left to `JSONDecoder` (and its own limit).
    static let maximumDepth = 64

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func document() -> JSONValue? {
        skipWhitespace()
        guard let value = value() else { return nil }
        skipWhitespace()
        // Not a ternary: JSONValue is ExpressibleByNilLiteral, so `nil` there would be `.null`.
        guard position == bytes.count else { return Optional<JSONValue>.none }
        return value
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func value() -> JSONValue? {
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"):
            guard literal("true") else { return Optional<JSONValue>.none }
            return .bool(true)
        case UInt8(ascii: "f"):
            guard literal("false") else { return Optional<JSONValue>.none }
            return .bool(false)
        case UInt8(ascii: "n"):
            guard literal("null") else { return Optional<JSONValue>.none }
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return nil
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for offset in 0..<count where bytes[position + offset] != word.utf8Start[offset] { return false }
        position += count
        return true
    }

    private mutating func object() -> JSONValue? {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { return nil }
        position += 1
        var fields: [String: JSONValue] = [:]
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return .object(fields)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let key = string() else { return nil }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
            position += 1
            skipWhitespace()
            // A repeated key is left to JSONDecoder, which decides which one it keeps.
            guard let field = value(), fields.index(forKey: key) == nil else { return nil }
            fields[key] = field
            skipWhitespace()
            guard position < bytes.count else { return nil }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            guard bytes[position] == UInt8(ascii: "}") else { return nil }
            position += 1
            return .object(fields)
        }
    }

    private mutating func array() -> JSONValue? {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { return nil }
        position += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            guard let item = value() else { return nil }
            items.append(item)
            skipWhitespace()
            guard position < bytes.count else { return nil }
            if bytes[position] == UInt8(ascii: ",") {
                position += 1
                continue
            }
            guard bytes[position] == UInt8(ascii: "]") else { return nil }
            position += 1
            return .array(items)
        }
    }

    /// A string literal at `position` (its opening quote).
    private mutating func string() -> String? {
        position += 1
        let start = position
        // The common case: no escape. Bytes are checked as UTF-8 by String(validating:).
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { return nil }
            position += 1
        }
        guard position < bytes.count else { return nil }
        var scalars: [UInt8] = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return String(validating: scalars, as: UTF8.self)
            }
            if byte < 0x20 { return nil }
            guard byte == UInt8(ascii: "\\") else {
                scalars.append(byte)
                position += 1
                continue
            }
            position += 1
            guard position < bytes.count else { return nil }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append(0x22)
            case UInt8(ascii: "\\"): scalars.append(0x5C)
            case UInt8(ascii: "/"): scalars.append(0x2F)
            case UInt8(ascii: "b"): scalars.append(0x08)
            case UInt8(ascii: "f"): scalars.append(0x0C)
            case UInt8(ascii: "n"): scalars.append(0x0A)
            case UInt8(ascii: "r"): scalars.append(0x0D)
            case UInt8(ascii: "t"): scalars.append(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hex4() else { return nil }
                var scalarValue = UInt32(unit)
                if (0xD800...0xDBFF).contains(unit) {
                    // A high surrogate must be followed by an escaped low one; anything else is left to JSONDecoder.
                    guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    else { return nil }
                    position += 2
                    guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                    scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(unit) {
                    return nil
                }
                // NUL and other scalars are fine; a surrogate was handled above.
                guard let scalar = Unicode.Scalar(scalarValue) else { return nil }
                UTF8.encode(scalar) { scalars.append($0) }
            default:
                return nil
            }
        }
        return nil
    }

    private mutating func hex4() -> UInt16? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    /// A number per RFC 8259's grammar; whole numbers of up to 15 digits exactly, others through `Double`,
    /// and only when finite.
    private mutating func number() -> JSONValue? {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { return nil }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            guard digits() > 0 else { return nil }
        }
        var plain = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            plain = false
            position += 1
            guard digits() > 0 else { return nil }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            plain = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits() > 0 else { return nil }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
        if plain, text.count <= 16, let whole = Int64(String(decoding: text, as: UTF8.self)) {
            // -0 stays a Double -0.0 as JSONDecoder reads it.
            if whole == 0, text.first == UInt8(ascii: "-") { return .number(-0.0) }
            return .number(Double(whole))
        }
        guard let number = Double(String(decoding: text, as: UTF8.self)), number.isFinite else { return nil }
        return .number(number)
    }

    private mutating func digits() -> Int {
        let start = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            position += 1
        }
        return position - start
    }
}
