import Foundation
import GatewayCore
import HTTPTypes
import Logging

extension VonageProvider {
    /// The v2 `Authorization`: an application JWT (RS256) when an application is configured, else Basic.
    func v2Authorization() throws(GatewayError) -> String {
        if configuration.usesApplicationJWT, let applicationID = configuration.applicationID,
            let pem = configuration.privateKeyPEM
        {
            do {
                return "Bearer "
                    + (try VonageJWT.applicationToken(applicationID: applicationID, privateKeyPEM: pem, now: clock.now))
            } catch {
                throw GatewayError.internal("The Vonage application JWT could not be signed.")
            }
        }
        let pair = "\(configuration.apiKey ?? ""):\(configuration.apiSecret ?? "")"
        return "Basic " + Data(pair.utf8).base64EncodedString()
    }

    /// Sends one v2 call and returns a 2xx answer; every other outcome throws the mapped error.
    func callV2(
        _ method: HTTPRequest.Method, path: String, json: Data?, endpoint: VonageErrorMapping.Endpoint,
        sendMayHaveHappened: Bool
    ) async throws(GatewayError) -> TransportResponse {
        var headers = HTTPFields()
        headers[.authorization] = try v2Authorization()
        headers[.accept] = "application/json"
        if json != nil { headers[.contentType] = "application/json" }
        let response = try await send(method, path: path, headers: headers, body: json ?? Data(), endpoint: endpoint)
        let status = response.status.code
        guard !(200..<300).contains(status) else { return response }
        let problem = try? JSONDecoder().decode(VonageWire.Problem.self, from: response.body)
        let retryAfter = response.headerFields[.retryAfter].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        var error = VonageErrorMapping.mapV2(
            status: status, problem: problem, endpoint: endpoint, retryAfter: retryAfter, providerID: id)
        // A 5xx to a start may hide an accepted send (Vonage does not say); anything else never sent.
        if status >= 500 { error.sendMayHaveHappened = sendMayHaveHappened }
        logger.info(
            "vonage refused a call",
            metadata: [
                "provider.id": "\(id)", "vonage.operation": "\(endpoint.rawValue)", "http.status": "\(status)",
                "vonage.type": "\(problem?.fragment ?? "-")", "error.code": "\(error.code.rawValue)",
            ])
        throw error
    }

    /// Sends one v1 call (form body, or query for search) with the key and secret in it, and returns the
    /// decoded answer with status `"0"` (or any search word); a non-zero numeric status throws.
    func callV1(
        _ method: HTTPRequest.Method, path: String, fields: [(String, String)], endpoint: VonageErrorMapping.Endpoint,
        sendMayHaveHappened: Bool
    ) async throws(GatewayError) -> VonageWire.V1Response {
        let all = [("api_key", configuration.apiKey ?? ""), ("api_secret", configuration.apiSecret ?? "")] + fields
        var headers = HTTPFields()
        headers[.accept] = "application/json"
        var body = Data()
        var fullPath = path
        if method == .get {
            fullPath += "?" + FormEncoding.encode(all)
        } else {
            headers[.contentType] = "application/x-www-form-urlencoded"
            body = Data(FormEncoding.encode(all).utf8)
        }
        let response = try await send(method, path: fullPath, headers: headers, body: body, endpoint: endpoint)
        let status = response.status.code
        guard (200..<300).contains(status) else {
            var error = VonageErrorMapping.mapV2(
                status: status, problem: nil, endpoint: endpoint, retryAfter: nil, providerID: id)
            if status >= 500 { error.sendMayHaveHappened = sendMayHaveHappened }
            throw error
        }
        guard let answer = try? JSONDecoder().decode(VonageWire.V1Response.self, from: response.body) else {
            throw malformed(endpoint: endpoint, httpStatus: status, sendMayHaveHappened: sendMayHaveHappened)
        }
        if let code = answer.code, code != 0 {
            let error = VonageErrorMapping.mapV1(code: code, endpoint: endpoint, providerID: id)
            logger.info(
                "vonage refused a call",
                metadata: [
                    "provider.id": "\(id)", "vonage.operation": "\(endpoint.rawValue)", "vonage.status": "\(code)",
                    "error.code": "\(error.code.rawValue)",
                ])
            throw error
        }
        return answer
    }

    /// One HTTP exchange; a missing answer becomes `provider_timeout` or `provider_unavailable`.
    private func send(
        _ method: HTTPRequest.Method, path: String, headers: HTTPFields, body: Data,
        endpoint: VonageErrorMapping.Endpoint
    ) async throws(GatewayError) -> TransportResponse {
        guard let url = URL(string: configuration.baseURL + path) else {
            throw GatewayError.internal("The Vonage base URL does not form a valid request URL.")
        }
        var headers = headers
        headers[.userAgent] = "verification-gateway"
        do {
            return try await transport.send(
                TransportRequest(method: method, url: url, headerFields: headers, body: body), timeout: requestTimeout)
        } catch {
            logger.warning(
                "vonage call failed without an answer",
                metadata: ["provider.id": "\(id)", "vonage.operation": "\(endpoint.rawValue)", "error": "\(error)"])
            throw GatewayError.transport(
                error, vendor: "Vonage", providerID: id,
                sendMayHaveHappened: endpoint == .start || endpoint == .nextWorkflow)
        }
    }

    /// The error for a 2xx answer the provider cannot read.
    func malformed(endpoint: VonageErrorMapping.Endpoint, httpStatus: Int, sendMayHaveHappened: Bool) -> GatewayError {
        logger.warning(
            "vonage answered with an unreadable body",
            metadata: ["provider.id": "\(id)", "vonage.operation": "\(endpoint.rawValue)", "http.status": "\(httpStatus)"])
        return GatewayError(
            .providerError, "Vonage answered \(endpoint.rawValue) with a body the gateway cannot read.",
            vendor: GatewayError.VendorDetail(providerID: id, code: nil, httpStatus: httpStatus),
            sendMayHaveHappened: sendMayHaveHappened)
    }

    static func encodeJSON(_ value: some Encodable) throws(GatewayError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw GatewayError.internal("A Vonage request could not be encoded.")
        }
    }
}
