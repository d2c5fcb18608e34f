import Foundation
import GatewayCore
import Hummingbird

/// `GET /v1/phone-numbers/{number}` (parse, validate, type) and `GET /v1/countries` (every region with
/// its calling code, localized name, example mobile number and mobile pattern; with `provider`, the vendor's
/// own list, as its SDK's country picker shows it).
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
        if let providerID = request.uri.queryParameters.get("provider").map({ String($0) }) {
            return JSONResponse.response(try await providerCountries(providerID, lang: lang))
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

    /// `GET /v1/countries?provider=…`: the vendor's own country list, in its order (IDaaS: the tenant's area
    /// codes with their display names, mobile patterns and preferred entry). `name` is the vendor's name in
    /// `lang` when it has one, else the gateway's.
    func providerCountries(_ providerID: String, lang: String) async throws(GatewayError) -> JSONValue {
        guard providerID.count <= 40, let provider = registry.provider(providerID) else {
            // As for an action of an unknown provider: the list asked for does not exist.
            throw GatewayError(.notFound, "No provider named `\(providerID.prefix(40))` is configured.")
        }
        guard let list = try await provider.countryList() else {
            throw GatewayError(
                .notFound,
                "Provider `\(providerID)` keeps no country list of its own; without `provider`, GET /v1/countries lists "
                    + "every region with the providers that serve it.")
        }
        let countries = list.entries.map { entry -> JSONValue in
            let region = entry.region.flatMap { PhoneRegion.named($0) }
            let name =
                entry.displayName(for: lang) ?? region?.name(locale: lang) ?? entry.region ?? "+\(entry.callingCode)"
            return .object([
                "region": entry.region.map(JSONValue.string) ?? .null,
                "calling_code": .number(Double(entry.callingCode)),
                "calling_code_suffixes": .array(entry.callingCodeSuffixes.map(JSONValue.string)),
                "name": .string(name),
                "names": .object(entry.displayNames.mapValues(JSONValue.string)),
                "mobile_regex": entry.mobilePattern.map(JSONValue.string) ?? .null,
                "mobile_regex_input": entry.mobilePatternInput.map(JSONValue.string) ?? .null,
                "preferred": .bool(entry.preferred),
                "example_mobile": region?.exampleNumber(type: .mobile).map { .string($0.e164) } ?? .null,
            ])
        }
        return .object([
            "lang": .string(lang), "provider": .string(providerID),
            "preferred_region": list.preferredRegion.map(JSONValue.string) ?? .null, "countries": .array(countries),
        ])
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
