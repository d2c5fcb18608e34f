import Foundation
import GatewayCore
import HTTPTypes

extension TwilioEmulator {
    /// Where the real resources live; the `url` field is informational, so it names Twilio's host.
    static let resourceBase = "https://verify.twilio.com/v2/Services/" + TwilioSandbox.serviceSID

    /// The Verification resource as the spec describes it.
    static func resource(_ verification: TwilioEmulatorState.Verification) -> TwilioWire.Verification {
        TwilioWire.Verification(
            sid: verification.sid,
            serviceSID: TwilioSandbox.serviceSID,
            accountSID: TwilioSandbox.accountSID,
            to: verification.to,
            channel: verification.channel,
            status: verification.status,
            valid: verification.status == "approved",
            lookup: TwilioWire.Lookup(),
            amount: nil,
            payee: nil,
            sendCodeAttempts: verification.sendAttempts.map {
                TwilioWire.SendCodeAttempt(
                    time: TwilioWire.format($0.time), channel: attemptChannel($0.channel), attemptSID: $0.attemptSID)
            },
            dateCreated: TwilioWire.format(verification.createdAt),
            dateUpdated: TwilioWire.format(verification.updatedAt),
            sna: nil,
            url: resourceBase + "/Verifications/" + verification.sid)
    }

    /// The VerificationCheck resource.
    static func checkResource(_ verification: TwilioEmulatorState.Verification) -> TwilioWire.VerificationCheck {
        TwilioWire.VerificationCheck(
            sid: verification.sid,
            serviceSID: TwilioSandbox.serviceSID,
            accountSID: TwilioSandbox.accountSID,
            to: verification.to,
            channel: verification.channel,
            status: verification.status,
            valid: verification.status == "approved",
            amount: nil,
            payee: nil,
            dateCreated: TwilioWire.format(verification.createdAt),
            dateUpdated: TwilioWire.format(verification.updatedAt),
            snaAttemptsErrorCodes: nil)
    }

    /// `send_code_attempts[].channel` as the spec's examples spell it (`SMS`, `EMAIL`, `whatsapp`).
    /// Voice is not shown there; `CALL` follows the SMS/EMAIL pattern.
    static func attemptChannel(_ channel: String) -> String {
        channel == "whatsapp" ? channel : channel.uppercased()
    }

    // MARK: bodies

    static func json(_ status: Int, _ value: some Encodable) -> TransportResponse { .json(value, status: status) }

    /// A resource the fast writer can spell: its ``JSONValue`` as `JSONEncoder` with `.sortedKeys` and
    /// `.withoutEscapingSlashes` writes `value` (the same bytes, without building a `JSONEncoder` per
    /// answer; `TwilioWireJSONTests` compares them), else `JSONEncoder` itself.
    static func json<Value: Encodable & TwilioJSONRepresentable>(_ status: Int, _ value: Value) -> TransportResponse {
        guard let text = value.jsonValue.sortedJSON else { return .json(value, status: status) }
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return TransportResponse(
            status: HTTPResponse.Status(code: status), headerFields: headers, body: Data(text.utf8))
    }

    /// Twilio's error envelope: `{code, message, more_info, status}`.
    static func error(_ status: Int, code: Int, message: String) -> TransportResponse {
        json(status, TwilioWire.ErrorEnvelope(code: code, message: message, status: status))
    }

    static func invalidParameter(_ name: String) -> TransportResponse {
        error(400, code: 60200, message: "Invalid parameter: \(name)")
    }

    static func notFound() -> TransportResponse {
        error(404, code: 20404, message: "The requested resource was not found")
    }

    /// The body of an injected 5xx: 20503 for 503, 20500 otherwise.
    static func serverError(_ status: Int) -> TransportResponse {
        status == 503
            ? error(503, code: 20503, message: "Service unavailable")
            : error(status, code: 20500, message: "Internal Server Error")
    }
}
