import Foundation
import GatewayCore
import HTTPTypes
import Logging

extension TwilioProvider {
    /// `Basic base64(sid:token)`, the header Twilio authenticates every call with.
    var authorization: String {
        "Basic " + Data("\(configuration.accountSID):\(configuration.authToken)".utf8).base64EncodedString()
    }

    /// Sends one call and returns a 2xx answer; every other outcome throws the mapped error.
    func call(
        _ method: HTTPRequest.Method, path: String, form: [(String, String)]?, operation: String
    ) async throws(GatewayError) -> TransportResponse {
        guard let url = URL(string: configuration.baseURL + path) else {
            throw GatewayError.internal("The Twilio base URL does not form a valid request URL.")
        }
        var headers = HTTPFields()
        headers[.authorization] = authorization
        headers[.accept] = "application/json"
        headers[.userAgent] = "verification-gateway"
        var body = Data()
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            body = Data(FormEncoding.encode(form).utf8)
        }
        let request = TransportRequest(method: method, url: url, headerFields: headers, body: body)
        let response: TransportResponse
        do {
            response = try await transport.send(request, timeout: requestTimeout)
        } catch {
            logger.warning(
                "twilio call failed without an answer",
                metadata: ["provider.id": "\(id)", "twilio.operation": "\(operation)", "error": "\(error)"])
            throw transportFailure(error)
        }
        let status = response.status.code
        guard !(200..<300).contains(status) else { return response }
        let envelope = try? JSONDecoder().decode(TwilioWire.ErrorEnvelope.self, from: response.body)
        let retryAfter = response.headerFields[.retryAfter].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let error = TwilioErrorMapping.map(
            code: envelope?.code, httpStatus: status, retryAfter: retryAfter, providerID: id)
        logger.info(
            "twilio refused a call",
            metadata: [
                "provider.id": "\(id)", "twilio.operation": "\(operation)", "http.status": "\(status)",
                "twilio.code": "\(envelope?.code.map(String.init) ?? "-")", "error.code": "\(error.code.rawValue)",
            ])
        throw error
    }

    /// Decodes a 2xx body, or throws `provider_error` when it is not Twilio's JSON.
    func decode(
        _ response: TransportResponse, operation: String, sendMayHaveHappened: Bool
    ) throws(GatewayError) -> TwilioWire.ResourceSummary {
        if let summary = TwilioWire.ResourceSummary(fastJSON: response.body) { return summary }
        do {
            return try JSONDecoder().decode(TwilioWire.ResourceSummary.self, from: response.body)
        } catch {
            throw malformed(
                operation: operation, httpStatus: response.status.code, sendMayHaveHappened: sendMayHaveHappened)
        }
    }

    /// The error for a 2xx answer the provider cannot read.
    func malformed(operation: String, httpStatus: Int, sendMayHaveHappened: Bool) -> GatewayError {
        logger.warning(
            "twilio answered with an unreadable body",
            metadata: ["provider.id": "\(id)", "twilio.operation": "\(operation)", "http.status": "\(httpStatus)"])
        return GatewayError(
            .providerError, "Twilio answered \(operation) with a body the gateway cannot read.",
            vendor: GatewayError.VendorDetail(providerID: id, code: nil, httpStatus: httpStatus),
            sendMayHaveHappened: sendMayHaveHappened)
    }

    /// A call that got no HTTP answer. Only a refused connection proves Twilio never saw the request.
    func transportFailure(_ error: TransportError) -> GatewayError {
        .transport(error, vendor: "Twilio", providerID: id, sendMayHaveHappened: true)
    }
}
