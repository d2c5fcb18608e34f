import Foundation
import Testing

@testable import GatewayCore

/// The fast JSON path (issue 13) must give exactly what Foundation gives, or step aside.
@Suite("JSON fast path")
struct JSONFastPathTests {
    static let documents = [
        #"{"to": "+447700900123", "channel": "sms", "provider": "twilio"}"#,
        #"{"a":[1,2.5,-0,1e3,1E-2,0.1,-12345678901234567,123456789012345678901234],"b":{"c":null,"d":true,"e":false}}"#,
        #"  [ "x" , { } , [ ] , "" ]  "#,
        #"{"s":"q\"b\\s\/t\u0001\u001f\n\r\t\b\f é \u00e9 \ud83d\ude00 😀"}"#,
        #""just a string""#, "42", "-7.25", "true", "null",
        #"{"nested":{"a":{"b":{"c":[[[[{"d":"e"}]]]]}}}}"#,
        #"{"k": "\u0000"}"#,
    ]

    /// Accepted by neither, or left to Foundation: the fast parser must return nil for each.
    static let leftToFoundation = [
        "", "{", "[1,]", #"{"a":1,}"#, "01", "1.", ".5", "-", "+1", "1e", "tru", "nul", #"{"a" 1}"#, "[1 2]",
        #""\ud83d""#, #""\ude00""#, #""\x""#, "\"tab\there\"", "1e999", #"{"a":1,"a":2}"#, "{} {}",
        String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
    ]

    @Test("documents parse to what JSONDecoder reads", arguments: documents)
    func parsesLikeFoundation(_ text: String) throws {
        let expected = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        let fast = try #require(JSONValue.parse(Data(text.utf8)))
        #expect(fast == expected)
        #expect(JSONValue.parse(text) == expected)
        #expect(try JSONValue(jsonData: Data(text.utf8)) == expected)
    }

    @Test("what the fast parser does not handle it leaves to JSONDecoder", arguments: leftToFoundation)
    func leavesTheRest(_ text: String) {
        #expect(JSONValue.parse(Data(text.utf8)) == nil)
        let foundation = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect((try? JSONValue(jsonData: Data(text.utf8))) == foundation)
    }

    @Test("invalid UTF-8 in a string is left to JSONDecoder")
    func invalidUTF8() {
        #expect(JSONValue.parse(Data([0x22, 0xFF, 0xFE, 0x22])) == nil)
    }

    @Test("values are written byte for byte as JSONEncoder with sorted keys writes them")
    func writesLikeFoundation() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let values: [JSONValue] = [
            .object([
                "a10": .number(1), "a2": .number(-2), "B": .bool(true), "_x": .null,
                "a": .string("q\"\\/\u{1}\u{1f}\n\r\t\u{8}\u{c}\u{7f}é\u{2028}😀"),
                "a_b": .array([.number(0), .number(-0.0), .number(999_999_999_999_999)]), "é": .object([:]),
                "e": .array([]),
            ]),
            .string(""), .number(12), .array([.string("x"), .object(["k": .string("v")])]),
        ]
        for value in values {
            let expected = String(decoding: try encoder.encode(value), as: UTF8.self)
            #expect(value.sortedJSON == expected)
        }
        #expect(
            JSONTextWriter.write(strings: ["a", "b\"c"])
                == String(decoding: try encoder.encode(["a", "b\"c"]), as: UTF8.self))
        let map = ["z": "1", "A": "\n", "m": "/"]
        #expect(JSONTextWriter.write(stringMap: map) == String(decoding: try encoder.encode(map), as: UTF8.self))
        #expect(JSONTextWriter.write(strings: []) == "[]")
        #expect(JSONTextWriter.write(stringMap: [:]) == "{}")
    }

    @Test("keys sort by their UTF-8 bytes: the memcmp path and the walk agree, for native, small and bridged text")
    func keyOrder() {
        let keys = [
            "", "a", "A", "ab", "a\u{0}", "abc", "abd", "é", "e\u{301}", "😀", "z", "zz", "client_ref", "client_secret",
            "a long key that is not a small string", "a long key that is not a small string!", "ÿ", "\u{7F}",
        ]
        let bridged = keys.map { String(decoding: Array($0.utf16), as: UTF16.self) }
        for a in keys + bridged {
            for b in keys + bridged {
                #expect(JSONTextWriter.utf8Precedes(a, b) == a.utf8.lexicographicallyPrecedes(b.utf8), "\(a) < \(b)")
            }
        }
        let sorted = JSONTextWriter.sortedKeys(keys)
        #expect(sorted == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test("hex: the contiguous path writes what the sequence path writes")
    func hex() {
        var generator = SystemRandomNumberGenerator()
        for count in [0, 1, 15, 16, 32, 33, 100] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let walked = Hex.lowercase(bytes.lazy.map { $0 })
            #expect(Hex.lowercase(bytes) == walked)
            #expect(Hex.lowercase(Data(bytes)) == walked)
            #expect(walked == bytes.map { String(format: "%02x", $0) }.joined())
        }
    }

    @Test("a number with a fraction is left to JSONEncoder")
    func fractionsAreLeft() {
        #expect(JSONValue.array([.number(1.5)]).sortedJSON == nil)
        #expect(JSONValue.number(1e20).sortedJSON == nil)
    }

    @Test("stored JSON writes fractions in their shortest round-trip form, and reads back the same values")
    func storedFractions() throws {
        let value = JSONValue.object([
            "expires_at": .number(818_329_770.8736612), "big": .number(1e20), "tiny": .number(.leastNonzeroMagnitude),
            "whole": .number(6), "list": .array([.number(-0.25), .string("a/b")]),
        ])
        let text = try #require(value.storedJSON)
        #expect(text == #"{"big":1e+20,"expires_at":818329770.8736612,"list":[-0.25,"a/b"],"tiny":5e-324,"whole":6}"#)
        #expect(JSONValue.parse(text) == value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) == value)
        #expect(JSONValue.object(["a": .number(.infinity)]).storedJSON == nil)
    }

    @Test("a breaker's window stays right over many calls (the outcomes queue compacts)")
    func breakerWindowOverManyCalls() {
        let clock = ManualClock()
        let breakers = CircuitBreakers(
            settings: .init(consecutiveFailures: 1_000_000, failureRate: 0.5, window: 10, minimumRequests: 10),
            clock: clock)
        for second in 0..<30 {
            for index in 0..<200 { breakers.record("alpha", country: "GB", failure: index >= 190) }
            if second < 29 { clock.advance(by: 1) }
        }
        let status = breakers.statuses.first { $0.providerID == "alpha" }
        // Calls at most 10 s old: the last 11 seconds' worth.
        #expect(status?.recentRequests == 11 * 200)
        #expect(status?.recentFailures == 11 * 10)
        #expect(breakers.state("alpha", country: "GB") == .closed)
        for _ in 0..<5000 { breakers.record("alpha", country: "GB", failure: true) }
        #expect(breakers.state("alpha", country: "GB") == .open, "failures now outweigh the window's successes")
    }
}
