import Foundation
import HTTPTypes

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
