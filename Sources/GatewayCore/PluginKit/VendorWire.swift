import Foundation
import HTTPTypes

/// Wire plumbing several plugins spell the same way: Basic credentials, form bodies, language tags and the
/// date forms vendors write.
extension VendorHTTPClient {
    /// `Basic base64(user:password)`.
    public static func basicAuthorization(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// The token of a `Bearer` `Authorization` value (the scheme in any case); `nil` when it is not one.
    public static func bearerToken(_ header: String?) -> String? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return header.dropFirst(7).trimmingCharacters(in: .whitespaces)
    }

    /// The user and password of a `Basic` `Authorization` value (the scheme in any case); `nil` when it is not one.
    public static func basicCredentials(_ header: String?) -> (user: String, password: String)? {
        guard let header, header.count > 6, header.prefix(6).lowercased() == "basic ",
            let data = Data(base64Encoded: header.dropFirst(6).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// ``send(_:_:headers:body:operation:logMetadata:mapError:)`` with `form` as an
    /// `application/x-www-form-urlencoded` body, or no body at all when `form` is `nil`.
    public func send(
        _ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], form: [(String, String)]?,
        operation: VendorOperation, mapError: (VendorErrorAnswer) -> GatewayError
    ) async throws(GatewayError) -> TransportResponse {
        var headers = headers
        var body = Data()
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            body = Data(FormEncoding.encode(form).utf8)
        }
        return try await send(method, path, headers: headers, body: body, operation: operation, mapError: mapError)
    }

    /// ``send(_:_:headers:body:operation:logMetadata:mapError:)`` with `json` encoded by ``json(_:)`` as an
    /// `application/json` body, or no body at all when `json` is `nil`.
    public func send(
        _ method: HTTPRequest.Method, _ path: String, headers: HTTPFields = [:], json: (any Encodable)?,
        operation: VendorOperation, mapError: (VendorErrorAnswer) -> GatewayError
    ) async throws(GatewayError) -> TransportResponse {
        var headers = headers
        var body = Data()
        if let json {
            headers[.contentType] = "application/json"
            body = try self.json(json)
        }
        return try await send(method, path, headers: headers, body: body, operation: operation, mapError: mapError)
    }

    /// The error for a callback whose signature does not verify, logged with `reason` (a bounded word of the
    /// plugin's, never the body or a header): `unauthorized`.
    public func refusedCallback(_ reason: String) -> GatewayError {
        logger.warning(
            "\(logName) callback refused",
            metadata: ["provider.id": "\(providerID)", "\(logName).refusal": "\(reason)"])
        return GatewayError(.unauthorized, "The callback does not carry a valid \(vendor) signature.")
    }

    /// A callback's JSON body as `T`, or `invalid_request`.
    public func callbackBody<T: Decodable>(_ type: T.Type, from body: Data) throws(GatewayError) -> T {
        guard let value = try? JSONDecoder().decode(type, from: body) else {
            throw GatewayError.invalidRequest("The callback is not a \(vendor) event the gateway reads.")
        }
        return value
    }

    /// The vendor's reference stored with `verification` when `valid` (the vendor's shape, safe in a URL path);
    /// otherwise an internal error: nothing else reaches a URL.
    public func reference(
        of verification: ProviderVerification, where valid: (String) -> Bool
    ) throws(GatewayError) -> String {
        guard let reference = verification.reference, valid(reference) else {
            throw GatewayError.internal("The verification has no usable \(vendor) reference.")
        }
        return reference
    }

    /// `value`, a field a 2xx answer must carry, when present and `valid`; otherwise the answer is one the gateway
    /// cannot read (``malformed(_:httpStatus:)``).
    public func required<T>(
        _ value: T?, where valid: (T) -> Bool = { _ in true }, _ operation: VendorOperation,
        in response: TransportResponse
    ) throws(GatewayError) -> T {
        guard let value, valid(value) else { throw malformed(operation, httpStatus: response.status.code) }
        return value
    }
}

/// A provider made from its context alone, as every plugin's is.
public protocol ContextProvider: VerificationProvider {
    init(context: ProviderContext) throws(ConfigurationError)
}

extension GatewayPlugin {
    /// A plugin whose providers are `P`, each made from its context.
    public init<P: ContextProvider>(
        id: String, displayName: String, settings: [SettingSpec], provider: P.Type,
        makeEmulator: @escaping @Sendable (EmulatorContext) -> any VendorEmulator,
        sandboxSettings: @escaping @Sendable (_ baseURL: URL) -> [String: String]
    ) {
        self.init(
            id: id, displayName: displayName, settings: settings,
            makeProvider: { (context) throws(ConfigurationError) -> any VerificationProvider in try P(context: context)
            },
            makeEmulator: makeEmulator, sandboxSettings: sandboxSettings)
    }
}

extension GatewayError {
    /// `unsupported_channel`: `vendor` does not offer `channel` (`Sinch does not offer the email channel.`).
    public static func unsupported(_ channel: Channel, by vendor: String) -> GatewayError {
        GatewayError(.unsupportedChannel, "\(vendor) does not offer the \(channel.rawValue) channel.")
    }
}

extension TransportResponse {
    /// `value` as JSON with sorted keys and unescaped slashes (`{}` should it not encode), as emulators answer and
    /// callbacks reply, with `contentType` and any `headers`.
    public static func json(
        _ value: some Encodable, status: Int = 200, contentType: String = "application/json", headers: HTTPFields = [:]
    ) -> TransportResponse {
        var headers = headers
        headers[.contentType] = contentType
        return TransportResponse(
            status: HTTPResponse.Status(code: status), headerFields: headers, body: VendorJSON.encode(value))
    }
}

/// JSON as the plugins write it: sorted keys, unescaped slashes.
public enum VendorJSON {
    /// `value` encoded, or `{}` should it not encode.
    public static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }
}

extension VendorErrorTable {
    /// The row for a vendor code whatever the status and operation, in one vocabulary: for vendors whose code
    /// alone says what went wrong.
    public func row(anyStatus code: String, vocabulary: String = "") -> VendorErrorRow? {
        rows.first { $0.vocabulary == vocabulary && $0.matches(code: code) }
    }

    /// The error for an answer keyed by its code alone: a known code decides (`Acme 60202: Max attempts`),
    /// else the HTTP status (`Acme 60999, HTTP 400`, or `HTTP 400` without a code).
    public func error(
        code: String?, httpStatus: Int, retryAfter: Int? = nil, providerID: String
    ) -> GatewayError {
        let found = code.flatMap { row(anyStatus: $0) }
        let detail =
            if let code, let found { "\(vendor) \(code): \(found.name)" } else {
                code.map { "\(vendor) \($0), HTTP \(httpStatus)" } ?? "HTTP \(httpStatus)"
            }
        return error(
            found?.mapsTo ?? .forVendorStatus(httpStatus), detail: detail, vendorCode: code, httpStatus: httpStatus,
            providerID: providerID, retryAfter: retryAfter)
    }
}

extension Destination {
    /// Throws `invalid_request` unless this is the kind of destination `channel` delivers to: an email address by
    /// email, a user identity by push, a phone number by the others.
    public func requireFits(_ channel: Channel) throws(GatewayError) {
        let fits =
            switch (channel, self) {
            case (.email, .email), (.push, .identity): true
            case (.email, _), (.push, _): false
            case (_, .phone): true
            default: false
            }
        guard fits else {
            throw GatewayError.invalidRequest("The destination does not fit the \(channel.rawValue) channel.")
        }
    }
}

/// Language tags as vendors take them: the caller's ordered preferences matched against the tags a vendor
/// supports.
public enum LanguageTags {
    /// The first preference `supported` has, in `supported`'s spelling: the exact tag (`pt-BR`), else its
    /// language alone (`es` for `es-MX`), else the first supported variant of the language (`de-de` for `de`).
    /// Case is ignored and `_` reads as `-`; `nil` when nothing matches.
    public static func firstMatch(_ preferences: [String], in supported: [String]) -> String? {
        for preference in preferences {
            let tag = preference.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "-")
                .lowercased()
            guard let language = tag.split(separator: "-").first.map(String.init) else { continue }
            if let match = supported.first(where: { $0.lowercased() == tag })
                ?? supported.first(where: { $0.lowercased() == language })
                ?? supported.first(where: { $0.lowercased().hasPrefix(language + "-") })
            {
                return match
            }
        }
        return nil
    }
}

/// The date forms vendors write and read.
public enum VendorDate {
    /// ISO 8601 in UTC with a `Z` and whole seconds (`2015-07-30T20:00:00Z`).
    public static func iso8601(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }

    /// Reads ISO 8601 with or without fractional seconds (any number of digits; Foundation reads three), with
    /// `Z` or an offset (`2026-01-02T03:04:05.123456+00:00`). `nil` when it is not one.
    public static func parseISO8601(_ text: String?) -> Date? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let date = try? Date(trimmed, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: false)) {
            return date
        }
        var shortened = trimmed
        if let dot = trimmed.firstIndex(of: ".") {
            let fraction = trimmed[trimmed.index(after: dot)...].prefix { $0.isNumber }
            shortened = String(trimmed[...dot]) + fraction.prefix(3) + trimmed[fraction.endIndex...]
        }
        return try? Date(shortened, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// `YYYY-MM-DD` `separator` `hh:mm:ss`, with `.SSS` when `milliseconds`, in UTC without a zone designator.
    public static func utc(_ date: Date, separator: String = "T", milliseconds: Bool = false) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        func pad(_ value: Int?, _ width: Int = 2) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let time = "\(pad(parts.hour)):\(pad(parts.minute)):\(pad(parts.second))"
        let fraction = milliseconds ? "." + pad((parts.nanosecond ?? 0) / 1_000_000, 3) : ""
        return "\(pad(parts.year, 4))-\(pad(parts.month))-\(pad(parts.day))" + separator + time + fraction
    }
}
