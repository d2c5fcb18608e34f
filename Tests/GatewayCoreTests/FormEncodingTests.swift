import Foundation
import Testing

@testable import GatewayCore

@Suite("FormEncoding")
struct FormEncodingTests {
    @Test("the plus of an E.164 number is sent as %2B, never as a plus that reads as a space")
    func plusIsEscaped() {
        #expect(FormEncoding.encode([("To", "+16505553434")]) == "To=%2B16505553434")
        #expect(FormEncoding.decode("To=%2B16505553434") == ["To": "+16505553434"])
    }

    @Test("spaces are sent as %20")
    func spaceIsEscaped() {
        #expect(FormEncoding.escape("a b") == "a%20b")
    }

    @Test("unreserved characters pass through unchanged")
    func unreservedUnchanged() {
        let unreserved = "ABCXYZabcxyz0189-._~"
        #expect(FormEncoding.escape(unreserved) == unreserved)
    }

    @Test(
        "reserved and unsafe characters are percent-encoded",
        arguments: [
            ("&", "%26"), ("=", "%3D"), ("+", "%2B"), ("%", "%25"), ("/", "%2F"), ("?", "%3F"), ("#", "%23"),
            ("\"", "%22"), ("{", "%7B"), ("}", "%7D"), (":", "%3A"), (",", "%2C"), ("\n", "%0A"),
        ])
    func reservedEscaped(_ raw: String, _ escaped: String) {
        #expect(FormEncoding.escape(raw) == escaped)
    }

    @Test("non-ASCII text is encoded as percent-escaped UTF-8")
    func unicode() {
        #expect(FormEncoding.escape("José") == "Jos%C3%A9")
        #expect(FormEncoding.escape("日本") == "%E6%97%A5%E6%9C%AC")
        #expect(FormEncoding.escape("١٢٣") == "%D9%A1%D9%A2%D9%A3")  // non-ASCII digits are not unreserved
    }

    @Test("escaping by bytes gives what Foundation's addingPercentEncoding gave with the unreserved set")
    func escapeAgreesWithFoundation() {
        var allowed = CharacterSet.alphanumerics.intersection(
            CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        var generator = SystemRandomNumberGenerator()
        let pool: [Character] = Array("aZ09-._~ +&=%/?#\"{}:,\n\t\u{7F}éß日本١😀🇬🇧\u{301}")
        for length in 0..<400 {
            let text = String((0..<(length % 24)).map { _ in pool.randomElement(using: &generator)! })
            #expect(FormEncoding.escape(text) == text.addingPercentEncoding(withAllowedCharacters: allowed))
        }
    }

    @Test("a body splits into its pairs by bytes: empty pairs skipped, a key alone is empty, the first `=` splits")
    func pairs() {
        let pairs = FormEncoding.decodePairs(
            "To=%2B447700900123&&Channel=sms&Flag&Tags=a%3Db=c&Name=Jos%C3%A9+L&=x&Locale=")
        #expect(pairs.map(\.key) == ["To", "Channel", "Flag", "Tags", "Name", "", "Locale"])
        #expect(pairs.map(\.value) == ["+447700900123", "sms", "", "a=b=c", "José L", "x", ""])
        // An `=` followed by a combining mark is one character but still the separator.
        #expect(FormEncoding.decodePairs("a=\u{301}b").map(\.value) == ["\u{301}b"])
        #expect(FormEncoding.decodePairs("Name=日本&x=😀").map(\.value) == ["日本", "😀"])
        #expect(FormEncoding.decodePairs("").isEmpty && FormEncoding.decodePairs("&&").isEmpty)
    }

    @Test("pairs are encoded in the order given")
    func order() {
        #expect(FormEncoding.encode([("b", "2"), ("a", "1"), ("c", "")]) == "b=2&a=1&c=")
        #expect(FormEncoding.encode([]) == "")
    }

    @Test(
        "values survive an encode-decode round trip",
        arguments: [
            "+16505553434",
            "a value with spaces",
            "a+b=c&d",
            "100% sure",
            "José 日本 ١٢٣ 😀",
            #"{"amount":"12.50","note":"a+b & c=d","to":"+16505553434"}"#,
            "",
            "line one\nline two",
        ])
    func roundTrip(_ value: String) {
        let body = FormEncoding.encode([("Key With Space+", value), ("Other", "x")])
        #expect(FormEncoding.decode(body) == ["Key With Space+": value, "Other": "x"])
    }

    @Test("decoding reads a plus as a space")
    func plusDecodesAsSpace() {
        #expect(FormEncoding.decode("Body=hello+world&Code=12+34") == ["Body": "hello world", "Code": "12 34"])
    }

    @Test("the last value of a repeated key wins")
    func lastValueWins() {
        #expect(FormEncoding.decode("a=1&a=2&a=3") == ["a": "3"])
    }

    @Test("keys without a value, empty pairs and an empty body decode sensibly")
    func edgeCases() {
        #expect(FormEncoding.decode("") == [:])
        #expect(FormEncoding.decode("flag&x=1") == ["flag": "", "x": "1"])
        #expect(FormEncoding.decode("a=1&&b=2&") == ["a": "1", "b": "2"])
        #expect(FormEncoding.decode("a==b") == ["a": "=b"])
    }

    @Test("a malformed escape is kept as it is rather than dropped")
    func malformedEscape() {
        #expect(FormEncoding.decode("a=100%&b=%zz") == ["a": "100%", "b": "%zz"])
    }

    /// What ``FormEncoding/unescape(_:)`` gave before its fast path: Foundation alone.
    static func foundation(_ value: String) -> String {
        let spaced = value.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    @Test(
        "the fast unescape gives Foundation's result",
        arguments: [
            "", "plain", "a+b", "%2B447400000001", "%2b44", "100%", "%zz", "%2", "%%41", "%2541", "caf%C3%A9",
            "%E6%97%A5%E6%9C%AC", "%F0%9F%99%82", "%C3", "%FF", "%C3%28", "%00", "%0A", "%1F", "%7F", "%20+%20",
            "é日本🙂+x", "a%2Fb%3Dc%26d", "%41%42%43", "++", "%+", "a%e9b",
        ])
    func unescapeMatchesFoundation(_ value: String) {
        #expect(FormEncoding.unescape(value) == Self.foundation(value))
    }

    @Test("the fast unescape gives Foundation's result on random escapes")
    func unescapeFuzz() {
        var generator = SystemRandomNumberGenerator()
        let pieces = [
            "%", "+", "a", "Z", "0", "9", "f", "F", "%2", "%C3", "%A9", "%E6", "%97", "%41", "%0", "é", " ", "%7E",
            "%80",
        ]
        for _ in 0..<5000 {
            let value = (0..<Int.random(in: 0...8, using: &generator))
                .map { _ in pieces.randomElement(using: &generator) ?? "" }.joined()
            #expect(FormEncoding.unescape(value) == Self.foundation(value), "\(value)")
        }
    }
}
