import Foundation
import GatewayCore
import Testing

@Suite("PhoneNumber")
struct PhoneNumberTests {
    @Test(
        "formatted international input parses to E.164",
        arguments: [
            ("+16505553434", "+16505553434"),
            ("+1 650 555 3434", "+16505553434"),
            ("+1-650-555-3434", "+16505553434"),
            ("+1 (650) 555-3434", "+16505553434"),
            ("+1.650.555.3434", "+16505553434"),
            ("  +1 650 555 3434  ", "+16505553434"),
            ("+1\u{00A0}650\u{00A0}555\u{00A0}3434", "+16505553434"),  // no-break spaces
            ("+1\u{2010}650\u{2013}555\u{2015}3434", "+16505553434"),  // Unicode dashes
            ("+44\u{3000}20 7946 0958", "+442079460958"),  // ideographic space
            ("＋１６５０５５５３４３４", "+16505553434"),  // full-width plus and digits
            ("+８１ ３ １２３４ ５６７８", "+81312345678"),
            ("＋４４ ２０ ７９４６ ０９５８", "+442079460958"),  // every full-width digit 0-9 is covered
            ("0016505553434", "+16505553434"),  // international prefix 00
            ("00 44 20 7946 0958", "+442079460958"),
            ("+12345678", "+12345678"),  // 8 digits: the shortest accepted
            ("+123456789012345", "+123456789012345"),  // 15 digits: the longest accepted
            // Note (phone-number parser, libphonenumber metadata): `/` is libphonenumber punctuation, as in
            // German and Austrian `030/1234567`, so it is accepted now; it used to be a rejected case below.
            ("+1/650/555/3434", "+16505553434"),
        ])
    func parses(_ input: String, _ e164: String) throws {
        let number = try PhoneNumber(parsing: input)
        #expect(number.e164 == e164)
        #expect(number.digits == e164.dropFirst())
    }

    @Test(
        "malformed input is an invalid_phone_number with the reason in the message",
        arguments: [
            ("", "no_digits"),
            ("+", "no_digits"),
            (" ( ) - ", "no_digits"),
            ("+1234567", "too_short"),  // 7 digits
            ("001234567", "too_short"),  // 7 digits after the 00 prefix
            ("+1234567890123456", "too_long"),  // 16 digits
            ("6505553434", "invalid_country_code"),  // national form, no region to resolve it
            ("+0123456789", "invalid_country_code"),
            ("0001234567890", "invalid_country_code"),  // 00 then a country code starting with 0
            ("+1 650 CALL NOW", "not_a_number"),
            ("+1650555343x", "not_a_number"),
            ("1+6505553434", "not_a_number"),  // plus after a digit
            ("++16505553434", "not_a_number"),
            ("+1\t6505553434", "not_a_number"),
            ("+١٦٥٠٥٥٥٣٤٣٤", "not_a_number"),  // Arabic-Indic digits are not accepted
        ])
    func rejects(_ input: String, _ reason: String) {
        let error = expectGatewayError(.invalidPhoneNumber) { () throws(GatewayError) in
            try PhoneNumber(parsing: input)
        }
        #expect(error?.message.contains("(reason: \(reason))") == true, "message: \(error?.message ?? "-")")
        let digits = String(input.filter(\.isNumber))
        if digits.count >= 4 {
            #expect(error?.message.contains(digits) == false, "the message must never echo the number")
        }
    }

    @Test("the masked form keeps the country code, first digits and last two digits")
    func masking() throws {
        let number = try PhoneNumber(parsing: "+16505553434")
        #expect(number.masked == "+1650*****34")
        #expect(number.description == "+1650*****34", "interpolating a number must never log it in full")
        #expect("\(number)" == "+1650*****34")
        #expect(try PhoneNumber(parsing: "+442079460958").masked == "+4420******58")
    }

    @Test("masking a short value hides all of it", arguments: ["", "+1", "+123456"])
    func maskingShortValues(_ value: String) {
        #expect(PhoneNumber.mask(value) == String(repeating: "*", count: value.count))
    }

    @Test("differently formatted inputs of one number are equal")
    func equality() throws {
        let plain = try PhoneNumber(parsing: "+16505553434")
        let formatted = try PhoneNumber(parsing: "00 1 (650) 555-3434")
        #expect(plain == formatted)
        #expect(Set([plain, formatted]).count == 1)
    }

    @Test("encodes as its E.164 string and decodes back")
    func codableRoundTrip() throws {
        let number = try PhoneNumber(parsing: "+1 650 555 3434")
        let data = try JSONEncoder().encode(number)
        #expect(String(decoding: data, as: UTF8.self) == #""+16505553434""#)
        #expect(try JSONDecoder().decode(PhoneNumber.self, from: data) == number)
    }

    @Test("decoding normalizes a formatted number")
    func decodingNormalizes() throws {
        let decoded = try JSONDecoder().decode(PhoneNumber.self, from: Data(#""+1 (650) 555-3434""#.utf8))
        #expect(decoded.e164 == "+16505553434")
    }

    @Test("decoding an invalid number fails with the parse reason")
    func decodingFailure() {
        let error = #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PhoneNumber.self, from: Data(#""+1234""#.utf8))
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(context.debugDescription.contains("too_short"))
    }

    @Test("decoding a non-string fails")
    func decodingNonString() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PhoneNumber.self, from: Data("16505553434".utf8))
        }
    }
}
