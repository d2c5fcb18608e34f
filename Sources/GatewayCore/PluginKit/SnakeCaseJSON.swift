import Foundation
import HTTPTypes

/// JSON with snake_case keys, for a vendor whose wire uses them: its wire types keep Swift's names and list no
/// keys. The encoder writes sorted keys without escaped slashes, as ``VendorHTTPClient/json(_:)`` does. The key
/// strategy also renames dictionary keys, so a type with free-form keys (`{"zh_CN": …}`) is read with a plain
/// decoder instead.
public enum SnakeCaseJSON {
    /// Writes snake_case keys, sorted, slashes unescaped.
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()

    /// Reads snake_case keys into Swift's camel-case property names.
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    /// `value` encoded with ``encoder``, or `{}` should it not encode: what an emulator answers or posts.
    public static func encode(_ value: some Encodable) -> Data {
        (try? encoder.encode(value)) ?? Data("{}".utf8)
    }
}

extension TransportResponse {
    /// `value` as snake_case JSON (``SnakeCaseJSON/encode(_:)``) with `Content-Type: application/json`: an emulator's
    /// answer for a vendor whose wire uses snake_case keys.
    public static func snakeCaseJSON(_ value: some Encodable, status: Int) -> TransportResponse {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return TransportResponse(
            status: HTTPResponse.Status(code: status), headerFields: headers, body: SnakeCaseJSON.encode(value))
    }
}

extension VendorHTTPClient {
    /// `value` as snake_case JSON (``SnakeCaseJSON``), for a request body.
    public func snakeCaseJSON(_ value: some Encodable) throws(GatewayError) -> Data {
        do {
            return try SnakeCaseJSON.encoder.encode(value)
        } catch {
            throw GatewayError.internal("The \(vendor) request could not be encoded.")
        }
    }

    /// Decodes a 2xx snake_case body as `type`, or throws ``malformed(_:httpStatus:)``.
    public func decodeSnakeCase<T: Decodable>(
        _ type: T.Type, from response: TransportResponse, operation: VendorOperation
    ) throws(GatewayError) -> T {
        guard let value = try? SnakeCaseJSON.decoder.decode(type, from: response.body) else {
            throw malformed(operation, httpStatus: response.status.code)
        }
        return value
    }
}
