import Testing

@testable import GatewayCore

@Suite("Phone pattern matcher")
struct PhonePatternTests {
    private func scalars(_ text: String) -> [UInt32] { text.unicodeScalars.map(\.value) }

    @Test(
        "whole-string matches follow libphonenumber's matchesEntirely",
        arguments: [
            ("[1-357-9]\\d{9}|[18]\\d{8}|8\\d{6}", "2079460958", true),
            ("[1-357-9]\\d{9}|[18]\\d{8}|8\\d{6}", "207946095", false),
            ("[1-357-9]\\d{9}|[18]\\d{8}|8\\d{6}", "8001234", true),
            ("[1-357-9]\\d{9}|[18]\\d{8}|8\\d{6}", "80012345", false),
            ("7(?:457[0-57-9]|700[01]|911[028])\\d{5}", "7457012345", true),
            ("7(?:457[0-57-9]|700[01]|911[028])\\d{5}", "7457612345", false),
            ("\\d{4,6}", "123", false), ("\\d{4,6}", "1234", true), ("\\d{4,6}", "123456", true),
            ("\\d{4,6}", "1234567", false), ("(?:0|90)?\\d{3}", "90123", true), ("(?:0|90)?\\d{3}", "0123", true),
            ("1\\d{2}(?:\\d{3})?", "123", true), ("1\\d{2}(?:\\d{3})?", "1234", false),
        ])
    func entireMatches(_ pattern: String, _ input: String, _ matches: Bool) throws {
        #expect(try PhonePattern(pattern).matchesEntirely(scalars(input)) == matches)
    }

    @Test("a prefix match with groups, as national prefix parsing uses it")
    func prefixMatchWithGroups() throws {
        // Argentina: 0 and the area code, then 15 before a mobile number.
        let argentina = try #require(PhoneRegion.named("AR"))
        #expect(argentina.nationalPrefix == "0")
        let pattern = try PhonePattern("0?(?:(11|2(?:2(?:02?|[13]|2[13-79]))|3(?:3(?:2[79]|6)))15)?")
        let match = try #require(pattern.prefixMatch(scalars("01115234567")))
        #expect(match.end == 5)
        #expect(match.range(1) == 1..<3)
        // The transform rule `9\1` makes it international: 9, the area code, then the rest.
        var out: [UInt32] = []
        PhonePattern.expand(scalars("9\\1"), with: match, in: scalars("01115234567"), into: &out)
        #expect(out == scalars("911"))
    }

    @Test("an end anchor inside a national prefix pattern")
    func endAnchor() throws {
        let pattern = try PhonePattern("([2-9]\\d{6})$|1")
        #expect(pattern.prefixMatch(scalars("5551234"))?.range(1) == 0..<7)
        #expect(pattern.prefixMatch(scalars("55512345")) == nil)
        #expect(pattern.prefixMatch(scalars("16505553434"))?.end == 1)
    }

    @Test("alternatives are tried in order and repeats are greedy unless lazy, as in Python")
    func priorities() throws {
        #expect(try PhonePattern("(1|12)").prefixMatch(scalars("123"))?.end == 1)
        #expect(try PhonePattern("(12|1)").prefixMatch(scalars("123"))?.end == 2)
        #expect(try PhonePattern("(\\d{1,3})").prefixMatch(scalars("12345"))?.end == 3)
        #expect(try PhonePattern("(\\d{1,3}?)").prefixMatch(scalars("12345"))?.end == 1)
        #expect(try PhonePattern("a*?b").prefixMatch(scalars("aaab"))?.end == 4)
    }

    @Test("search and substitution behave like Python's re.search and re.sub")
    func searchAndSubstitute() throws {
        let pattern = try PhonePattern("(\\d{3})(\\d{4})")
        let formatted = pattern.replacing(in: scalars("5551234"), with: scalars("\\1-\\2"))
        #expect(formatted == scalars("555-1234"))
        let search = try PhonePattern("x(\\d+)")
        #expect(search.firstMatch(in: scalars("12 x34"))?.range(1) == 4..<6)
        #expect(search.firstMatch(in: scalars("1234")) == nil)
    }

    @Test("case-insensitive Unicode classes for the extension patterns")
    func ignoreCase() throws {
        let pattern = try PhonePattern(
            "(?:e?xt(?:ensi(?:o\u{0301}?|\u{00F3}))?n?|anexo)[:\\.]?(\\d+)", options: [.ignoreCase, .unicodeDigits])
        #expect(pattern.entireMatch(scalars("EXT.12"))?.range(1) == 4..<6)
        #expect(pattern.entireMatch(scalars("Extensión12")) != nil)
        #expect(pattern.entireMatch(scalars("ext１２")) != nil)
        #expect(pattern.entireMatch(scalars("ex12")) == nil)
    }

    @Test("patterns with open repeats stay fast on long inputs")
    func noCatastrophicBacktracking() throws {
        let pattern = try PhonePattern("(?:a*)*b")
        let input = [UInt32](repeating: 0x61, count: 200)
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(!pattern.matchesEntirely(input)) }
        #expect(elapsed < .seconds(1))
    }

    @Test("syntax errors are reported, not trapped", arguments: ["(12", "[12", "\\1", "*1", "12)"])
    func syntaxErrors(_ pattern: String) {
        #expect(throws: PhonePattern.SyntaxError.self) { try PhonePattern(pattern) }
    }
}
