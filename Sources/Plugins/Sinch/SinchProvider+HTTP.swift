import Foundation
import GatewayCore
import HTTPTypes

/// Sinch's calls, by the names its logs use; a start or a resend (a new start) may have sent a code.
extension VendorOperation {
    static let start = VendorOperation("start", sendMayHaveHappened: true)
    static let resend = VendorOperation("resend", sendMayHaveHappened: true)
    static let check = VendorOperation("check")
    static let status = VendorOperation("status")
    static let lookup = VendorOperation("lookup")
}

extension SinchProvider {
    /// The Content-Type every call sends and signs, even on a GET (docs/vendors/sinch.md §1.1).
    static let contentType = "application/json; charset=UTF-8"

    /// Sends one call, signed (or Basic), and returns a 2xx answer; every other outcome throws the mapped error.
    func call(
        _ method: HTTPRequest.Method, path: String, body: Data?, operation: VendorOperation,
        acceptLanguage: String? = nil
    ) async throws(GatewayError) -> TransportResponse {
        let bytes = body ?? Data()
        var headers = HTTPFields()
        headers[.contentType] = Self.contentType
        headers[.accept] = "application/json"
        if let acceptLanguage { headers[.acceptLanguage] = acceptLanguage }
        switch configuration.authentication {
        case .signed:
            let timestamp = VendorDate.iso8601(client.clock.now)
            headers[SinchSigning.timestampHeader] = timestamp
            headers[.authorization] = SinchSigning.authorization(
                applicationKey: configuration.applicationKey, key: configuration.signingKey,
                method: method.rawValue, body: bytes, contentType: Self.contentType, timestamp: timestamp,
                resource: try client.url(path).path(percentEncoded: true))
        case .basic:
            headers[.authorization] = VendorHTTPClient.basicAuthorization(
                configuration.applicationKey, configuration.applicationSecret)
        }
        return try await client.send(method, path, headers: headers, body: bytes, operation: operation) { answer in
            let envelope = try? JSONDecoder().decode(SinchWire.ErrorBody.self, from: answer.body)
            return SinchErrorMapping.map(
                errorCode: envelope?.errorCode, httpStatus: answer.status, retryAfter: answer.retryAfter, providerID: id
            )
        }
    }
}
