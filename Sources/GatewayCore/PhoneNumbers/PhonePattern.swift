/// A regular expression of the subset libphonenumber uses, compiled into a small backtracking program.
///
/// libphonenumber's patterns are simple: literals, classes, `\d`, groups, alternation and counted or
/// open repeats, with no backreferences. Compiling them ourselves (rather than going through
/// `NSRegularExpression`) keeps a match to a few hundred nanoseconds on the short strings phone numbers
/// are. Matching follows Python's `re` (and Java's): leftmost alternative first, greedy repeats unless
/// marked lazy, so captures come out as libphonenumber expects them.
///
/// Input is an array of Unicode scalar values. National numbers are plain ASCII digits, so for metadata
/// patterns `\d` means `[0-9]`; the parser's own patterns use ``Options/unicodeDigits`` as Python does.
final class PhonePattern: Sendable {
    struct Options: OptionSet, Sendable {
        let rawValue: UInt8
        /// Letters match regardless of case (Python's `re.IGNORECASE`).
        static let ignoreCase = Options(rawValue: 1)
        /// `\d` matches every Unicode decimal digit, not only ASCII ones (Python's `re.UNICODE`).
        static let unicodeDigits = Options(rawValue: 2)
    }

    /// Why a pattern did not compile. Patterns come from the generated metadata and from source, so this
    /// is a programming error surfaced by the metadata tests.
    struct SyntaxError: Error, Sendable, CustomStringConvertible {
        let pattern: String
        let reason: String
        var description: String { "bad pattern \(pattern): \(reason)" }
    }

    /// The result of a successful match: where it ends and what each group captured.
    struct Match: Sendable {
        /// Slot `2 * i` and `2 * i + 1` are the start and end of group `i` (group 0 is the whole match);
        /// -1 where the group did not take part.
        var slots: [Int]

        var start: Int { slots[0] }
        var end: Int { slots[1] }

        /// The range of group `index`, or nil when it did not take part in the match.
        func range(_ index: Int) -> Range<Int>? {
            guard 2 * index + 1 < slots.count else { return nil }
            let lower = slots[2 * index]
            let upper = slots[2 * index + 1]
            guard lower >= 0, upper >= lower else { return nil }
            return lower..<upper
        }

        var groupCount: Int { slots.count / 2 - 1 }
    }

    let source: String
    private let program: [Instruction]
    private let sets: [ScalarSet]
    /// Number of capturing groups, not counting the whole match.
    let captureCount: Int
    /// For patterns over digits only: the digits a match can start with (bit `d` for digit `d`); nil when
    /// the pattern can start with anything or match the empty string.
    private let firstDigits: UInt16?
    /// Whether the program has unbounded loops, so a visited table is needed to bound backtracking.
    private let needsVisitedTable: Bool

    init(_ source: String, options: Options = []) throws(SyntaxError) {
        self.source = source
        var parser = Parser(scalars: Array(source.unicodeScalars), source: source, options: options)
        let node = try parser.parseWhole()
        var compiler = Compiler(options: options)
        compiler.emit(.group(node, capture: 0))
        compiler.program.append(Instruction(op: .match))
        self.program = Array(compiler.program)
        self.sets = compiler.sets
        self.captureCount = parser.captureCount
        self.needsVisitedTable = node.hasUnboundedRepeat
        if !options.contains(.unicodeDigits), let first = node.firstDigits, !node.isNullable {
            self.firstDigits = first
        } else {
            self.firstDigits = nil
        }
    }

    // MARK: - Matching

    /// Whether the whole of `input` matches (Python's `fullmatch`, libphonenumber's `matchesEntirely`).
    func matchesEntirely(_ input: [UInt32]) -> Bool {
        if let firstDigits, !Self.startsWith(input, oneOf: firstDigits) { return false }
        return execute(input, from: 0, searching: false, mustReachEnd: true, captures: false) != nil
    }

    /// Whether a prefix of `input` matches (Python's `match`, libphonenumber's `lookingAt`).
    func matchesPrefix(_ input: [UInt32]) -> Bool {
        if let firstDigits, !Self.startsWith(input, oneOf: firstDigits) { return false }
        return execute(input, from: 0, searching: false, mustReachEnd: false, captures: false) != nil
    }

    /// The match at the start of `input`, with its groups (Python's `match`).
    func prefixMatch(_ input: [UInt32]) -> Match? {
        if let firstDigits, !Self.startsWith(input, oneOf: firstDigits) { return nil }
        return execute(input, from: 0, searching: false, mustReachEnd: false, captures: true)
    }

    /// The whole-input match with its groups (Python's `fullmatch`).
    func entireMatch(_ input: [UInt32]) -> Match? {
        if let firstDigits, !Self.startsWith(input, oneOf: firstDigits) { return nil }
        return execute(input, from: 0, searching: false, mustReachEnd: true, captures: true)
    }

    /// The leftmost match at or after `from` (Python's `search`).
    func firstMatch(in input: [UInt32], from: Int = 0) -> Match? {
        execute(input, from: from, searching: true, mustReachEnd: false, captures: true)
    }

    /// Python's `re.sub(pattern, template, input, count)`: replaces the leftmost non-overlapping matches;
    /// `\N` in the template is group N (empty when the group did not take part).
    func replacing(in input: [UInt32], with template: [UInt32], count: Int = 0) -> [UInt32] {
        var output: [UInt32] = []
        output.reserveCapacity(input.count + template.count)
        var position = 0
        var searchFrom = 0
        var replaced = 0
        while searchFrom <= input.count, count == 0 || replaced < count,
            let match = firstMatch(in: input, from: searchFrom)
        {
            output.append(contentsOf: input[position..<match.start])
            Self.expand(template, with: match, in: input, into: &output)
            position = match.end
            replaced += 1
            // An empty match moves on by one, as Python does.
            searchFrom = match.end == match.start ? match.end + 1 : match.end
        }
        if position < input.count { output.append(contentsOf: input[position...]) }
        return output
    }

    /// Writes `template` with `\N` replaced by group N of `match`.
    static func expand(_ template: [UInt32], with match: Match, in input: [UInt32], into output: inout [UInt32]) {
        var index = 0
        while index < template.count {
            let scalar = template[index]
            if scalar == 0x5C, index + 1 < template.count, (0x30...0x39).contains(template[index + 1]) {
                let group = Int(template[index + 1] - 0x30)
                if let range = match.range(group) { output.append(contentsOf: input[range]) }
                index += 2
            } else {
                output.append(scalar)
                index += 1
            }
        }
    }

    private static func startsWith(_ input: [UInt32], oneOf digits: UInt16) -> Bool {
        guard let first = input.first, first &- 0x30 < 10 else { return false }
        return digits & (1 << UInt16(first &- 0x30)) != 0
    }

    /// Sets up the scratch memory (on the stack when small) and runs the program at `from`, or at every
    /// position from there on when `searching`.
    private func execute(_ input: [UInt32], from: Int, searching: Bool, mustReachEnd: Bool, captures: Bool)
        -> Match?
    {
        let slotCount = captures ? 2 * (captureCount + 1) : 0
        let width = input.count + 1
        let visitedWords = needsVisitedTable ? (program.count * width + 63) / 64 : 0
        // Without loops a path visits each instruction at most once, so it pushes at most one entry per
        // instruction, plus one capture restore per save.
        let stackCapacity = needsVisitedTable ? program.count * width * 2 + 2 : program.count * 2 + 2
        return input.withUnsafeBufferPointer { text in
            program.withUnsafeBufferPointer { code in
                withUnsafeTemporaryAllocation(of: UInt64.self, capacity: max(1, visitedWords)) { visited in
                    withUnsafeTemporaryAllocation(of: Int.self, capacity: max(1, slotCount)) { slots in
                        withUnsafeTemporaryAllocation(of: (Int32, Int32).self, capacity: stackCapacity) { stack in
                            if visitedWords > 0 { visited.initialize(repeating: 0) }
                            var start = from
                            while start <= text.count {
                                if slotCount > 0 { slots.initialize(repeating: -1) }
                                if let end = run(
                                    text, code: code, at: start, mustReachEnd: mustReachEnd, slots: slots,
                                    slotCount: slotCount, stack: stack, visited: visited, width: width)
                                {
                                    if slotCount == 0 { return Match(slots: [start, end]) }
                                    slots[0] = start
                                    slots[1] = end
                                    return Match(slots: Array(slots[0..<slotCount]))
                                }
                                if !searching { return nil }
                                start += 1
                            }
                            return nil
                        }
                    }
                }
            }
        }
    }

    /// Runs the program anchored at `start`; returns where the match ends, or nil. A state (instruction,
    /// position) that failed once fails again whatever the start (there are no backreferences), so the
    /// visited table is shared by the starts of a search.
    private func run(
        _ input: UnsafeBufferPointer<UInt32>, code: UnsafeBufferPointer<Instruction>, at start: Int,
        mustReachEnd: Bool, slots: UnsafeMutableBufferPointer<Int>, slotCount: Int,
        stack: UnsafeMutableBufferPointer<(Int32, Int32)>, visited: UnsafeMutableBufferPointer<UInt64>, width: Int
    ) -> Int? {
        let count = input.count
        let checkVisited = needsVisitedTable
        // A backtrack entry is (pc, position); a negative pc -(slot + 1) restores a capture slot instead.
        var depth = 0
        var pc = 0
        var position = start
        while true {
            var failed = false
            if checkVisited {
                let key = pc * width + position
                let bit = UInt64(1) << UInt64(key & 63)
                if visited[key >> 6] & bit != 0 {
                    failed = true
                } else {
                    visited[key >> 6] |= bit
                }
            }
            if !failed {
                let instruction = code[pc]
                switch instruction.op {
                case .digits:
                    if position < count, input[position] &- 0x30 < 10,
                        UInt32(instruction.a) & (1 << (input[position] &- 0x30)) != 0
                    {
                        position += 1
                        pc += 1
                    } else {
                        failed = true
                    }
                case .scalar:
                    if position < count, input[position] == UInt32(instruction.a) {
                        position += 1
                        pc += 1
                    } else {
                        failed = true
                    }
                case .scalarIgnoringCase:
                    if position < count, CaseFolding.lower(input[position]) == UInt32(instruction.a) {
                        position += 1
                        pc += 1
                    } else {
                        failed = true
                    }
                case .set:
                    if position < count, sets[Int(instruction.a)].contains(input[position]) {
                        position += 1
                        pc += 1
                    } else {
                        failed = true
                    }
                case .any:
                    if position < count, input[position] != 0x0A {
                        position += 1
                        pc += 1
                    } else {
                        failed = true
                    }
                case .split:
                    guard depth < stack.count else { return nil }
                    stack[depth] = (instruction.b, Int32(position))
                    depth += 1
                    pc = Int(instruction.a)
                case .jump:
                    pc = Int(instruction.a)
                case .save:
                    let slot = Int(instruction.a)
                    if slot < slotCount {
                        guard depth < stack.count else { return nil }
                        stack[depth] = (Int32(-(slot + 1)), Int32(slots[slot]))
                        depth += 1
                        slots[slot] = position
                    }
                    pc += 1
                case .lineStart:
                    if position == 0 { pc += 1 } else { failed = true }
                case .lineEnd:
                    if position == count || (position == count - 1 && input[position] == 0x0A) {
                        pc += 1
                    } else {
                        failed = true
                    }
                case .match:
                    if mustReachEnd && position != count {
                        failed = true
                    } else {
                        return position
                    }
                }
            }
            if failed {
                // Backtrack: undo captures until the next alternative.
                var resumed = false
                while depth > 0 {
                    depth -= 1
                    let (entryPC, entryPosition) = stack[depth]
                    if entryPC < 0 {
                        slots[Int(-entryPC) - 1] = Int(entryPosition)
                    } else {
                        pc = Int(entryPC)
                        position = Int(entryPosition)
                        resumed = true
                        break
                    }
                }
                if !resumed { return nil }
            }
        }
    }
}

// MARK: - Program

private struct Instruction {
    enum Op: UInt8 {
        /// Matches an ASCII digit whose bit is set in `a`.
        case digits
        case scalar
        /// `a` holds the lower-cased scalar.
        case scalarIgnoringCase
        /// `a` indexes the pattern's sets.
        case set
        case any
        /// Try `a` first, then `b`.
        case split
        case jump
        case save
        case lineStart
        case lineEnd
        case match
    }

    var op: Op
    var a: Int32 = 0
    var b: Int32 = 0
}

/// A character class: ranges plus the Unicode classes `\d`, `\w`, `\s`, possibly negated.
private struct ScalarSet: Sendable {
    var ranges: [ClosedRange<UInt32>] = []
    var digit = false
    var nonDigit = false
    var word = false
    var nonWord = false
    var space = false
    var negated = false
    var ignoreCase = false

    func contains(_ scalar: UInt32) -> Bool {
        var hit = directlyContains(scalar)
        if !hit && ignoreCase {
            let lower = CaseFolding.lower(scalar)
            let upper = CaseFolding.upper(scalar)
            hit = (lower != scalar && directlyContains(lower)) || (upper != scalar && directlyContains(upper))
        }
        return hit != negated
    }

    private func directlyContains(_ scalar: UInt32) -> Bool {
        for range in ranges where range.contains(scalar) { return true }
        if digit && UnicodeClasses.isDecimalDigit(scalar) { return true }
        if nonDigit && !UnicodeClasses.isDecimalDigit(scalar) { return true }
        if word && UnicodeClasses.isWord(scalar) { return true }
        if nonWord && !UnicodeClasses.isWord(scalar) { return true }
        if space && UnicodeClasses.isSpace(scalar) { return true }
        return false
    }
}

/// The Unicode character classes as Python's `re` defines them for `str` patterns.
enum UnicodeClasses {
    /// `\d`: general category Nd.
    static func isDecimalDigit(_ scalar: UInt32) -> Bool {
        if scalar < 0x80 { return scalar &- 0x30 < 10 }
        guard let value = Unicode.Scalar(scalar) else { return false }
        return value.properties.numericType == .decimal
    }

    /// `\w`: letters, numbers and the underscore (Python's `str.isalnum()` or `_`).
    static func isWord(_ scalar: UInt32) -> Bool {
        if scalar < 0x80 {
            return scalar &- 0x30 < 10 || (scalar | 0x20) &- 0x61 < 26 || scalar == 0x5F
        }
        guard let value = Unicode.Scalar(scalar) else { return false }
        if value.properties.numericType != nil { return true }
        switch value.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return true
        default: return false
        }
    }

    /// `\s`.
    static func isSpace(_ scalar: UInt32) -> Bool {
        if scalar < 0x80 { return scalar == 0x20 || (0x09...0x0D).contains(scalar) || (0x1C...0x1F).contains(scalar) }
        guard let value = Unicode.Scalar(scalar) else { return false }
        return value.properties.isWhitespace
    }
}

/// Simple one-to-one case mappings, enough for `re.IGNORECASE`.
enum CaseFolding {
    static func lower(_ scalar: UInt32) -> UInt32 {
        if scalar < 0x80 { return (0x41...0x5A).contains(scalar) ? scalar | 0x20 : scalar }
        guard let value = Unicode.Scalar(scalar) else { return scalar }
        let mapped = value.properties.lowercaseMapping.unicodeScalars
        return mapped.count == 1 ? mapped.first.map { $0.value } ?? scalar : scalar
    }

    static func upper(_ scalar: UInt32) -> UInt32 {
        if scalar < 0x80 { return (0x61...0x7A).contains(scalar) ? scalar & ~0x20 : scalar }
        guard let value = Unicode.Scalar(scalar) else { return scalar }
        let mapped = value.properties.uppercaseMapping.unicodeScalars
        return mapped.count == 1 ? mapped.first.map { $0.value } ?? scalar : scalar
    }
}

// MARK: - Syntax tree

private indirect enum Node {
    case empty
    case scalar(UInt32)
    case digits(UInt16)
    case set(ScalarSet)
    case any
    case concat([Node])
    case alternation([Node])
    case group(Node, capture: Int?)
    case repeated(Node, min: Int, max: Int?, greedy: Bool)
    case lineStart
    case lineEnd

    var isNullable: Bool {
        switch self {
        case .empty, .lineStart, .lineEnd: return true
        case .scalar, .digits, .set, .any: return false
        case .concat(let nodes): return nodes.allSatisfy(\.isNullable)
        case .alternation(let nodes): return nodes.contains(where: \.isNullable)
        case .group(let node, _): return node.isNullable
        case .repeated(let node, let min, _, _): return min == 0 || node.isNullable
        }
    }

    /// The digits a match can start with, when the node is made of digits only.
    var firstDigits: UInt16? {
        switch self {
        case .digits(let mask): return mask
        case .scalar(let value): return value &- 0x30 < 10 ? 1 << UInt16(value - 0x30) : nil
        case .empty, .set, .any, .lineStart, .lineEnd: return nil
        case .group(let node, _): return node.firstDigits
        case .repeated(let node, _, _, _): return node.firstDigits
        case .alternation(let nodes):
            var mask: UInt16 = 0
            for node in nodes {
                guard let first = node.firstDigits else { return nil }
                mask |= first
            }
            return mask
        case .concat(let nodes):
            var mask: UInt16 = 0
            for node in nodes {
                guard let first = node.firstDigits else { return nil }
                mask |= first
                if !node.isNullable { return mask }
            }
            return nil
        }
    }

    var hasUnboundedRepeat: Bool {
        switch self {
        case .empty, .scalar, .digits, .set, .any, .lineStart, .lineEnd: return false
        case .concat(let nodes), .alternation(let nodes): return nodes.contains(where: \.hasUnboundedRepeat)
        case .group(let node, _): return node.hasUnboundedRepeat
        case .repeated(let node, _, let max, _): return max == nil || node.hasUnboundedRepeat
        }
    }
}

private struct Parser {
    let scalars: [Unicode.Scalar]
    let source: String
    let options: PhonePattern.Options
    var index = 0
    var captureCount = 0

    init(scalars: [Unicode.Scalar], source: String, options: PhonePattern.Options) {
        self.scalars = scalars
        self.source = source
        self.options = options
    }

    mutating func parseWhole() throws(PhonePattern.SyntaxError) -> Node {
        let node = try parseAlternation()
        if index < scalars.count { throw error("unexpected )") }
        return node
    }

    private func error(_ reason: String) -> PhonePattern.SyntaxError {
        PhonePattern.SyntaxError(pattern: source, reason: reason)
    }

    private var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private mutating func parseAlternation() throws(PhonePattern.SyntaxError) -> Node {
        var branches = [try parseConcatenation()]
        while current == "|" {
            index += 1
            branches.append(try parseConcatenation())
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    private mutating func parseConcatenation() throws(PhonePattern.SyntaxError) -> Node {
        var items: [Node] = []
        while let scalar = current, scalar != "|", scalar != ")" {
            items.append(try parseRepeat())
        }
        switch items.count {
        case 0: return .empty
        case 1: return items[0]
        default: return .concat(items)
        }
    }

    private mutating func parseRepeat() throws(PhonePattern.SyntaxError) -> Node {
        var node = try parseAtom()
        while let scalar = current {
            var bounds: (Int, Int?)
            switch scalar {
            case "*":
                bounds = (0, nil)
                index += 1
            case "+":
                bounds = (1, nil)
                index += 1
            case "?":
                bounds = (0, 1)
                index += 1
            case "{":
                guard let counted = parseCount() else { return node }
                bounds = counted
            default: return node
            }
            var greedy = true
            if current == "?" {
                greedy = false
                index += 1
            }
            node = .repeated(node, min: bounds.0, max: bounds.1, greedy: greedy)
        }
        return node
    }

    /// `{n}`, `{n,}` or `{n,m}`; nil (and nothing consumed) when the brace is a literal.
    private mutating func parseCount() -> (Int, Int?)? {
        let start = index
        index += 1
        func number() -> Int? {
            var value: Int?
            while let scalar = current, scalar.value &- 0x30 < 10 {
                value = (value ?? 0) * 10 + Int(scalar.value - 0x30)
                index += 1
            }
            return value
        }
        guard let low = number() else {
            index = start
            return nil
        }
        var high: Int? = low
        if current == "," {
            index += 1
            high = number()
        }
        guard current == "}" else {
            index = start
            return nil
        }
        index += 1
        return (low, high)
    }

    private mutating func parseAtom() throws(PhonePattern.SyntaxError) -> Node {
        guard let scalar = current else { throw error("unexpected end") }
        index += 1
        switch scalar {
        case "(":
            var capture: Int?
            if current == "?" {
                guard index + 1 < scalars.count, scalars[index + 1] == ":" else { throw error("unsupported group") }
                index += 2
            } else {
                captureCount += 1
                capture = captureCount
            }
            let inner = try parseAlternation()
            guard current == ")" else { throw error("missing )") }
            index += 1
            return .group(inner, capture: capture)
        case "[": return try parseClass()
        case ".": return .any
        case "^": return .lineStart
        case "$": return .lineEnd
        case "\\": return try parseEscape(inClass: false).node(options: options)
        case "*", "+", "?": throw error("nothing to repeat")
        default: return literal(scalar.value)
        }
    }

    private func literal(_ value: UInt32) -> Node {
        if value &- 0x30 < 10 { return .digits(1 << UInt16(value - 0x30)) }
        return .scalar(value)
    }

    private enum Escape {
        case scalar(UInt32)
        case digit, nonDigit, word, nonWord, space

        func node(options: PhonePattern.Options) -> Node {
            switch self {
            case .scalar(let value):
                return value &- 0x30 < 10 ? .digits(1 << UInt16(value - 0x30)) : .scalar(value)
            case .digit:
                if options.contains(.unicodeDigits) {
                    var set = ScalarSet()
                    set.digit = true
                    return .set(set)
                }
                return .digits(0x3FF)
            case .nonDigit:
                var set = ScalarSet()
                set.nonDigit = true
                return .set(set)
            case .word:
                var set = ScalarSet()
                set.word = true
                return .set(set)
            case .nonWord:
                var set = ScalarSet()
                set.nonWord = true
                return .set(set)
            case .space:
                var set = ScalarSet()
                set.space = true
                return .set(set)
            }
        }
    }

    private mutating func parseEscape(inClass: Bool) throws(PhonePattern.SyntaxError) -> Escape {
        guard let scalar = current else { throw error("trailing backslash") }
        index += 1
        switch scalar {
        case "d": return .digit
        case "D": return .nonDigit
        case "w": return .word
        case "W": return .nonWord
        case "s": return .space
        case "t": return .scalar(0x09)
        case "n": return .scalar(0x0A)
        default:
            if scalar.properties.isAlphabetic || (!inClass && scalar.value &- 0x30 < 10) {
                throw error("unsupported escape \\\(scalar)")
            }
            return .scalar(scalar.value)
        }
    }

    private mutating func parseClass() throws(PhonePattern.SyntaxError) -> Node {
        var set = ScalarSet()
        if current == "^" {
            set.negated = true
            index += 1
        }
        var first = true
        while true {
            guard let scalar = current else { throw error("missing ]") }
            if scalar == "]" && !first {
                index += 1
                break
            }
            first = false
            index += 1
            var low: UInt32
            if scalar == "\\" {
                switch try parseEscape(inClass: true) {
                case .scalar(let value): low = value
                case .digit:
                    if options.contains(.unicodeDigits) { set.digit = true } else { set.ranges.append(0x30...0x39) }
                    continue
                case .nonDigit:
                    set.nonDigit = true
                    continue
                case .word:
                    set.word = true
                    continue
                case .nonWord:
                    set.nonWord = true
                    continue
                case .space:
                    set.space = true
                    continue
                }
            } else {
                low = scalar.value
            }
            // A range, unless the dash is the last character of the class.
            if current == "-", index + 1 < scalars.count, scalars[index + 1] != "]" {
                index += 1
                guard var high = current?.value else { throw error("missing ]") }
                index += 1
                if high == 0x5C {
                    guard case .scalar(let value) = try parseEscape(inClass: true) else {
                        throw error("bad range")
                    }
                    high = value
                }
                guard low <= high else { throw error("bad range") }
                set.ranges.append(low...high)
            } else {
                set.ranges.append(low...low)
            }
        }
        if options.contains(.ignoreCase) { set.ignoreCase = true }
        // Digit-only classes become a digit mask, the fast path for metadata patterns.
        if !set.negated && !set.digit && !set.nonDigit && !set.word && !set.nonWord && !set.space,
            set.ranges.allSatisfy({ $0.lowerBound >= 0x30 && $0.upperBound <= 0x39 })
        {
            var mask: UInt16 = 0
            for range in set.ranges {
                for value in range { mask |= 1 << UInt16(value - 0x30) }
            }
            return .digits(mask)
        }
        return .set(set)
    }
}

private struct Compiler {
    let options: PhonePattern.Options
    var program = ContiguousArray<Instruction>()
    var sets: [ScalarSet] = []

    init(options: PhonePattern.Options) {
        self.options = options
    }

    private var here: Int32 { Int32(program.count) }

    mutating func emit(_ node: Node) {
        switch node {
        case .empty:
            break
        case .scalar(let value):
            if options.contains(.ignoreCase), CaseFolding.lower(value) != value || CaseFolding.upper(value) != value {
                program.append(Instruction(op: .scalarIgnoringCase, a: Int32(CaseFolding.lower(value))))
            } else {
                program.append(Instruction(op: .scalar, a: Int32(value)))
            }
        case .digits(let mask):
            program.append(Instruction(op: .digits, a: Int32(mask)))
        case .set(let set):
            program.append(Instruction(op: .set, a: Int32(sets.count)))
            sets.append(set)
        case .any:
            program.append(Instruction(op: .any))
        case .lineStart:
            program.append(Instruction(op: .lineStart))
        case .lineEnd:
            program.append(Instruction(op: .lineEnd))
        case .concat(let nodes):
            for node in nodes { emit(node) }
        case .alternation(let branches):
            // split L1, next; L1: branch; jump end; next: split ... ; last branch
            var jumps: [Int] = []
            for (offset, branch) in branches.enumerated() {
                if offset < branches.count - 1 {
                    let split = program.count
                    program.append(Instruction(op: .split))
                    program[split].a = here
                    emit(branch)
                    jumps.append(program.count)
                    program.append(Instruction(op: .jump))
                    program[split].b = here
                } else {
                    emit(branch)
                }
            }
            for jump in jumps { program[jump].a = here }
        case .group(let inner, let capture):
            if let capture { program.append(Instruction(op: .save, a: Int32(2 * capture))) }
            emit(inner)
            if let capture { program.append(Instruction(op: .save, a: Int32(2 * capture + 1))) }
        case .repeated(let inner, let min, let max, let greedy):
            for _ in 0..<min { emit(inner) }
            if let max {
                // Each optional copy: split(body, end); nested so that once one is skipped, all are.
                var splits: [Int] = []
                for _ in min..<Swift.max(min, max) {
                    splits.append(program.count)
                    program.append(Instruction(op: .split))
                    let body = here
                    emit(inner)
                    setSplit(splits[splits.count - 1], body: body, greedy: greedy)
                }
                for split in splits { finishSplit(split, greedy: greedy) }
            } else {
                let loop = program.count
                program.append(Instruction(op: .split))
                let body = here
                emit(inner)
                program.append(Instruction(op: .jump, a: Int32(loop)))
                setSplit(loop, body: body, greedy: greedy)
                finishSplit(loop, greedy: greedy)
            }
        }
    }

    /// Records the body target of a repeat's split; the exit target is filled by ``finishSplit``.
    private mutating func setSplit(_ split: Int, body: Int32, greedy: Bool) {
        if greedy { program[split].a = body } else { program[split].b = body }
    }

    private mutating func finishSplit(_ split: Int, greedy: Bool) {
        if greedy { program[split].b = here } else { program[split].a = here }
    }
}
