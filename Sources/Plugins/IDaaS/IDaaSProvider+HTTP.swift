import Foundation
import GatewayCore
import HTTPTypes

/// IDaaS's calls, by the names its logs use; only the SMS send may have delivered something when it fails
/// without an answer.
extension VendorOperation {
    static let areaCodes = VendorOperation("country_codes")
    static let captcha = VendorOperation("captcha")
    static let captchaVerify = VendorOperation("captcha_verify")
    static let smsSend = VendorOperation("sms_send", sendMayHaveHappened: true)
    static let smsLogin = VendorOperation("sms_login")
    static let refresh = VendorOperation("refresh_id_token")
    static let jwks = VendorOperation("jwks")
}

extension IDaaSProvider {
    /// Calls `path` with the client id and the device headers and returns a 2xx answer; every other outcome
    /// throws the mapped error. The refusal's log line names the masked device.
    func call(
        _ method: HTTPRequest.Method, _ path: String, body: (some Encodable)?, device: IDaaSDevice?,
        extra: [(String, String)] = [], operation: VendorOperation
    ) async throws(GatewayError) -> TransportResponse {
        var headers = HTTPFields()
        headers[.accept] = "application/json"
        func set(_ name: String, _ value: String?) {
            guard let value, !value.isEmpty, let field = HTTPField.Name(name) else { return }
            headers[field] = value
        }
        set(configuration.headers.clientID, configuration.clientID)
        if let device {
            set(configuration.headers.os, device.os)
            set(configuration.headers.fingerprint, device.fingerprint)
            set(configuration.headers.agent, device.agent)
            set(configuration.headers.ip, device.ip)
            set(configuration.headers.language, device.language)
        }
        for (name, value) in extra { set(name, value) }
        var data = Data()
        if let body {
            data = try client.json(body)
            headers[.contentType] = "application/json"
        }
        return try await client.send(
            method, path, headers: headers, body: data, operation: operation,
            logMetadata: ["device": "\(device?.masked ?? "-")"]
        ) { answer in
            IDaaSErrorMapping.map(
                body: try? JSONDecoder().decode(IDaaSWire.ErrorBody.self, from: answer.body), httpStatus: answer.status,
                providerID: id, operation: operation.name)
        }
    }

    /// A GET without a body.
    func get(_ path: String, device: IDaaSDevice?, operation: VendorOperation) async throws(GatewayError)
        -> TransportResponse
    {
        try await call(.get, path, body: Optional<String>.none, device: device, operation: operation)
    }

    /// Decodes a 2xx answer, or throws `provider_error` for a body the gateway cannot read.
    func decode<T: Decodable>(_ type: T.Type, _ response: TransportResponse, operation: VendorOperation)
        throws(GatewayError) -> T
    {
        try client.decode(type, from: response, operation: operation)
    }

    func malformed(operation: VendorOperation, httpStatus: Int) -> GatewayError {
        client.malformed(operation, httpStatus: httpStatus)
    }
}
