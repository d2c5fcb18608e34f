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
    /// Calls `operation`'s configured path with the client id and the device headers and returns a 2xx answer;
    /// every other outcome throws the mapped error. The refusal's log line names the masked device.
    func call(
        _ method: HTTPRequest.Method, _ operation: VendorOperation, body: (any Encodable)? = nil, device: IDaaSDevice?,
        extra: [(String, String)] = []
    ) async throws(GatewayError) -> TransportResponse {
        let names = configuration.headers
        var fields = [(names.clientID, configuration.clientID)]
        if let device {
            fields += [
                (names.os, device.os), (names.fingerprint, device.fingerprint), (names.agent, device.agent),
                (names.ip, device.ip ?? ""), (names.language, device.language),
            ]
        }
        var headers: HTTPFields = [.accept: "application/json"]
        for (name, value) in fields + extra where !value.isEmpty {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        var data = Data()
        if let body {
            data = try client.snakeCaseJSON(body)
            headers[.contentType] = "application/json"
        }
        return try await client.send(
            method, configuration.paths[operation] ?? "", headers: headers, body: data, operation: operation,
            logMetadata: ["device": "\(device?.masked ?? "-")"]
        ) { answer in
            IDaaSErrorMapping.map(
                body: try? SnakeCaseJSON.decoder.decode(IDaaSWire.ErrorBody.self, from: answer.body),
                httpStatus: answer.status, providerID: id, operation: operation.name)
        }
    }
}
