import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

@Suite("Phone numbers in the API: lookup, countries, national input, SMS to landlines")
struct PhoneNumbersAPITests {
    struct Lookup: Sendable, CustomStringConvertible {
        let path: String
        let e164: String
        let valid: Bool
        let region: String?
        let type: String
        var description: String { path }
    }

    static let lookups: [Lookup] = [
        Lookup(
            path: "/v1/phone-numbers/+442079460958", e164: "+442079460958", valid: true, region: "GB",
            type: "fixed_line"),
        Lookup(
            path: "/v1/phone-numbers/%2B447400123456", e164: "+447400123456", valid: true, region: "GB", type: "mobile"),
        Lookup(
            path: "/v1/phone-numbers/07400%20123456?region=gb", e164: "+447400123456", valid: true, region: "GB",
            type: "mobile"),
        Lookup(
            path: "/v1/phone-numbers/(650)%20555-3434?region=US", e164: "+16505553434", valid: true, region: "US",
            type: "fixed_line_or_mobile"),
        Lookup(
            path: "/v1/phone-numbers/011%2044%207400%20123456?region=US", e164: "+447400123456", valid: true,
            region: "GB",
            type: "mobile"),
        Lookup(
            path: "/v1/phone-numbers/+86-13800000000", e164: "+8613800000000", valid: true, region: "CN", type: "mobile"
        ),
        Lookup(
            path: "/v1/phone-numbers/+390612345678", e164: "+390612345678", valid: true, region: "IT",
            type: "fixed_line"),
        // Possible (a length +44 allows) but in no numbering plan: Ofcom keeps 07700 900xxx for drama.
        Lookup(
            path: "/v1/phone-numbers/+447700900123", e164: "+447700900123", valid: false, region: nil, type: "unknown"),
    ]

    @Test("lookup parses, validates and classifies", arguments: lookups)
    func lookup(_ lookup: Lookup) async throws {
        try await GatewayHarness().run { client, _ in
            let result = try await client.call(.get, lookup.path)
            #expect(result.status == .ok)
            #expect(result.body["e164"] as? String == lookup.e164)
            #expect(result.body["valid"] as? Bool == lookup.valid)
            #expect(result.body["region"] as? String == lookup.region)
            #expect(result.body["type"] as? String == lookup.type)
            #expect(result.body["possible"] as? Bool == true)
        }
    }

    @Test("lookup returns every documented field, and the extension apart")
    func lookupFields() async throws {
        try await GatewayHarness().run { client, _ in
            let result = try await client.call(.get, "/v1/phone-numbers/(650)%20555-3434%20ext.%2012?region=US")
            #expect(result.body["extension"] as? String == "12")
            #expect(result.body["e164"] as? String == "+16505553434")
            #expect(result.body["national"] as? String == "(650) 555-3434")
            #expect(result.body["international"] as? String == "+1 650-555-3434")
            #expect(result.body["country_code"] as? Int == 1)
            #expect(result.body["national_number"] as? String == "6505553434")
            #expect(result.body["input"] as? String == "(650) 555-3434 ext. 12")
            let document = try #require(
                try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.get().utf8)) as? [String: Any])
            let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
            let schema = try #require(schemas["PhoneNumber"] as? [String: Any])
            let documented = Set((schema["properties"] as? [String: Any] ?? [:]).keys)
            #expect(Set(result.body.keys) == documented)
            #expect(Set(schema["required"] as? [String] ?? []) == documented.subtracting(["extension"]))
        }
    }

    struct Refusal: Sendable, CustomStringConvertible {
        let path: String
        let status: HTTPResponse.Status
        let code: String
        let reason: String?
        var description: String { path }
    }

    static let refusals: [Refusal] = [
        Refusal(
            path: "/v1/phone-numbers/hello", status: .badRequest, code: "invalid_phone_number", reason: "not_a_number"),
        Refusal(path: "/v1/phone-numbers/+1", status: .badRequest, code: "invalid_phone_number", reason: nil),
        Refusal(
            path: "/v1/phone-numbers/+999123456", status: .badRequest, code: "invalid_phone_number",
            reason: "invalid_country_code"),
        Refusal(
            path: "/v1/phone-numbers/+4412345678901234567", status: .badRequest, code: "invalid_phone_number",
            reason: "too_long"),
        Refusal(path: "/v1/phone-numbers/07400123456", status: .badRequest, code: "invalid_phone_number", reason: nil),
        Refusal(
            path: "/v1/phone-numbers/07400123456?region=XX", status: .badRequest, code: "invalid_request", reason: nil),
        Refusal(path: "/v1/countries?lang=not%20a%20tag", status: .badRequest, code: "invalid_request", reason: nil),
    ]

    @Test("garbage gets the one error shape with a reason", arguments: refusals)
    func refusal(_ refusal: Refusal) async throws {
        try await GatewayHarness().run { client, _ in
            let result = try await client.call(.get, refusal.path)
            #expect(result.status == refusal.status)
            #expect(result.body.errorCode == refusal.code)
            if let reason = refusal.reason {
                let message = result.body.error?["message"] as? String ?? ""
                #expect(message.contains(reason), "\(message)")
            }
        }
    }

    @Test("the lookup needs an API key")
    func lookupNeedsKey() async throws {
        try await GatewayHarness().run { client, _ in
            let result = try await client.call(.get, "/v1/phone-numbers/+442079460958", key: nil)
            #expect(result.status == .unauthorized)
        }
    }

    @Test("countries lists every region with localized names, examples and patterns")
    func countries() async throws {
        try await GatewayHarness().run { client, _ in
            let chinese = try await client.call(.get, "/v1/countries?lang=zh-CN")
            #expect(chinese.status == .ok)
            let list = try #require(chinese.body["countries"] as? [[String: Any]])
            #expect(list.count == PhoneRegion.all.count)
            #expect(list.count > 240)
            let china = try #require(list.first { $0["region"] as? String == "CN" })
            #expect(china["name"] as? String == "中国")
            #expect(china["calling_code"] as? Int == 86)
            let example = try #require(china["example_mobile"] as? String)
            let pattern = try #require(china["mobile_pattern"] as? String)
            #expect(String(example.dropFirst(3)).wholeMatch(of: try Regex(pattern)) != nil)
            let servers = try #require(china["providers"] as? [[String: Any]])
            // Twilio and Firebase come first; plugins installed after them follow.
            #expect(servers.prefix(2).map { $0["id"] as? String } == ["twilio", "firebase"])
            #expect(servers.first { $0["id"] as? String == "firebase" }?["channels"] as? [String] == ["sms"])
            #expect(servers.first { $0["id"] as? String == "idaas" }?["channels"] as? [String] == ["sms"])
            #expect((servers.first?["channels"] as? [String])?.contains("voice") == true)
            let english = try await client.call(.get, "/v1/countries")
            let englishList = try #require(english.body["countries"] as? [[String: Any]])
            #expect(englishList.first { $0["region"] as? String == "DE" }?["name"] as? String == "Germany")
            let spanish = try await client.call(.get, "/v1/countries?lang=es")
            let spanishList = try #require(spanish.body["countries"] as? [[String: Any]])
            #expect(spanishList.first { $0["region"] as? String == "DE" }?["name"] as? String == "Alemania")
        }
    }

    @Test("countries?provider=idaas is the tenant's area-code list: its order, names, regex and preferred entry")
    func providerCountries() async throws {
        try await GatewayHarness().run { client, _ in
            let answer = try await client.call(.get, "/v1/countries?provider=idaas&lang=zh-TW")
            #expect(answer.status == .ok)
            #expect(answer.body["provider"] as? String == "idaas")
            #expect(answer.body["lang"] as? String == "zh-TW")
            #expect(answer.body["preferred_region"] as? String == "CN")
            let list = try #require(answer.body["countries"] as? [[String: Any]])
            #expect(list.map { $0["region"] as? String } == ["CN", "HK", "MO", "TW", "SG"])
            #expect(list.map { $0["calling_code"] as? Int } == [86, 852, 853, 886, 65])
            #expect(list.map { $0["preferred"] as? Bool } == [true, false, false, false, false])
            let taiwan = try #require(list.first { $0["region"] as? String == "TW" })
            #expect(taiwan["name"] as? String == "中國臺灣")
            #expect(taiwan["names"] as? [String: String] == ["zh-CN": "中国台湾", "zh-TW": "中國臺灣", "en": "Taiwan"])
            #expect(taiwan["mobile_regex_input"] as? String == "+886-<number>")
            #expect(taiwan["calling_code_suffixes"] as? [String] == [])
            // The regex is the tenant's, verbatim, and takes the dashed form the input names.
            let china = try #require(list.first)
            let regex = try Regex(try #require(china["mobile_regex"] as? String))
            #expect("+86-13800138000".wholeMatch(of: regex) != nil)
            #expect("+86-23800138000".wholeMatch(of: regex) == nil)
            let example = try #require(china["example_mobile"] as? String)
            #expect(example.hasPrefix("+86") && "+86-\(example.dropFirst(3))".wholeMatch(of: regex) != nil)

            // zh-Hans reads the tenant's zh-CN name, en-GB its en name; a language it lacks, the gateway's own.
            let hans = try await client.call(.get, "/v1/countries?provider=idaas&lang=zh-Hans")
            #expect((hans.body["countries"] as? [[String: Any]])?.first?["name"] as? String == "中国大陆")
            let british = try await client.call(.get, "/v1/countries?provider=idaas&lang=en-GB")
            #expect((british.body["countries"] as? [[String: Any]])?.last?["name"] as? String == "Singapore")
            let german = try await client.call(.get, "/v1/countries?provider=idaas&lang=de")
            #expect((german.body["countries"] as? [[String: Any]])?.last?["name"] as? String == "Singapur")
        }
    }

    @Test("countries?provider= for an unknown provider, or one without a list of its own, is 404")
    func providerCountriesRefused() async throws {
        try await GatewayHarness().run { client, _ in
            let unknown = try await client.call(.get, "/v1/countries?provider=nope")
            #expect(unknown.status == .notFound)
            #expect(unknown.body.errorCode == "not_found")
            #expect((unknown.body.error?["message"] as? String)?.contains("No provider named `nope`") == true)
            let twilio = try await client.call(.get, "/v1/countries?provider=twilio")
            #expect(twilio.status == .notFound)
            #expect(twilio.body.errorCode == "not_found")
            #expect((twilio.body.error?["message"] as? String)?.contains("twilio") == true)
            let noKey = try await client.call(.get, "/v1/countries?provider=idaas", key: nil)
            #expect(noKey.status == .unauthorized)
        }
    }

    @Test("a start in national form with a region is stored in E.164")
    func nationalStart() async throws {
        try await GatewayHarness().run { client, runtime in
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "07400 123456", "region": "GB"}"#)
            #expect(start.status == .created)
            #expect(start.body["to"] as? String == "+447400123456")
            #expect(runtime.sandbox?.outbox.last(to: "+447400123456") != nil)
            let noRegion = try await client.call(.post, "/v1/verifications", json: #"{"to": "07400 123457"}"#)
            #expect(noRegion.body.errorCode == "invalid_phone_number")
            let badRegion = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "07400 123457", "region": "Narnia"}"#)
            #expect(badRegion.body.errorCode == "invalid_request")
        }
    }

    @Test("an SMS to a fixed line is refused before any vendor is called; a voice call is not")
    func smsToLandline() async throws {
        try await GatewayHarness().run { client, runtime in
            let sms = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+442079460958", "channel": "sms"}"#)
            #expect(sms.status == .badRequest)
            #expect(sms.body.errorCode == "unsupported_destination")
            #expect(runtime.sandbox?.outbox.all.isEmpty == true)
            let voice = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+442079460958", "channel": "voice"}"#)
            #expect(voice.status == .created)
            #expect(runtime.sandbox?.outbox.all.count == 1)
        }
    }
}
