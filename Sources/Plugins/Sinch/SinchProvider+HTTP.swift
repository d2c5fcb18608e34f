import Foundation
import GatewayCore
import HTTPTypes
import Logging

extension SinchProvider {
    /// The Content-Type every call sends, and signs byte for byte (docs/vendors/sinch.md §1.1: Content-Type is signed
    /// even on a GET).
    static let contentType = "application/json; charset=UTF-8"

    /// Sends one call and returns a 2xx answer; every other outcome throws the mapped error.
    func call(
        _ method: HTTPRequest.Method, path: String, body: Data?, operation: String, acceptLanguage: String? = nil
    ) async throws(GatewayError) -> TransportResponse {
        guard let url = URL(string: configuration.baseURL + path) else {
            throw GatewayError.internal("The Sinch base URL does not form a valid request URL.")
        }
        let bytes = body ?? Data()
        var headers = HTTPFields()
        headers[.contentType] = Self.contentType
        headers[.accept] = "application/json"
        headers[.userAgent] = "verification-gateway"
        if let acceptLanguage { headers[.acceptLanguage] = acceptLanguage }
        switch configuration.authentication {
        case .signed:
            let timestamp = SinchSigning.timestamp(clock.now)
            headers[SinchSigning.timestampHeader] = timestamp
            headers[.authorization] = SinchSigning.authorization(
                applicationKey: configuration.applicationKey, key: configuration.signingKey,
                method: method.rawValue, body: bytes, contentType: Self.contentType, timestamp: timestamp,
                resource: url.path(percentEncoded: true))
        case .basic:
            headers[.authorization] = SinchSigning.basic(
                applicationKey: configuration.applicationKey, secret: configuration.applicationSecret)
        }
        let request = TransportRequest(method: method, url: url, headerFields: headers, body: bytes)
        let response: TransportResponse
        do {
            response = try await transport.send(request, timeout: requestTimeout)
        } catch {
            logger.warning(
                "sinch call failed without an answer",
                metadata: ["provider.id": "\(id)", "sinch.operation": "\(operation)", "error": "\(error)"])
            throw transportFailure(error, sendMayHaveHappened: method != .get)
        }
        let status = response.status.code
        guard !(200..<300).contains(status) else { return response }
        let envelope = try? JSONDecoder().decode(SinchWire.ErrorBody.self, from: response.body)
        let retryAfter = response.headerFields[.retryAfter].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let error = SinchErrorMapping.map(
            errorCode: envelope?.errorCode, httpStatus: status, retryAfter: retryAfter, providerID: id)
        logger.info(
            "sinch refused a call",
            metadata: [
                "provider.id": "\(id)", "sinch.operation": "\(operation)", "http.status": "\(status)",
                "sinch.code": "\(envelope?.errorCode.map(String.init) ?? "-")", "error.code": "\(error.code.rawValue)",
            ])
        throw error
    }

    func encode(_ value: some Encodable) throws(GatewayError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw GatewayError.internal("The Sinch request could not be encoded.")
        }
    }

    func decode<T: Decodable>(
        _ type: T.Type, _ response: TransportResponse, operation: String, sendMayHaveHappened: Bool
    ) throws(GatewayError) -> T {
        do {
            return try JSONDecoder().decode(type, from: response.body)
        } catch {
            throw malformed(
                operation: operation, httpStatus: response.status.code, sendMayHaveHappened: sendMayHaveHappened)
        }
    }

    func malformed(operation: String, httpStatus: Int, sendMayHaveHappened: Bool) -> GatewayError {
        logger.warning(
            "sinch answered with an unreadable body",
            metadata: ["provider.id": "\(id)", "sinch.operation": "\(operation)", "http.status": "\(httpStatus)"])
        return GatewayError(
            .providerError, "Sinch answered \(operation) with a body the gateway cannot read.",
            vendor: GatewayError.VendorDetail(providerID: id, code: nil, httpStatus: httpStatus),
            sendMayHaveHappened: sendMayHaveHappened)
    }

    /// A call that got no answer. Only a refused connection proves Sinch never saw the request.
    func transportFailure(_ error: TransportError, sendMayHaveHappened: Bool) -> GatewayError {
        .transport(error, vendor: "Sinch", providerID: id, sendMayHaveHappened: sendMayHaveHappened)
    }
}
