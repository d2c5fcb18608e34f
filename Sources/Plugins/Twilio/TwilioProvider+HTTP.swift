import Foundation
import GatewayCore
import HTTPTypes

/// Twilio's calls, by the names its logs use; a create (start, resend) or a push notification may have sent.
extension VendorOperation {
    static let start = VendorOperation("start", sendMayHaveHappened: true)
    static let resend = VendorOperation("resend", sendMayHaveHappened: true)
    static let check = VendorOperation("check")
    static let cancel = VendorOperation("cancel")
    static let status = VendorOperation("status")
    static let lookup = VendorOperation("lookup")
    static let accessToken = VendorOperation("access_token")
    static let factors = VendorOperation("factors")
    static let factor = VendorOperation("factor")
    static let deleteFactor = VendorOperation("delete_factor")
}

extension TwilioProvider {
    /// Sends one call (a form body, or none) with Basic auth and returns a 2xx answer; every other outcome throws
    /// the mapped error.
    func call(
        _ method: HTTPRequest.Method, path: String, form: [(String, String)]?, operation: VendorOperation
    ) async throws(GatewayError) -> TransportResponse {
        var headers = HTTPFields()
        headers[.authorization] = authorization
        headers[.accept] = "application/json"
        return try await client.send(method, path, headers: headers, form: form, operation: operation) { answer in
            let envelope = try? JSONDecoder().decode(TwilioWire.ErrorEnvelope.self, from: answer.body)
            return TwilioErrorMapping.map(
                code: envelope?.code, httpStatus: answer.status, retryAfter: answer.retryAfter, providerID: id)
        }
    }

    /// Decodes a 2xx body, or throws `provider_error` when it is not Twilio's JSON.
    func decode(_ response: TransportResponse, operation: VendorOperation) throws(GatewayError)
        -> TwilioWire.ResourceSummary
    {
        if let summary = TwilioWire.ResourceSummary(fastJSON: response.body) { return summary }
        return try client.decode(TwilioWire.ResourceSummary.self, from: response, operation: operation)
    }
}
