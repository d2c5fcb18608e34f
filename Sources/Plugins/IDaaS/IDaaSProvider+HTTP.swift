import Foundation
import GatewayCore
import HTTPTypes
import Logging

extension IDaaSProvider {
    /// The IDaaS call a request is for; only the SMS send may have delivered something when it fails
    /// without an answer.
    enum Operation: String, Sendable {
        case areaCodes = "country_codes"
        case captcha = "captcha"
        case captchaVerify = "captcha_verify"
        case smsSend = "sms_send"
        case smsLogin = "sms_login"
        case refresh = "refresh_id_token"
        case jwks = "jwks"

        var sendMayHaveHappened: Bool { self == .smsSend }
    }

    /// Calls `path` with the client id and the device headers and returns a 2xx answer; every other outcome
    /// throws the mapped error. Logs carry the operation, the status and the IDaaS code, never a body, a
    /// number or a device value.
    func call(
        _ method: HTTPRequest.Method, _ path: String, body: (some Encodable)?, device: IDaaSDevice?,
        extra: [(String, String)] = [], operation: Operation
    ) async throws(GatewayError) -> TransportResponse {
        guard let url = URL(string: configuration.baseURL + path) else {
            throw GatewayError.internal("The IDaaS base URL does not form a valid request URL.")
        }
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
            do {
                data = try JSONEncoder().encode(body)
            } catch {
                throw GatewayError.internal("The IDaaS request could not be encoded.")
            }
            headers[.contentType] = "application/json"
        }
        let request = TransportRequest(method: method, url: url, headerFields: headers, body: data)
        let response: TransportResponse
        do {
            response = try await transport.send(request, timeout: requestTimeout)
        } catch {
            logger.warning(
                "idaas call failed without an answer",
                metadata: [
                    "provider.id": "\(id)", "idaas.operation": "\(operation.rawValue)",
                    "transport.error": "\(Self.name(of: error))",
                ])
            throw transportFailure(error, operation: operation)
        }
        let status = response.status.code
        guard !(200..<300).contains(status) else { return response }
        let errorBody = try? JSONDecoder().decode(IDaaSWire.ErrorBody.self, from: response.body)
        let error = IDaaSErrorMapping.map(
            body: errorBody, httpStatus: status, providerID: id, operation: operation.rawValue)
        logger.info(
            "idaas refused a call",
            metadata: [
                "provider.id": "\(id)", "idaas.operation": "\(operation.rawValue)", "http.status": "\(status)",
                "idaas.code": "\(error.vendor?.code ?? "-")", "error.code": "\(error.code.rawValue)",
                "device": "\(device?.masked ?? "-")",
            ])
        throw error
    }

    /// A GET without a body.
    func get(_ path: String, device: IDaaSDevice?, operation: Operation) async throws(GatewayError) -> TransportResponse
    {
        try await call(.get, path, body: Optional<String>.none, device: device, operation: operation)
    }

    /// Decodes a 2xx answer, or throws `provider_error` for a body the gateway cannot read.
    func decode<T: Decodable>(_ type: T.Type, _ response: TransportResponse, operation: Operation) throws(GatewayError)
        -> T
    {
        guard let value = try? JSONDecoder().decode(type, from: response.body) else {
            throw malformed(operation: operation, httpStatus: response.status.code)
        }
        return value
    }

    static func name(of error: TransportError) -> String {
        switch error {
        case .timeout: return "timeout"
        case .connectFailed: return "connect_failed"
        case .connectionReset: return "connection_reset"
        }
    }

    func malformed(operation: Operation, httpStatus: Int) -> GatewayError {
        logger.warning(
            "idaas answered with an unreadable body",
            metadata: [
                "provider.id": "\(id)", "idaas.operation": "\(operation.rawValue)", "http.status": "\(httpStatus)",
            ])
        return GatewayError(
            .providerError, "IDaaS answered \(operation.rawValue) with a body the gateway cannot read.",
            vendor: GatewayError.VendorDetail(providerID: id, code: nil, httpStatus: httpStatus),
            sendMayHaveHappened: operation.sendMayHaveHappened)
    }

    /// A call that got no HTTP answer. Only a refused connection proves IDaaS never saw the request.
    func transportFailure(_ error: TransportError, operation: Operation) -> GatewayError {
        .transport(error, vendor: "IDaaS", providerID: id, sendMayHaveHappened: operation.sendMayHaveHappened)
    }
}
