import GatewayCore
import Testing

/// One generated case: an input, its default region, and what libphonenumber (the `phonenumbers` package)
/// answered for it.
struct PhoneNumberFixture: Sendable, CustomTestStringConvertible {
    var category: String
    var region: String?
    var input: String
    /// `["error", KIND]` or `["ok", valid, e164, region, TYPE, extension, international, national]`.
    var expected: [String]

    var testDescription: String { "\(region ?? "-") \(input.debugDescription)" }

    static let all: [PhoneNumberFixture] = PhoneNumberFixtures.cases.split(separator: "\n").compactMap { line in
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map { unescape($0) }
        guard fields.count >= 5 else { return nil }
        return PhoneNumberFixture(
            category: fields[0], region: fields[1].isEmpty ? nil : fields[1], input: fields[2],
            expected: Array(fields[3...]))
    }

    static func category(_ name: String) -> [PhoneNumberFixture] { all.filter { $0.category == name } }

    private static func unescape(_ text: Substring) -> String {
        // By scalars: a backslash may be followed by a combining mark that would fuse with the next letter.
        var output = String.UnicodeScalarView()
        var iterator = text.unicodeScalars.makeIterator()
        while let scalar = iterator.next() {
            guard scalar == "\\", let next = iterator.next() else {
                output.append(scalar)
                continue
            }
            output.append(next == "t" ? "\t" : next == "n" ? "\n" : next)
        }
        return String(output)
    }

    /// What the gateway's libphonenumber port answers, in the fixture's shape.
    func actual() -> [String] {
        do {
            let number = try PhoneNumberParser.parse(input, defaultRegion: region)
            let (region, type) = number.analysis
            return [
                "ok", type != .unknown ? "1" : "0", number.e164, region ?? "-", type.libphonenumberName,
                number.extension ?? "", number.international, number.national,
            ]
        } catch {
            return ["error", error.kind.rawValue]
        }
    }
}

@Suite("Phone number parsing agrees with libphonenumber")
struct PhoneNumberAgreementTests {
    @Test("there are a few hundred cases in every category")
    func fixtureSizes() {
        for category in ["international", "national", "dialled_from_abroad", "decorated", "non_example", "errors"] {
            #expect(PhoneNumberFixture.category(category).count >= 300, "\(category)")
        }
    }

    @Test(
        "international forms: E.164, formatted, IDaaS's +CC-number, calling code without +",
        arguments: PhoneNumberFixture.category("international"))
    func international(_ fixture: PhoneNumberFixture) {
        #expect(fixture.actual() == fixture.expected)
    }

    @Test(
        "national forms with the default region, with and without the national prefix",
        arguments: PhoneNumberFixture.category("national"))
    func national(_ fixture: PhoneNumberFixture) {
        #expect(fixture.actual() == fixture.expected)
    }

    @Test(
        "numbers dialled from another region with its international prefix (00, 011, 810, 0011, ...)",
        arguments: PhoneNumberFixture.category("dialled_from_abroad"))
    func dialledFromAbroad(_ fixture: PhoneNumberFixture) {
        #expect(fixture.actual() == fixture.expected)
    }

    @Test(
        "punctuation, full-width digits, extensions and tel: URIs",
        arguments: PhoneNumberFixture.category("decorated"))
    func decorated(_ fixture: PhoneNumberFixture) {
        #expect(fixture.actual() == fixture.expected)
    }

    @Test(
        "non-example numbers: changed, truncated, lengthened, in the wrong region, random",
        arguments: PhoneNumberFixture.category("non_example"))
    func nonExample(_ fixture: PhoneNumberFixture) {
        #expect(fixture.actual() == fixture.expected)
    }

    @Test(
        "inputs libphonenumber rejects are rejected with the same error type",
        arguments: PhoneNumberFixture.category("errors"))
    func errors(_ fixture: PhoneNumberFixture) {
        #expect(fixture.actual() == fixture.expected)
    }
}
