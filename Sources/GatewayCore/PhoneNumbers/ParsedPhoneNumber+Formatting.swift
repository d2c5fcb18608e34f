extension ParsedPhoneNumber {
    /// The international form, as libphonenumber writes it (`+44 20 7946 0958`), with the extension.
    public var international: String { PhoneNumberFormatting.format(self, national: false) }

    /// The national form, as the region's own people write it (`020 7946 0958`), with the extension.
    public var national: String { PhoneNumberFormatting.format(self, national: true) }
}

/// libphonenumber's `format_number` for the INTERNATIONAL and NATIONAL formats.
enum PhoneNumberFormatting {
    static let defaultExtensionPrefix = " ext. "

    static func format(_ number: ParsedPhoneNumber, national: Bool) -> String {
        guard let metadata = PhoneMetadataStore.shared.mainMetadata(forCallingCode: number.countryCode) else {
            return number.nationalNumber
        }
        var formatted = formatNationalNumber(number.nationalScalars, metadata: metadata, national: national)
        if let digits = number.extension, !digits.isEmpty {
            formatted += (metadata.preferredExtensionPrefix ?? defaultExtensionPrefix) + digits
        }
        return national ? formatted : "+\(number.countryCode) \(formatted)"
    }

    /// `_format_nsn`.
    static func formatNationalNumber(_ digits: [UInt32], metadata: PhoneRegionMetadata, national: Bool) -> String {
        let available =
            metadata.internationalNumberFormats.isEmpty || national
            ? metadata.numberFormats : metadata.internationalNumberFormats
        guard let rule = chooseFormat(available, for: digits) else { return string(digits) }
        var template = rule.format.unicodeScalars.map(\.value)
        if national, let prefixRule = rule.nationalPrefixFormattingRule, !prefixRule.isEmpty {
            template = replacingFirstGroup(in: template, with: prefixRule.unicodeScalars.map(\.value))
        }
        return string(rule.pattern.replacing(in: digits, with: template))
    }

    /// `_choose_formatting_pattern_for_number`.
    static func chooseFormat(_ formats: [PhoneNumberFormatRule], for digits: [UInt32]) -> PhoneNumberFormatRule? {
        for rule in formats {
            if let leading = rule.leadingDigitsPattern, !leading.matchesPrefix(digits) { continue }
            if rule.pattern.matchesEntirely(digits) { return rule }
        }
        return nil
    }

    /// `re.sub(_FIRST_GROUP_PATTERN, rule, format, count=1)`: the first `\N` of the format becomes the
    /// national prefix formatting rule, whose own `\1` stands for that `\N`.
    static func replacingFirstGroup(in format: [UInt32], with rule: [UInt32]) -> [UInt32] {
        var index = 0
        while index + 1 < format.count {
            if format[index] == 0x5C, format[index + 1] &- 0x30 < 10 {
                let group = [format[index], format[index + 1]]
                var replacement: [UInt32] = []
                var ruleIndex = 0
                while ruleIndex < rule.count {
                    if rule[ruleIndex] == 0x5C, ruleIndex + 1 < rule.count, rule[ruleIndex + 1] == 0x31 {
                        replacement += group
                        ruleIndex += 2
                    } else {
                        replacement.append(rule[ruleIndex])
                        ruleIndex += 1
                    }
                }
                return Array(format[..<index]) + replacement + Array(format[(index + 2)...])
            }
            index += 1
        }
        return format
    }

    static func string(_ scalars: [UInt32]) -> String {
        var text = String.UnicodeScalarView()
        for value in scalars {
            if let scalar = Unicode.Scalar(value) { text.append(scalar) }
        }
        return String(text)
    }
}
