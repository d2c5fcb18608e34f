import Foundation
import GatewayCore
import HTTPTypes

/// Vonage's calls, by the names its error table and logs use; a start or a next step may have sent a code.
extension VendorOperation {
    static let start = VendorOperation("start", sendMayHaveHappened: true)
    static let check = VendorOperation("check")
    static let cancel = VendorOperation("cancel")
    static let nextWorkflow = VendorOperation("next_workflow", sendMayHaveHappened: true)
    static let search = VendorOperation("search")
}

extension VonageProvider {
    /// The v2 `Authorization`: an application JWT (RS256) when an application is configured, else Basic.
    func v2Authorization() throws(GatewayError) -> String {
        if let applicationID = configuration.applicationID, let pem = configuration.privateKeyPEM {
            do {
                return "Bearer "
                    + (try VonageJWT.applicationToken(
                        applicationID: applicationID, privateKeyPEM: pem, now: client.clock.now))
            } catch {
                throw GatewayError.internal("The Vonage application JWT could not be signed.")
            }
        }
        return VendorHTTPClient.basicAuthorization(configuration.apiKey ?? "", configuration.apiSecret ?? "")
    }

    /// Sends one v2 call (a JSON body, or none) and returns a 2xx answer; every other outcome throws the mapped
    /// error (a 5xx to a call that may send may hide an accepted send: Vonage does not say).
    func callV2(
        _ method: HTTPRequest.Method, path: String, json: (any Encodable)? = nil, operation: VendorOperation
    ) async throws(GatewayError) -> TransportResponse {
        var headers = HTTPFields()
        headers[.authorization] = try v2Authorization()
        headers[.accept] = "application/json"
        return try await client.send(method, path, headers: headers, json: json, operation: operation) { answer in
            VonageErrorMapping.mapV2(
                status: answer.status, problem: try? JSONDecoder().decode(VonageWire.Problem.self, from: answer.body),
                operation: operation, retryAfter: answer.retryAfter, providerID: id)
        }
    }

    /// Sends one v1 call (form body, or query for search) with the key and secret in it, and returns the
    /// decoded answer with status `"0"` (or any search word); a non-zero numeric status throws.
    func callV1(
        _ method: HTTPRequest.Method, path: String, fields: [(String, String)], operation: VendorOperation
    ) async throws(GatewayError) -> VonageWire.V1Response {
        let all = [("api_key", configuration.apiKey ?? ""), ("api_secret", configuration.apiSecret ?? "")] + fields
        var headers = HTTPFields()
        headers[.accept] = "application/json"
        let query = method == .get ? "?" + FormEncoding.encode(all) : ""
        let response = try await client.send(
            method, path + query, headers: headers, form: method == .get ? nil : all, operation: operation
        ) { answer in
            VonageErrorMapping.mapV2(
                status: answer.status, problem: nil, operation: operation, retryAfter: nil, providerID: id)
        }
        let answer = try client.decode(VonageWire.V1Response.self, from: response, operation: operation)
        if let code = answer.code, code != 0 {
            throw client.refused(
                VonageErrorMapping.mapV1(code: code, operation: operation, providerID: id), operation: operation,
                httpStatus: response.status.code)
        }
        return answer
    }
}
