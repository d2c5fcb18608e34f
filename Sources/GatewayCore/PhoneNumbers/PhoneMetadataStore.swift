/// libphonenumber's metadata for every region and non-geographic calling code, decoded once from
/// ``GeneratedPhoneMetadata`` on first use and immutable after.
///
/// The shapes mirror libphonenumber's `PhoneMetadata`, `PhoneNumberDesc` and `NumberFormat`, so the
/// parsing and formatting code can follow libphonenumber's own line by line.
final class PhoneMetadataStore: Sendable {
    /// The decoded metadata. Swift initializes a static `let` once, on first access, thread-safely.
    static let shared = PhoneMetadataStore(text: GeneratedPhoneMetadata.metadata)

    /// Calling code to its regions, the main region first (`"001"` for non-geographic codes).
    let regionsByCallingCode: [Int: [String]]
    /// Region code (`"GB"`) to its metadata.
    let regions: [String: PhoneRegionMetadata]
    /// Non-geographic calling code (800, 808, 870, ...) to its metadata.
    let nonGeographic: [Int: PhoneRegionMetadata]

    init(text: String) {
        var regionsByCallingCode: [Int: [String]] = [:]
        var regions: [String: PhoneRegionMetadata] = [:]
        var nonGeographic: [Int: PhoneRegionMetadata] = [:]
        var builder: PhoneRegionMetadata.Builder?

        func finish() {
            guard let done = builder?.build() else { return }
            if done.id == PhoneRegionMetadata.nonGeographicRegion {
                nonGeographic[done.countryCode] = done
            } else {
                regions[done.id] = done
            }
        }

        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard let kind = fields.first else { continue }
            switch kind {
            case "C":
                guard fields.count >= 3, let code = Int(fields[1]) else { continue }
                regionsByCallingCode[code] = fields[2].split(separator: ",").map(String.init)
            case "R":
                finish()
                builder = PhoneRegionMetadata.Builder(fields: fields)
            case "T":
                builder?.addDescription(fields: fields)
            case "F":
                builder?.addFormat(fields: fields, international: false)
            case "I":
                builder?.addFormat(fields: fields, international: true)
            default:
                continue
            }
        }
        finish()
        self.regionsByCallingCode = regionsByCallingCode
        self.regions = regions
        self.nonGeographic = nonGeographic
    }

    /// The metadata for a region code, or for a calling code when the region is `"001"`.
    func metadata(forCallingCode code: Int, region: String) -> PhoneRegionMetadata? {
        region == PhoneRegionMetadata.nonGeographicRegion ? nonGeographic[code] : regions[region]
    }

    /// The main region for a calling code (`"ZZ"` when the code is unknown).
    func mainRegion(forCallingCode code: Int) -> String {
        regionsByCallingCode[code]?.first ?? PhoneRegionMetadata.unknownRegion
    }

    /// The metadata that formats and length-checks numbers of a calling code (its main region's).
    func mainMetadata(forCallingCode code: Int) -> PhoneRegionMetadata? {
        guard let region = regionsByCallingCode[code]?.first else { return nil }
        return metadata(forCallingCode: code, region: region)
    }
}

/// One region's (or one non-geographic calling code's) numbering plan.
final class PhoneRegionMetadata: Sendable {
    static let nonGeographicRegion = "001"
    static let unknownRegion = "ZZ"

    let id: String
    let countryCode: Int
    let internationalPrefix: PhonePattern?
    let preferredInternationalPrefix: String?
    let nationalPrefix: String?
    let nationalPrefixForParsing: PhonePattern?
    /// With `\1`-style group references, as scalars ready for ``PhonePattern/expand(_:with:in:into:)``.
    let nationalPrefixTransformRule: [UInt32]?
    let leadingDigits: PhonePattern?
    let preferredExtensionPrefix: String?
    let isMainCountryForCode: Bool
    /// Indexed by ``PhoneNumberDescription/Slot``.
    let descriptions: [PhoneNumberDescription?]
    let numberFormats: [PhoneNumberFormatRule]
    let internationalNumberFormats: [PhoneNumberFormatRule]
    let sameMobileAndFixedLinePattern: Bool
    /// The general description, kept apart because every check starts with it.
    let generalDescription: PhoneNumberDescription?

    init(
        id: String, countryCode: Int, internationalPrefix: PhonePattern?, preferredInternationalPrefix: String?,
        nationalPrefix: String?, nationalPrefixForParsing: PhonePattern?, nationalPrefixTransformRule: [UInt32]?,
        leadingDigits: PhonePattern?, preferredExtensionPrefix: String?, isMainCountryForCode: Bool,
        descriptions: [PhoneNumberDescription?], numberFormats: [PhoneNumberFormatRule],
        internationalNumberFormats: [PhoneNumberFormatRule], sameMobileAndFixedLinePattern: Bool
    ) {
        self.id = id
        self.countryCode = countryCode
        self.internationalPrefix = internationalPrefix
        self.preferredInternationalPrefix = preferredInternationalPrefix
        self.nationalPrefix = nationalPrefix
        self.nationalPrefixForParsing = nationalPrefixForParsing
        self.nationalPrefixTransformRule = nationalPrefixTransformRule
        self.leadingDigits = leadingDigits
        self.preferredExtensionPrefix = preferredExtensionPrefix
        self.isMainCountryForCode = isMainCountryForCode
        self.descriptions = descriptions
        self.numberFormats = numberFormats
        self.internationalNumberFormats = internationalNumberFormats
        self.sameMobileAndFixedLinePattern = sameMobileAndFixedLinePattern
        self.generalDescription = descriptions[PhoneNumberDescription.Slot.general.rawValue]
    }

    func description(_ slot: PhoneNumberDescription.Slot) -> PhoneNumberDescription? {
        descriptions[slot.rawValue]
    }

    struct Builder {
        var fields: [String]
        var descriptions = [PhoneNumberDescription?](repeating: nil, count: PhoneNumberDescription.Slot.allCases.count)
        var formats: [PhoneNumberFormatRule] = []
        var internationalFormats: [PhoneNumberFormatRule] = []

        init(fields: [String]) {
            self.fields = fields + Array(repeating: "", count: max(0, 12 - fields.count))
        }

        mutating func addDescription(fields: [String]) {
            guard fields.count >= 6, let index = Int(fields[1]), descriptions.indices.contains(index) else { return }
            descriptions[index] = PhoneNumberDescription(
                pattern: compile(fields[2]),
                possibleLengths: lengths(fields[3]),
                localOnlyLengths: lengths(fields[4]),
                example: fields[5].isEmpty ? nil : fields[5]
            )
        }

        mutating func addFormat(fields: [String], international: Bool) {
            guard fields.count >= 7, let pattern = compile(fields[1]) else { return }
            let leading = fields[3].split(separator: ";").map(String.init)
            let rule = PhoneNumberFormatRule(
                pattern: pattern,
                format: fields[2],
                leadingDigitsPattern: leading.last.flatMap(compile),
                nationalPrefixFormattingRule: fields[4].isEmpty ? nil : fields[4],
                nationalPrefixOptionalWhenFormatting: fields[5] == "1",
                domesticCarrierCodeFormattingRule: fields[6].isEmpty ? nil : fields[6]
            )
            if international { internationalFormats.append(rule) } else { formats.append(rule) }
        }

        func build() -> PhoneRegionMetadata? {
            guard let countryCode = Int(fields[2]) else { return nil }
            let fixed = descriptions[PhoneNumberDescription.Slot.fixedLine.rawValue]
            let mobile = descriptions[PhoneNumberDescription.Slot.mobile.rawValue]
            let same: Bool
            switch (fixed, mobile) {
            case (nil, nil): same = true
            case (let fixed?, let mobile?): same = fixed.pattern?.source == mobile.pattern?.source
            default: same = false
            }
            return PhoneRegionMetadata(
                id: fields[1],
                countryCode: countryCode,
                internationalPrefix: compile(fields[3]),
                preferredInternationalPrefix: fields[4].isEmpty ? nil : fields[4],
                nationalPrefix: fields[5].isEmpty ? nil : fields[5],
                nationalPrefixForParsing: compile(fields[6]),
                nationalPrefixTransformRule: fields[7].isEmpty ? nil : fields[7].unicodeScalars.map(\.value),
                leadingDigits: compile(fields[8]),
                preferredExtensionPrefix: fields[9].isEmpty ? nil : fields[9],
                isMainCountryForCode: fields[10] == "1",
                descriptions: descriptions,
                numberFormats: formats,
                internationalNumberFormats: internationalFormats,
                sameMobileAndFixedLinePattern: same
            )
        }

        private func compile(_ source: String) -> PhonePattern? {
            guard !source.isEmpty else { return nil }
            // The generated metadata is checked by the tests, which compile every pattern; a pattern that
            // does not compile behaves as a missing one rather than bringing the gateway down.
            return try? PhonePattern(source)
        }

        private func lengths(_ text: String) -> [Int] {
            text.split(separator: ",").compactMap { Int($0) }
        }
    }
}

/// libphonenumber's `PhoneNumberDesc`: the pattern and lengths of one type of number in one region.
struct PhoneNumberDescription: Sendable {
    /// The metadata slots, in the generator's order.
    enum Slot: Int, CaseIterable, Sendable {
        case general, fixedLine, mobile, tollFree, premiumRate, sharedCost, voip, personalNumber, pager, uan,
            voicemail
    }

    let pattern: PhonePattern?
    /// Sorted; `[-1]` when the region has no numbers of this type.
    let possibleLengths: [Int]
    let localOnlyLengths: [Int]
    let example: String?
    /// Bit `n` set when length `n` is possible, for the hot path.
    let possibleLengthMask: UInt64

    init(pattern: PhonePattern?, possibleLengths: [Int], localOnlyLengths: [Int], example: String?) {
        self.pattern = pattern
        self.possibleLengths = possibleLengths
        self.localOnlyLengths = localOnlyLengths
        self.example = example
        var mask: UInt64 = 0
        for length in possibleLengths where (0..<64).contains(length) { mask |= 1 << UInt64(length) }
        self.possibleLengthMask = mask
    }

    /// libphonenumber's `_is_number_matching_desc`: the length is possible and the pattern matches.
    func matches(_ nationalNumber: [UInt32]) -> Bool {
        let length = nationalNumber.count
        if !possibleLengths.isEmpty && (length >= 64 || possibleLengthMask & (1 << UInt64(length)) == 0) {
            return false
        }
        guard let pattern else { return false }
        return pattern.matchesEntirely(nationalNumber)
    }

    /// libphonenumber's `_match_national_number` with no prefix match allowed.
    func patternMatches(_ nationalNumber: [UInt32]) -> Bool {
        pattern?.matchesEntirely(nationalNumber) ?? false
    }
}

/// libphonenumber's `NumberFormat`: how to lay out the national numbers a pattern matches.
struct PhoneNumberFormatRule: Sendable {
    let pattern: PhonePattern
    /// With `\N` group references.
    let format: String
    /// The most detailed of the leading-digits patterns (libphonenumber always uses the last).
    let leadingDigitsPattern: PhonePattern?
    let nationalPrefixFormattingRule: String?
    let nationalPrefixOptionalWhenFormatting: Bool
    let domesticCarrierCodeFormattingRule: String?
}
