import Foundation
import GatewayCore
import Testing

/// A hand-written case: what a user types, where, and what the gateway must make of it (checked against
/// the `phonenumbers` package, libphonenumber's Python port, when written).
struct TypedNumber: Sendable, CustomTestStringConvertible {
    var input: String
    var region: String?
    var e164: String
    var valid: Bool
    var numberRegion: String?
    var type: PhoneNumberType
    var national: String

    init(
        _ input: String, _ region: String?, _ e164: String, valid: Bool = true, _ numberRegion: String?,
        _ type: PhoneNumberType, national: String
    ) {
        self.input = input
        self.region = region
        self.e164 = e164
        self.valid = valid
        self.numberRegion = numberRegion
        self.type = type
        self.national = national
    }

    var testDescription: String { "\(input.debugDescription) in \(region ?? "no region")" }
}

@Suite("Phone number parsing")
struct PhoneNumberParsingTests {
    @Test(
        "what users type becomes one E.164 number, with region, type and national form",
        arguments: [
            // The issue's own examples.
            TypedNumber("(650) 555-3434", "US", "+16505553434", "US", .fixedLineOrMobile, national: "(650) 555-3434"),
            TypedNumber("0044 7400 123456", "GB", "+447400123456", "GB", .mobile, national: "07400 123456"),
            TypedNumber("07400 123456", "GB", "+447400123456", "GB", .mobile, national: "07400 123456"),
            TypedNumber("+86-13800000000", nil, "+8613800000000", "CN", .mobile, national: "138 0000 0000"),
            TypedNumber("+44 20-7946 0958", nil, "+442079460958", "GB", .fixedLine, national: "020 7946 0958"),
            // UK: the 0 trunk prefix, (0) written inside an international number, the code without +.
            TypedNumber("020 7946 0958", "GB", "+442079460958", "GB", .fixedLine, national: "020 7946 0958"),
            TypedNumber("+44 (0) 20 7946 0958", nil, "+442079460958", "GB", .fixedLine, national: "020 7946 0958"),
            TypedNumber("44 20 7946 0958", "GB", "+442079460958", "GB", .fixedLine, national: "020 7946 0958"),
            TypedNumber("07700 900123", "GB", "+447700900123", valid: false, nil, .unknown, national: "07700 900123"),
            // Italy: the leading 0 belongs to the number and stays in E.164.
            TypedNumber("+39 06 1234 5678", nil, "+390612345678", "IT", .fixedLine, national: "06 1234 5678"),
            TypedNumber("06 1234 5678", "IT", "+390612345678", "IT", .fixedLine, national: "06 1234 5678"),
            TypedNumber("+39 312 345 6789", nil, "+393123456789", "IT", .mobile, national: "312 345 6789"),
            // Argentina: mobiles are +54 9 internationally, 0 area 15 number nationally.
            TypedNumber("+54 9 11 1234 5678", nil, "+5491112345678", "AR", .mobile, national: "011 15-1234-5678"),
            TypedNumber("011 15 2345-6789", "AR", "+5491123456789", "AR", .mobile, national: "011 15-2345-6789"),
            TypedNumber("11 15 2345 6789", "AR", "+5491123456789", "AR", .mobile, national: "011 15-2345-6789"),
            TypedNumber("0 11 4123 4567", "AR", "+541141234567", "AR", .fixedLine, national: "011 4123-4567"),
            // Mexico dropped the 1 before mobiles in 2019: with it, the number is no longer valid.
            TypedNumber("+52 55 1234 5678", nil, "+525512345678", "MX", .fixedLineOrMobile, national: "55 1234 5678"),
            TypedNumber("55 1234 5678", "MX", "+525512345678", "MX", .fixedLineOrMobile, national: "55 1234 5678"),
            TypedNumber(
                "+52 1 55 1234 5678", nil, "+5215512345678", valid: false, "MX", .unknown, national: "15512345678"),
            // China.
            TypedNumber("13800000000", "CN", "+8613800000000", "CN", .mobile, national: "138 0000 0000"),
            TypedNumber("010 1234 5678", "CN", "+861012345678", "CN", .fixedLine, national: "010 1234 5678"),
            TypedNumber("0086 138 0013 8000", "CN", "+8613800138000", "CN", .mobile, national: "138 0013 8000"),
            // NANP: the 1 trunk prefix, 011 out of the US, regions sharing +1.
            TypedNumber("1 650 555 3434", "US", "+16505553434", "US", .fixedLineOrMobile, national: "(650) 555-3434"),
            TypedNumber("011 44 20 7946 0958", "US", "+442079460958", "GB", .fixedLine, national: "020 7946 0958"),
            TypedNumber("+1 242 357 1234", nil, "+12423571234", "BS", .mobile, national: "(242) 357-1234"),
            TypedNumber("+1 604 555 5555", nil, "+16045555555", "CA", .fixedLineOrMobile, national: "(604) 555-5555"),
            TypedNumber("650 555 3434", "CA", "+16505553434", "US", .fixedLineOrMobile, national: "(650) 555-3434"),
            TypedNumber("+1 800 234 5678", nil, "+18002345678", "US", .tollFree, national: "(800) 234-5678"),
            TypedNumber(
                "+1 555 123 4567", nil, "+15551234567", valid: false, nil, .unknown, national: "(555) 123-4567"),
            // Elsewhere, with each region's own prefixes.
            TypedNumber("030/1234567", "DE", "+49301234567", "DE", .fixedLine, national: "030 1234567"),
            TypedNumber("+49 1512 3456789", nil, "+4915123456789", "DE", .mobile, national: "01512 3456789"),
            TypedNumber("06 12 34 56 78", "FR", "+33612345678", "FR", .mobile, national: "06 12 34 56 78"),
            TypedNumber("090-1234-5678", "JP", "+819012345678", "JP", .mobile, national: "090-1234-5678"),
            TypedNumber("８ ９１２ ３４５ ６７ ８９", "RU", "+79123456789", "RU", .mobile, national: "8 (912) 345-67-89"),
            TypedNumber("810 44 20 7946 0958", "RU", "+442079460958", "GB", .fixedLine, national: "020 7946 0958"),
            TypedNumber("0011 44 20 7946 0958", "AU", "+442079460958", "GB", .fixedLine, national: "020 7946 0958"),
            TypedNumber("0412 345 678", "AU", "+61412345678", "AU", .mobile, national: "0412 345 678"),
            TypedNumber("0 21 11 91234 5678", "BR", "+5511912345678", "BR", .mobile, national: "(11) 91234-5678"),
            TypedNumber("098765 43210", "IN", "+919876543210", "IN", .mobile, national: "098765 43210"),
            TypedNumber("050 123 4567", "SA", "+966501234567", "SA", .mobile, national: "050 123 4567"),
            TypedNumber("+800 1234 5678", nil, "+80012345678", "001", .tollFree, national: "1234 5678"),
            TypedNumber(
                "+882 34 1234 5678", nil, "+8823412345678", valid: false, "001", .unknown, national: "3412345678"),
            // A lower-case region is accepted.
            TypedNumber("020 7946 0958", "gb", "+442079460958", "GB", .fixedLine, national: "020 7946 0958"),
        ])
    func typedNumbers(_ typed: TypedNumber) throws {
        let number = try PhoneNumber(parsing: typed.input, defaultRegion: typed.region)
        #expect(number.e164 == typed.e164)
        #expect(number.isValid == typed.valid)
        #expect(number.region == typed.numberRegion)
        #expect(number.type == typed.type)
        #expect(number.national == typed.national)
        #expect(number.digits == typed.e164.dropFirst())
        #expect(number.extension == nil)
    }

    @Test("the parts of a number, its display forms and vendors' forms")
    func parts() throws {
        let number = try PhoneNumber(parsing: "+39 06 1234 5678")
        #expect(number.countryCode == 39)
        #expect(number.nationalNumber == "0612345678")
        #expect(number.international == "+39 06 1234 5678")
        #expect(number.national == "06 1234 5678")
        #expect(number.dashedE164 == "+39-0612345678")
        #expect(number.digits == "390612345678")
        #expect(number.isPossible)
        #expect(try PhoneNumber(parsing: "13800000000", defaultRegion: "CN").dashedE164 == "+86-13800000000")
    }

    @Test(
        "an extension is kept apart and never part of E.164 or the display forms",
        arguments: [
            ("+1 650 555 3434 ext. 123", "123"), ("+1 650 555 3434 x123", "123"), ("+1 650-555-3434 #45", "45"),
            ("+1 (650) 555-3434;ext=7", "7"), ("+1 650 555 3434 extension 9", "9"), ("+1 650 555 3434 ext１２", "12"),
            ("+1 650 555 3434 - 503#", "503"),
        ])
    func extensions(_ input: String, _ extensionDigits: String) throws {
        let number = try PhoneNumber(parsing: input)
        #expect(number.e164 == "+16505553434")
        #expect(number.extension == extensionDigits)
        #expect(number.international == "+1 650-555-3434")
        #expect(number == (try PhoneNumber(parsing: "+16505553434")), "the extension is not part of identity")
        let encoded = try JSONEncoder().encode(number)
        #expect(String(decoding: encoded, as: UTF8.self) == #""+16505553434""#)
    }

    @Test(
        "a number that is possible but not valid still parses, and says so",
        arguments: [
            ("+1 555 123 4567", nil), ("07700 900123", "GB"), ("+44 20 1234 567", nil), ("+882 34 1234 5678", nil),
        ])
    func possibleButInvalid(_ input: String, _ region: String?) throws {
        let number = try PhoneNumber(parsing: input, defaultRegion: region)
        #expect(!number.isValid)
        #expect(number.isPossible)
        #expect(number.type == .unknown)
        #expect(!number.type.canReceiveSMS)
    }

    @Test("mobile and fixed-or-mobile numbers can receive an SMS; landlines and toll-free cannot")
    func smsCapability() throws {
        #expect(try PhoneNumber(parsing: "+447400123456").type.canReceiveSMS)
        #expect(try PhoneNumber(parsing: "+16505553434").type.canReceiveSMS)
        #expect(try !PhoneNumber(parsing: "+442079460958").type.canReceiveSMS)
        #expect(try !PhoneNumber(parsing: "+18002345678").type.canReceiveSMS)
    }

    @Test(
        "garbage is an invalid_phone_number with its reason, and the message never repeats the number",
        arguments: [
            ("", nil, "no_digits"), ("   ", "US", "no_digits"), ("+", nil, "no_digits"), ("-()", "GB", "no_digits"),
            ("abc", "US", "not_a_number"), ("+1 650 555 34 34 call me", nil, "not_a_number"),
            ("1-800-FLOWERS", "US", "not_a_number"), ("+44 20 7946 0958 / +44 20 7946 0959", nil, "not_a_number"),
            ("7946 0958", nil, "invalid_country_code"), ("011 44 20 7946 0958", nil, "invalid_country_code"),
            ("020 7946 0958", "ZZ", "invalid_country_code"), ("+999 1234 5678", nil, "invalid_country_code"),
            ("+44 2", nil, "too_short"), ("+1 650 555", nil, "too_short"), ("1", "US", "not_a_number"),
            ("+49 1234 5678 9012 3456 78", nil, "too_long"), ("+44 20 7946 0958 1234 5", nil, "too_long"),
            (String(repeating: "1", count: 251), "US", "too_long"), ("+١٦٥٠٥٥٥٣٤٣٤", nil, "not_a_number"),
        ] as [(String, String?, String)])
    func garbage(_ input: String, _ region: String?, _ reason: String) {
        let error = expectGatewayError(.invalidPhoneNumber) { () throws(GatewayError) in
            try PhoneNumber(parsing: input, defaultRegion: region)
        }
        #expect(error?.message.contains("(reason: \(reason))") == true, "message: \(error?.message ?? "-")")
        let digits = String(input.filter(\.isNumber))
        if digits.count >= 4 {
            #expect(error?.message.contains(digits) == false)
        }
    }

    @Test("libphonenumber's own parser accepts vanity letters and text around the number; the gateway does not")
    func gatewayIsStricterThanLibphonenumber() throws {
        let vanity = try PhoneNumberParser.parse("1-800-FLOWERS", defaultRegion: "US")
        #expect(vanity.e164 == "+18003569377")
        #expect(vanity.type == .tollFree)
        #expect(throws: GatewayError.self) { try PhoneNumber(parsing: "1-800-FLOWERS", defaultRegion: "US") }
        let texted = try PhoneNumberParser.parse("Tel: +44 20 7946 0958.")
        #expect(texted.e164 == "+442079460958")
        #expect(throws: GatewayError.self) { try PhoneNumber(parsing: "Tel: +44 20 7946 0958.") }
    }

    @Test("libphonenumber's error types for the raw parser")
    func rawParserErrors() {
        #expect(throws: PhoneNumberParseError(.invalidCountryCode)) { try PhoneNumberParser.parse("020 7946 0958") }
        #expect(throws: PhoneNumberParseError(.notANumber)) { try PhoneNumberParser.parse("+1 2", defaultRegion: "US") }
        #expect(throws: PhoneNumberParseError(.tooShortAfterIDD)) {
            try PhoneNumberParser.parse("011 12", defaultRegion: "US")
        }
        #expect(throws: PhoneNumberParseError(.tooShortNSN)) { try PhoneNumberParser.parse("+44 2") }
        #expect(throws: PhoneNumberParseError(.tooLong)) {
            try PhoneNumberParser.parse("+49 1234 5678 9012 3456 78")
        }
        #expect(throws: PhoneNumberParseError(.notANumber, reason: .noDigits)) { try PhoneNumberParser.parse("") }
    }

    @Test("parsing is safe from many tasks at once (the metadata is loaded once)")
    func concurrentParsing() async throws {
        let results = await withTaskGroup(of: String?.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let input = index.isMultiple(of: 2) ? "020 7946 0958" : "+44 20 7946 0958"
                    return try? PhoneNumber(parsing: input, defaultRegion: "GB").e164
                }
            }
            var all: [String?] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 64)
        #expect(Set(results) == ["+442079460958"])
    }
}
