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
