import Foundation
import GatewayCore
import Hummingbird

/// `GET /v1/phone-numbers/{number}` (parse, validate, type) and `GET /v1/countries` (every region with
/// its calling code, localized name, example mobile number and mobile pattern).
struct PhoneNumbersController: Sendable {
    let registry: ProviderRegistry

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("phone-numbers/{number}", use: lookup)
        group.get("countries", use: countries)
    }

    @Sendable func lookup(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let raw = try context.parameters.require("number")
        // `+` is literal in a path; clients that encode it send `%2B`, and spaces arrive as `%20`.
        let input = raw.removingPercentEncoding ?? raw
        guard input.count <= 64 else {
            throw GatewayError(.invalidPhoneNumber, "The number is too long to be a phone number (reason: too_long).")
        }
        let region = try Self.region(request.uri.queryParameters.get("region"))
        let number = try PhoneNumber(parsing: input, defaultRegion: region)
        var fields: [String: JSONValue] = [
            "input": .string(input),
            "valid": .bool(number.isValid),
            "possible": .bool(number.isPossible),
            "e164": .string(number.e164),
            "region": number.region.map(JSONValue.string) ?? .null,
            "country_code": .number(Double(number.countryCode)),
            "national_number": .string(number.nationalNumber),
            "type": .string(number.type.rawValue),
            "international": .string(number.international),
            "national": .string(number.national),
            "sms_capable": .bool(!number.type.refusesSMS),
        ]
        if let ext = number.extension { fields["extension"] = .string(ext) }
        return JSONResponse.response(.object(fields))
    }

    @Sendable func countries(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let lang = request.uri.queryParameters.get("lang").map { String($0) } ?? "en"
        guard lang.count <= 35, VerificationsController.isLanguageTag(lang) else {
            throw GatewayError.invalidRequest("`lang` must be a language tag such as `zh-CN`.")
        }
        let providers = registry.providerIDs.compactMap { id in registry.provider(id).map { (id, $0.capabilities) } }
        let countries = PhoneRegion.all.map { region -> JSONValue in
            let example = region.exampleNumber(type: .mobile)
            // The configured providers that do not exclude the region, with the channels each can send.
            let serving = providers.filter { $0.1.serves(region: region.code) }.map { id, capabilities in
                JSONValue.object([
                    "id": .string(id),
                    "channels": .array(
                        capabilities.channels.filter(\.needsPhoneNumber).map(\.rawValue).sorted().map(JSONValue.string)),
                ])
            }
            return .object([
                "providers": .array(serving),
                "region": .string(region.code),
                "calling_code": .number(Double(region.callingCode)),
                "name": .string(region.name(locale: lang)),
                "example_mobile": example.map { .string($0.e164) } ?? .null,
                "mobile_pattern": region.nationalNumberPattern(type: .mobile).map(JSONValue.string) ?? .null,
                "national_prefix": region.nationalPrefix.map(JSONValue.string) ?? .null,
            ])
        }
        return JSONResponse.response(.object(["lang": .string(lang), "countries": .array(countries)]))
    }

    /// Validates a `region` given with a national number: a region libphonenumber knows, any case.
    static func region(_ value: (some StringProtocol)?, name: String = "region") throws(GatewayError) -> String? {
        guard let value else { return nil }
        guard let region = PhoneRegion.named(String(value)) else {
            throw GatewayError.invalidRequest("`\(name)` must be a two-letter region code such as `GB`.")
        }
        return region.code
    }
}
