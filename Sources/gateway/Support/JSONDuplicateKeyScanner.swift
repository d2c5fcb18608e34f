import Foundation

/// Finds the first key that appears twice in one JSON object, at any depth.
///
/// Foundation's `JSONDecoder` keeps one of two equal keys without a word, so a client's
/// `{"to": "+1…", "to": "+44…"}` would be read as whichever it kept. This scan runs over bytes that
/// already decoded as JSON: it tracks the keys of each open object on a stack (no recursion, so depth
/// costs no native stack) and compares keys after unescaping, as the decoder does.
enum JSONDuplicateKeyScanner {
    /// The path of the first repeated key (`to`, `channel_options.prompt.message`, `details[1].label`),
    /// or nil when every object's keys are distinct.
    static func firstDuplicate(in data: Data) -> String? {
        data.withUnsafeBytes { raw in firstDuplicate(in: raw.bindMemory(to: UInt8.self)) }
    }

    private enum Container {
        /// An object: the keys seen so far and the one whose value is being read.
        case object(keys: Set<String>, current: String?)
        /// An array: the index of the element being read.
        case array(index: Int)
    }

    private static func firstDuplicate(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var stack: [Container] = []
        var index = 0
        // In an object, a string is a key when it is followed by `:`; otherwise it is a value.
        var expectingKey = false
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"):
                stack.append(.object(keys: [], current: nil))
                expectingKey = true
                index += 1
            case UInt8(ascii: "["):
                stack.append(.array(index: 0))
                expectingKey = false
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = stack.popLast()
                expectingKey = false
                index += 1
            case UInt8(ascii: ","):
                if case .array(let position) = stack.last {
                    stack[stack.count - 1] = .array(index: position + 1)
                    expectingKey = false
                } else {
                    expectingKey = true
                }
                index += 1
            case UInt8(ascii: "\""):
                let start = index
                var hasEscape = false
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    if bytes[index] == UInt8(ascii: "\\") {
                        hasEscape = true
                        index += 1
                    }
                    index += 1
                }
                index += 1
                guard expectingKey, case .object(var keys, _) = stack.last else { continue }
                let token = UnsafeBufferPointer(rebasing: bytes[start..<min(index, bytes.count)])
                let key = decodeKey(token, hasEscape: hasEscape)
                if keys.contains(key) {
                    stack[stack.count - 1] = .object(keys: keys, current: key)
                    return path(stack)
                }
                keys.insert(key)
                stack[stack.count - 1] = .object(keys: keys, current: key)
                expectingKey = false
            default:
                index += 1
            }
        }
        return nil
    }

    private static func decodeKey(_ token: UnsafeBufferPointer<UInt8>, hasEscape: Bool) -> String {
        guard token.count >= 2 else { return "" }
        guard hasEscape else { return String(decoding: token[1..<(token.count - 1)], as: UTF8.self) }
        // Escapes (`\"`, `\u00e9`, surrogate pairs) are rare in keys: let the decoder read the one string.
        return (try? JSONDecoder().decode(String.self, from: Data(token)))
            ?? String(decoding: token[1..<(token.count - 1)], as: UTF8.self)
    }

    private static func path(_ stack: [Container]) -> String {
        var path = ""
        for container in stack {
            switch container {
            case .object(_, let current?): path += path.isEmpty ? current : ".\(current)"
            case .object(_, nil): break
            case .array(let index): path += "[\(index)]"
            }
        }
        return path
    }
}
