/// libphonenumber's `parse`, ported from its Python edition (`phonenumbers.phonenumberutil.parse`) step by
/// step, over the generated metadata.
///
/// It accepts what libphonenumber accepts: `+` and international-prefix forms (`00`, `011`, ...), national
/// forms with or without the national prefix given a default region, punctuation and spaces, full-width
/// and other Unicode digits, vanity letters, RFC 3966 `tel:` URIs, and extensions (`ext. 12`, `x12`,
/// `#12`, `;ext=12`), which it returns apart from the number. The gateway's own, stricter input rules sit
/// on top, in ``PhoneNumber/init(parsing:defaultRegion:)``.
public enum PhoneNumberParser {
    /// Parses `input` as libphonenumber does.
    ///
    /// - Parameters:
    ///   - input: the text a user typed.
    ///   - defaultRegion: the region (ISO 3166-1 alpha-2, upper case, `"GB"`) whose national forms and
    ///     international prefix `input` may be written in; nil when it must be in `+` form.
    /// - Throws: ``PhoneNumberParseError`` with libphonenumber's error type.
    public static func parse(_ input: String, defaultRegion: String? = nil) throws(PhoneNumberParseError)
        -> ParsedPhoneNumber
    {
        let store = PhoneMetadataStore.shared
        let scalars = scalarValues(of: input)
        if scalars.count > maxInputLength { throw PhoneNumberParseError(.tooLong) }

        var nationalNumber = try buildNationalNumberForParsing(scalars)
        if !isViablePhoneNumber(nationalNumber) {
            throw PhoneNumberParseError(.notANumber, reason: containsDigit(scalars) ? nil : .noDigits)
        }
        let regionIsValid = defaultRegion.map { store.regions[$0] != nil } ?? false
        if !regionIsValid && leadingPlusCount(nationalNumber) == 0 {
            throw PhoneNumberParseError(.invalidCountryCode)
        }

        let (extensionDigits, withoutExtension) = stripExtension(nationalNumber)
        nationalNumber = withoutExtension
        var metadata = defaultRegion.flatMap { store.regions[$0.uppercased()] }

        var countryCode = 0
        var normalizedNational: [UInt32] = []
        do throws(PhoneNumberParseError) {
            (countryCode, normalizedNational) = try extractCountryCode(nationalNumber, metadata: metadata)
        } catch {
            let plusCount = leadingPlusCount(nationalNumber)
            guard error.kind == .invalidCountryCode, plusCount > 0 else { throw error }
            // Strip the plus and try again.
            (countryCode, normalizedNational) = try extractCountryCode(
                Array(nationalNumber[plusCount...]), metadata: metadata)
            if countryCode == 0 { throw PhoneNumberParseError(.invalidCountryCode) }
        }

        if countryCode != 0 {
            let numberRegion = store.mainRegion(forCallingCode: countryCode)
            if numberRegion != defaultRegion {
                metadata = store.metadata(forCallingCode: countryCode, region: numberRegion)
            }
        } else {
            normalizedNational += normalize(nationalNumber)
            if defaultRegion != nil, let metadata {
                countryCode = metadata.countryCode
            }
        }

        if normalizedNational.count < minLengthForNSN { throw PhoneNumberParseError(.tooShortNSN) }
        if let metadata {
            let (potential, _) = stripNationalPrefix(normalizedNational, metadata: metadata)
            // Keep the prefix unless what is left is long enough to be a number of the region; otherwise
            // the original could be a valid short number.
            switch testNumberLength(potential, metadata: metadata) {
            case .tooShort, .isPossibleLocalOnly, .invalidLength: break
            default: normalizedNational = potential
            }
        }
        if normalizedNational.count < minLengthForNSN { throw PhoneNumberParseError(.tooShortNSN) }
        if normalizedNational.count > maxLengthForNSN { throw PhoneNumberParseError(.tooLong) }

        return ParsedPhoneNumber(
            countryCode: countryCode,
            nationalNumber: String(decoding: normalizedNational.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self),
            extension: extensionDigits.isEmpty
                ? nil
                : String(
                    String.UnicodeScalarView(
                        extensionDigits.compactMap(Unicode.Scalar.init)))
        )
    }

    // MARK: - Limits and character sets

    static let minLengthForNSN = 2
    static let maxLengthForNSN = 17
    static let maxLengthCountryCode = 3
    static let maxInputLength = 250

    static let plusChars = "+\u{FF0B}"
    static let validPunctuation =
        "-x\u{2010}-\u{2015}\u{2212}\u{30FC}\u{FF0D}-\u{FF0F} \u{00A0}\u{00AD}\u{200B}\u{2060}\u{3000}()"
        + "\u{FF08}\u{FF09}\u{FF3B}\u{FF3D}.\\[\\]/~\u{2053}\u{223C}\u{FF5E}"
    static let validAlpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

    /// libphonenumber's extension patterns for parsing (`_create_extn_pattern(True)`).
    static let extensionPatternsForParsing: String = {
        func digits(_ maxLength: Int) -> String { "(\\d{1,\(maxLength)})" }
        let separatorsBeforeLabel = "[ \u{00A0}\\t,]*"
        let charsAfterLabel = "[:\\.\u{FF0E}]?[ \u{00A0}\\t,-]*"
        let optionalSuffix = "#?"
        let explicitLabels =
            "(?:e?xt(?:ensi(?:o\u{0301}?|\u{00F3}))?n?|\u{FF45}?\u{FF58}\u{FF54}\u{FF4E}?"
            + "|\u{0434}\u{043E}\u{0431}|anexo)"
        let ambiguousLabels = "(?:[x\u{FF58}#\u{FF03}~\u{FF5E}]|int|\u{FF49}\u{FF4E}\u{FF54})"
        let ambiguousSeparator = "[- ]+"
        let rfc = ";ext=" + digits(20)
        let explicit = separatorsBeforeLabel + explicitLabels + charsAfterLabel + digits(20) + optionalSuffix
        let ambiguous = separatorsBeforeLabel + ambiguousLabels + charsAfterLabel + digits(9) + optionalSuffix
        let american = ambiguousSeparator + digits(6) + "#"
        let separatorsNoComma = "[ \u{00A0}\\t]*"
        let autoDialling = separatorsNoComma + "(?:,{2}|;)" + charsAfterLabel + digits(15) + optionalSuffix
        let onlyCommas = separatorsNoComma + "(?:,)+" + charsAfterLabel + digits(9) + optionalSuffix
        return [rfc, explicit, ambiguous, american, autoDialling, onlyCommas].joined(separator: "|")
    }()

    static let validPhoneNumberPattern = compileFixed(
        "\\d{\(minLengthForNSN)}|[\(plusChars)]*(?:[\(validPunctuation)*]*\\d){3,}"
            + "[\(validPunctuation)*\(validAlpha)\\d]*(?:\(extensionPatternsForParsing))?",
        options: [.ignoreCase, .unicodeDigits])
    static let extensionPattern = compileFixed(
        "(?:\(extensionPatternsForParsing))$", options: [.ignoreCase, .unicodeDigits])
    static let rfc3966GlobalNumberDigits = compileFixed(
        "^\\+(\\d|[\\-\\.\\(\\)]?)*\\d(\\d|[\\-\\.\\(\\)]?)*$", options: [.unicodeDigits])
    static let rfc3966DomainName: PhonePattern = {
        let alphanumeric = validAlpha + "\\d"
        let label = "[\(alphanumeric)]+((\\-)*[\(alphanumeric)])*"
        let top = "[\(validAlpha)]+((\\-)*[\(alphanumeric)])*"
        return compileFixed("^(\(label)\\.)*\(top)\\.?$", options: [.unicodeDigits])
    }()

    /// The parser's own patterns are constants of this file; the tests compile every one of them.
    private static func compileFixed(_ source: String, options: PhonePattern.Options) -> PhonePattern {
        do {
            return try PhonePattern(source, options: options)
        } catch {
            preconditionFailure("built-in phone pattern does not compile: \(error)")
        }
    }

    // MARK: - Steps of parse, in libphonenumber's order

    /// `_build_national_number_for_parsing`: handles RFC 3966 `tel:` URIs, else extracts a possible number.
    static func buildNationalNumberForParsing(_ number: [UInt32]) throws(PhoneNumberParseError) -> [UInt32] {
        let phoneContextMarker = Array(";phone-context=".unicodeScalars.map(\.value))
        var national: [UInt32]
        if let contextIndex = indexOf(phoneContextMarker, in: number) {
            let contextStart = contextIndex + phoneContextMarker.count
            var context: [UInt32] = []
            if contextStart < number.count {
                let end = number[contextStart...].firstIndex(of: 0x3B) ?? number.count
                context = Array(number[contextStart..<end])
            }
            guard !context.isEmpty,
                rfc3966GlobalNumberDigits.matchesEntirely(context) || rfc3966DomainName.matchesEntirely(context)
            else { throw PhoneNumberParseError(.notANumber) }
            national = context[0] == 0x2B ? context : []
            let telPrefix = Array("tel:".unicodeScalars.map(\.value))
            let numberStart = indexOf(telPrefix, in: number).map { $0 + telPrefix.count } ?? 0
            if numberStart < contextIndex { national += number[numberStart..<contextIndex] }
        } else {
            national = extractPossibleNumber(number)
        }
        let isdn = Array(";isub=".unicodeScalars.map(\.value))
        if let isdnIndex = indexOf(isdn, in: national), isdnIndex > 0 {
            national = Array(national[..<isdnIndex])
        }
        return national
    }

    /// `_extract_possible_number`: from the first `+` or digit, without trailing punctuation and without a
    /// second number after `/x` or `\x`.
    static func extractPossibleNumber(_ number: [UInt32]) -> [UInt32] {
        guard let start = number.firstIndex(where: { isPlus($0) || UnicodeClasses.isDecimalDigit($0) }) else {
            return []
        }
        var end = number.count
        while end > start {
            let scalar = number[end - 1]
            if scalar == 0x5F || (scalar != 0x23 && !UnicodeClasses.isWord(scalar)) {
                end -= 1
            } else {
                break
            }
        }
        // _SECOND_NUMBER_START: [\\/] *x
        var index = start
        while index < end {
            if number[index] == 0x5C || number[index] == 0x2F {
                var next = index + 1
                while next < end, number[next] == 0x20 { next += 1 }
                if next < end, number[next] == 0x78 {
                    end = index
                    break
                }
            }
            index += 1
        }
        return Array(number[start..<end])
    }

    /// `_is_viable_phone_number`.
    static func isViablePhoneNumber(_ number: [UInt32]) -> Bool {
        guard number.count >= minLengthForNSN else { return false }
        // The pattern is `\d{2}` or: pluses, then three digits among punctuation and stars, then
        // punctuation, stars, letters and digits, then an optional extension. Decide the common case
        // (no extension characters) without running it.
        var index = leadingPlusCount(number)
        var digits = 0
        while index < number.count, digits < 3 {
            let scalar = number[index]
            if UnicodeClasses.isDecimalDigit(scalar) {
                digits += 1
            } else if !isPunctuationOrStar(scalar) {
                break
            }
            index += 1
        }
        guard digits == 3 else {
            // Fewer than three digits before the first letter or other character: only the two-digit
            // form can match.
            return number.count == 2 && number.allSatisfy(UnicodeClasses.isDecimalDigit)
        }
        while index < number.count, isTailCharacter(number[index]) { index += 1 }
        return index == number.count || validPhoneNumberPattern.matchesEntirely(number)
    }

    /// `[VALID_PUNCTUATION*]`, case-insensitively (so `X` too).
    private static func isPunctuationOrStar(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x2D, 0x78, 0x58, 0x2010...0x2015, 0x2212, 0x30FC, 0xFF0D...0xFF0F, 0x20, 0xA0, 0xAD, 0x200B, 0x2060,
            0x3000, 0x28, 0x29, 0xFF08, 0xFF09, 0xFF3B, 0xFF3D, 0x2E, 0x5B, 0x5D, 0x2F, 0x7E, 0x2053, 0x223C, 0xFF5E,
            0x2A:
            return true
        default:
            return false
        }
    }

    private static func isLetter(_ scalar: UInt32) -> Bool { (scalar | 0x20) &- 0x61 < 26 }

    /// `[VALID_PUNCTUATION*VALID_ALPHA\d]`.
    private static func isTailCharacter(_ scalar: UInt32) -> Bool {
        isPunctuationOrStar(scalar) || isLetter(scalar) || UnicodeClasses.isDecimalDigit(scalar)
    }

    /// `_maybe_strip_extension`: the extension digits and the number before them.
    static func stripExtension(_ number: [UInt32]) -> (extension: [UInt32], number: [UInt32]) {
        // Every way of writing an extension needs a letter or one of # ~ , ; (or their full-width forms):
        // skip the search for the plain digits-and-punctuation input most numbers are.
        guard number.contains(where: { !isPlainNumberCharacter($0) }),
            let match = extensionPattern.firstMatch(in: number)
        else { return ([], number) }
        let before = Array(number[..<match.start])
        guard isViablePhoneNumber(before) else { return ([], number) }
        for group in 1...max(1, match.groupCount) {
            if let range = match.range(group) { return (Array(number[range]), before) }
        }
        return ([], number)
    }

    private static func isPlainNumberCharacter(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x30...0x39, 0x20, 0x2D, 0x2E, 0x28, 0x29, 0x2B, 0x2F: return true
        default: return false
        }
    }

    /// `_maybe_extract_country_code`: the calling code and the national number after it, or 0 and nothing
    /// when the number is not written with one.
    static func extractCountryCode(_ number: [UInt32], metadata: PhoneRegionMetadata?) throws(PhoneNumberParseError)
        -> (Int, [UInt32])
    {
        if number.isEmpty { return (0, []) }
        let (source, fullNumber) = stripInternationalPrefixAndNormalize(
            number, internationalPrefix: metadata?.internationalPrefix)
        if source != .fromDefaultCountry {
            if fullNumber.count <= minLengthForNSN { throw PhoneNumberParseError(.tooShortAfterIDD) }
            let (code, rest) = extractLeadingCountryCode(fullNumber)
            if code != 0 { return (code, rest) }
            throw PhoneNumberParseError(.invalidCountryCode)
        } else if let metadata, let general = metadata.generalDescription {
            // The number may start with the default region's calling code without a + (`44 20 ...` in GB).
            let codeDigits = Array(String(metadata.countryCode).unicodeScalars.map(\.value))
            if fullNumber.starts(with: codeDigits) {
                var potential = Array(fullNumber[codeDigits.count...])
                potential = stripNationalPrefix(potential, metadata: metadata).number
                if (!general.patternMatches(fullNumber) && general.patternMatches(potential))
                    || testNumberLength(fullNumber, metadata: metadata) == .tooLong
                {
                    return (metadata.countryCode, potential)
                }
            }
        }
        return (0, [])
    }

    enum CountryCodeSource { case fromNumberWithPlusSign, fromNumberWithIDD, fromDefaultCountry }

    /// `_maybe_strip_i18n_prefix_and_normalize`.
    static func stripInternationalPrefixAndNormalize(_ number: [UInt32], internationalPrefix: PhonePattern?)
        -> (CountryCodeSource, [UInt32])
    {
        if number.isEmpty { return (.fromDefaultCountry, number) }
        let plusCount = leadingPlusCount(number)
        if plusCount > 0 { return (.fromNumberWithPlusSign, normalize(Array(number[plusCount...]))) }
        let normalized = normalize(number)
        // _parse_prefix_as_idd
        if let internationalPrefix, let match = internationalPrefix.prefixMatch(normalized) {
            // A calling code never starts with 0: then this was no international prefix.
            if let digit = normalized[match.end...].first(where: UnicodeClasses.isDecimalDigit),
                digitValue(digit) == 0
            {
                return (.fromDefaultCountry, normalized)
            }
            return (.fromNumberWithIDD, Array(normalized[match.end...]))
        }
        return (.fromDefaultCountry, normalized)
    }

    /// `_extract_country_code`: the shortest run of 1 to 3 leading digits that is a known calling code.
    static func extractLeadingCountryCode(_ number: [UInt32]) -> (Int, [UInt32]) {
        guard let first = number.first, first != 0x30 else { return (0, number) }
        var code = 0
        for length in 1...min(number.count, maxLengthCountryCode) {
            let scalar = number[length - 1]
            guard scalar &- 0x30 < 10 else { return (0, number) }
            code = code * 10 + Int(scalar - 0x30)
            if PhoneMetadataStore.shared.regionsByCallingCode[code] != nil {
                return (code, Array(number[length...]))
            }
        }
        return (0, number)
    }

    /// `_maybe_strip_national_prefix_carrier_code`: the number without its national prefix (and carrier
    /// code), transformed where the region says so; `stripped` tells whether anything was removed.
    static func stripNationalPrefix(_ number: [UInt32], metadata: PhoneRegionMetadata)
        -> (number: [UInt32], stripped: Bool)
    {
        guard !number.isEmpty, let prefixPattern = metadata.nationalPrefixForParsing,
            let match = prefixPattern.prefixMatch(number)
        else { return (number, false) }
        let general = metadata.generalDescription
        let originalIsViable = general?.patternMatches(number) ?? false
        let groupCount = match.groupCount
        if let rule = metadata.nationalPrefixTransformRule, !rule.isEmpty, groupCount > 0,
            match.range(groupCount) != nil
        {
            var transformed: [UInt32] = []
            PhonePattern.expand(rule, with: match, in: number, into: &transformed)
            transformed += number[match.end...]
            if originalIsViable && !(general?.patternMatches(transformed) ?? false) { return (number, false) }
            return (transformed, true)
        }
        let rest = Array(number[match.end...])
        if originalIsViable && !(general?.patternMatches(rest) ?? false) { return (number, false) }
        return (rest, true)
    }

    /// libphonenumber's `ValidationResult` for lengths.
    enum LengthCheck { case isPossible, isPossibleLocalOnly, tooShort, invalidLength, tooLong }

    /// `_test_number_length` for the general description (type UNKNOWN).
    static func testNumberLength(_ number: [UInt32], metadata: PhoneRegionMetadata) -> LengthCheck {
        guard let general = metadata.generalDescription, let minimum = general.possibleLengths.first,
            let maximum = general.possibleLengths.last
        else { return .invalidLength }
        let length = number.count
        if general.localOnlyLengths.contains(length) { return .isPossibleLocalOnly }
        if minimum == length { return .isPossible }
        if minimum > length { return .tooShort }
        if maximum < length { return .tooLong }
        return general.possibleLengths.dropFirst().contains(length) ? .isPossible : .invalidLength
    }

    // MARK: - Normalizing

    /// `_normalize`: vanity letters become digits when there are three or more of them; otherwise every
    /// digit (of any script) becomes its ASCII digit and everything else is dropped.
    static func normalize(_ number: [UInt32]) -> [UInt32] {
        var output: [UInt32] = []
        output.reserveCapacity(number.count)
        if isAlphaNumber(number) {
            for scalar in number {
                switch scalar {
                case 0x30...0x39: output.append(scalar)
                case 0x41...0x5A, 0x61...0x7A: output.append(keypadDigit(scalar | 0x20))
                default:
                    // Python upper-cases first: only `ı` (dotless i) and the long s reach A-Z that way.
                    if scalar == 0x131 { output.append(keypadDigit(0x69)) }
                    if scalar == 0x17F { output.append(keypadDigit(0x73)) }
                }
            }
        } else {
            for scalar in number {
                if scalar &- 0x30 < 10 {
                    output.append(scalar)
                } else if scalar >= 0x80, let value = digitValue(scalar) {
                    output.append(0x30 + UInt32(value))
                }
            }
        }
        return output
    }

    /// The Unicode scalar values of `text`, reading ASCII text byte by byte (the common case).
    static func scalarValues(of text: String) -> [UInt32] {
        var values: [UInt32] = []
        values.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            guard byte < 0x80 else { return text.unicodeScalars.map(\.value) }
            values.append(UInt32(byte))
        }
        return values
    }

    /// `_VALID_ALPHA_PHONE_PATTERN` `(?:.*?[A-Za-z]){3}.*` as a full match: three ASCII letters, no newline.
    static func isAlphaNumber(_ number: [UInt32]) -> Bool {
        var letters = 0
        for scalar in number {
            if scalar == 0x0A { return false }
            if (scalar | 0x20) &- 0x61 < 26 { letters += 1 }
        }
        return letters >= 3
    }

    private static func keypadDigit(_ lower: UInt32) -> UInt32 {
        switch lower {
        case 0x61...0x63: return 0x32  // abc
        case 0x64...0x66: return 0x33  // def
        case 0x67...0x69: return 0x34  // ghi
        case 0x6A...0x6C: return 0x35  // jkl
        case 0x6D...0x6F: return 0x36  // mno
        case 0x70...0x73: return 0x37  // pqrs
        case 0x74...0x76: return 0x38  // tuv
        default: return 0x39  // wxyz
        }
    }

    /// Python's `unicodedata.digit`: the value of a decimal digit or other digit character of any script.
    static func digitValue(_ scalar: UInt32) -> Int? {
        if scalar &- 0x30 < 10 { return Int(scalar - 0x30) }
        if scalar < 0x80 { return nil }
        guard let value = Unicode.Scalar(scalar) else { return nil }
        let properties = value.properties
        guard properties.numericType == .decimal || properties.numericType == .digit,
            let number = properties.numericValue, number >= 0, number <= 9, number == number.rounded()
        else { return nil }
        return Int(number)
    }

    static func isPlus(_ scalar: UInt32) -> Bool { scalar == 0x2B || scalar == 0xFF0B }

    static func leadingPlusCount(_ number: [UInt32]) -> Int {
        var count = 0
        while count < number.count, isPlus(number[count]) { count += 1 }
        return count
    }

    static func containsDigit(_ number: [UInt32]) -> Bool {
        number.contains { digitValue($0) != nil }
    }

    private static func indexOf(_ needle: [UInt32], in haystack: [UInt32]) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }
}
