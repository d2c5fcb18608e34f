import Foundation
import GatewayCore
import HTTPTypes

extension IDaaSEmulator {
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> TransportResponse {
        var headers = HTTPFields()
        headers[.contentType] = "application/json;charset=UTF-8"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return TransportResponse(status: status, headerFields: headers, body: body)
    }

    /// Every IDaaS error: HTTP 400 with `{error_code, error_msg}` (docs/vendors/idaas.md §1).
    static func refusal(_ code: String, _ message: String) -> TransportResponse {
        json(IDaaSWire.ErrorBody(errorCode: code, errorMsg: message), status: .badRequest)
    }

    /// The body of a 5xx from the fault switch.
    static func serverError(_ status: Int) -> TransportResponse {
        json(
            IDaaSWire.ErrorBody(errorCode: "SYSTEM_ERROR", errorMsg: "System busy, please try again later."),
            status: HTTPResponse.Status(code: status))
    }

    static func notFound() -> TransportResponse {
        json(IDaaSWire.ErrorBody(error: "Not Found"), status: .notFound)
    }

    static func newCode() -> String {
        let digits = String(Int.random(in: 0..<1_000_000))
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// `bytes` random bytes in lowercase hex (a 16-byte token is the documented 32-hex captcha token).
    static func randomHex(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
