import Testing

@testable import GatewayCore

@Suite("Phone number metadata")
struct PhoneNumberMetadataTests {
    /// Every region's example numbers, by type: (region, type, example).
    static let examples: [ExampleNumber] = PhoneRegion.all.flatMap { region in
        PhoneNumberType.allCases.filter { $0 != .fixedLineOrMobile && $0 != .unknown }.compactMap { type in
            region.exampleNumber(type: type).map { ExampleNumber(region: region.code, type: type, number: $0) }
        }
    }

    struct ExampleNumber: Sendable, CustomTestStringConvertible {
        var region: String
        var type: PhoneNumberType
        var number: ParsedPhoneNumber
        var testDescription: String { "\(region) \(type.rawValue) \(number.e164)" }
    }

    @Test("covers every region libphonenumber has, with the version it came from")
    func coverage() {
        let regions = PhoneRegion.all
        #expect(regions.count == 245)
        #expect(Set(regions.map(\.code)).isSuperset(of: ["US", "GB", "CN", "IT", "AR", "MX", "JE", "AC", "TA", "XK"]))
        #expect(GeneratedPhoneMetadata.libphonenumberVersion.split(separator: ".").count == 3)
        #expect(PhoneMetadataStore.shared.nonGeographic.keys.sorted() == [800, 808, 870, 878, 881, 882, 883, 888, 979])
        #expect(Self.examples.count > 1000)
    }

    @Test("every pattern of every region compiles")
    func patternsCompile() throws {
        // A pattern that failed to compile would have been dropped to nil: compare with the source text.
        var checked = 0
        for line in GeneratedPhoneMetadata.metadata.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            var patterns: [String] = []
            switch fields.first {
            case "R": patterns = [fields[3], fields[6], fields[8]]
            case "T": patterns = [fields[2]]
            case "F", "I": patterns = [fields[1]] + fields[3].split(separator: ";").map(String.init)
            default: continue
            }
            for pattern in patterns where !pattern.isEmpty {
                _ = try PhonePattern(pattern)
                checked += 1
            }
        }
        #expect(checked > 3000)
    }

    @Test("region facts: calling codes, main regions, prefixes")
    func regionFacts() throws {
        let gb = try #require(PhoneRegion.named("gb"))
        #expect(gb.callingCode == 44)
        #expect(gb.isMainRegionForCallingCode)
        #expect(gb.internationalPrefix == "00")
        #expect(gb.nationalPrefix == "0")
        let jersey = try #require(PhoneRegion.named("JE"))
        #expect(jersey.callingCode == 44)
        #expect(!jersey.isMainRegionForCallingCode)
        #expect(PhoneRegion.named("US")?.internationalPrefix == "011")
        #expect(PhoneRegion.named("CA")?.callingCode == 1)
        #expect(PhoneRegion.named("CN")?.callingCode == 86)
        #expect(PhoneRegion.named("ZZ") == nil)
    }

    @Test(
        "region names in the gateway's languages",
        arguments: [
            ("CN", "en", "China"), ("CN", "zh-Hans", "中国"), ("CN", "zh-CN", "中国"), ("CN", "zh-TW", "中國"),
            ("CN", "zh-Hant-HK", "中國"), ("CN", "ja", "中国"), ("CN", "ar", "الصين"), ("DE", "de", "Deutschland"),
            ("DE", "fr-CA", "Allemagne"), ("ES", "es-MX", "España"), ("BR", "pt-BR", "Brasil"),
            ("GB", "xx", "United Kingdom"), ("US", "en_US", "United States"),
        ])
    func regionNames(_ code: String, _ locale: String, _ name: String) {
        #expect(PhoneRegion.named(code)?.name(locale: locale) == name)
    }

    @Test("every region has a name in every locale")
    func everyRegionIsNamed() {
        #expect(PhoneRegion.nameLocales == ["en", "zh-Hans", "zh-Hant", "es", "fr", "de", "ja", "pt", "ar"])
        for region in PhoneRegion.all {
            for locale in PhoneRegion.nameLocales {
                #expect(region.name(locale: locale) != region.code, "\(region.code) in \(locale)")
            }
        }
    }

    @Test("every example number is valid, of its region and of its type", arguments: examples)
    func exampleNumbers(_ example: ExampleNumber) throws {
        let parsed = try PhoneNumberParser.parse(example.number.e164)
        #expect(parsed.isValid)
        #expect(parsed.isPossible)
        let sharing = PhoneRegion.all.filter { $0.callingCode == parsed.countryCode }
        if sharing.count == 1 {
            #expect(parsed.region == example.region)
        } else {
            // Regions sharing a calling code (+1, +44, +61, ...): numbers every one of them uses (toll-free,
            // premium) belong to the first that claims them, as in libphonenumber.
            #expect(sharing.contains { $0.code == parsed.region })
        }
        if parsed.region == example.region {
            let type = parsed.type
            let fixedOrMobile = [PhoneNumberType.fixedLine, .mobile].contains(example.type)
            #expect(type == example.type || (fixedOrMobile && type == .fixedLineOrMobile))
        }
        // And it survives the gateway's stricter rules, in both display forms.
        let number = try PhoneNumber(parsing: parsed.international)
        #expect(number.e164 == example.number.e164)
        let national = try PhoneNumber(parsing: parsed.national, defaultRegion: example.region)
        #expect(national.e164 == example.number.e164)
    }
}
