import Foundation
import GatewayCore
import HTTPTypes

extension IDaaSEmulator {
    /// `value` as IDaaS writes it: the calls' bodies in snake_case, the captcha, area-code and key-set answers as
    /// they are (camelCase).
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, snakeCase: Bool = false)
        -> TransportResponse
    {
        var headers = HTTPFields()
        headers[.contentType] = "application/json;charset=UTF-8"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return TransportResponse(status: status, headerFields: headers, body: body)
    }

    /// Every IDaaS error: HTTP 400 with `{error_code, error_msg}` (docs/vendors/idaas.md §1).
    static func refusal(_ code: String, _ message: String) -> TransportResponse {
        json(IDaaSWire.ErrorBody(errorCode: code, errorMsg: message), status: .badRequest, snakeCase: true)
    }

    /// The body of a 5xx from the fault switch.
    static func serverError(_ status: Int) -> TransportResponse {
        json(
            IDaaSWire.ErrorBody(errorCode: "SYSTEM_ERROR", errorMsg: "System busy, please try again later."),
            status: HTTPResponse.Status(code: status), snakeCase: true)
    }

    static func notFound() -> TransportResponse {
        json(IDaaSWire.ErrorBody(error: "Not Found"), status: .notFound, snakeCase: true)
    }
}
