import Foundation
import GatewayCore

/// A wire body that can be spelled as a ``JSONValue`` holding exactly what its `Encodable` conformance
/// writes: the same keys, `null` where it encodes `nil` explicitly, no key where it leaves `nil` out.
protocol TwilioJSONRepresentable {
    var jsonValue: JSONValue { get }
}

extension JSONValue {
    /// A string, or `null`.
    fileprivate static func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// An object of the fields that are present (a synthesized `encode(to:)` leaves `nil` out).
    fileprivate static func present(_ fields: [String: JSONValue?]) -> JSONValue {
        .object(fields.compactMapValues { $0 })
    }
}

extension TwilioWire.ErrorEnvelope: TwilioJSONRepresentable {
    var jsonValue: JSONValue {
        .present([
            "code": code.map { .number(Double($0)) }, "message": message.map(JSONValue.string),
            "more_info": moreInfo.map(JSONValue.string), "status": status.map { .number(Double($0)) },
        ])
    }
}

extension TwilioWire.SendCodeAttempt {
    var jsonValue: JSONValue {
        .present([
            "time": time.map(JSONValue.string), "channel": channel.map(JSONValue.string),
            "attempt_sid": attemptSID.map(JSONValue.string),
        ])
    }
}

extension TwilioWire.VerificationCheck.SNAAttemptError {
    var jsonValue: JSONValue {
        .present(["attempt_sid": attemptSID.map(JSONValue.string), "code": code.map { .number(Double($0)) }])
    }
}

extension TwilioWire.Verification: TwilioJSONRepresentable {
    var jsonValue: JSONValue {
        .object([
            "sid": .text(sid), "service_sid": .text(serviceSID), "account_sid": .text(accountSID), "to": .text(to),
            "channel": .text(channel), "status": .text(status), "valid": valid.map(JSONValue.bool) ?? .null,
            "lookup": lookup == nil ? .null : .object([:]), "amount": .text(amount), "payee": .text(payee),
            "send_code_attempts": sendCodeAttempts.map { .array($0.map(\.jsonValue)) } ?? .null,
            "date_created": .text(dateCreated), "date_updated": .text(dateUpdated),
            "sna": sna.map { .present(["url": $0.url.map(JSONValue.string)]) } ?? .null, "url": .text(url),
        ])
    }
}

extension TwilioWire.VerificationCheck: TwilioJSONRepresentable {
    var jsonValue: JSONValue {
        .object([
            "sid": .text(sid), "service_sid": .text(serviceSID), "account_sid": .text(accountSID), "to": .text(to),
            "channel": .text(channel), "status": .text(status), "valid": valid.map(JSONValue.bool) ?? .null,
            "amount": .text(amount), "payee": .text(payee), "date_created": .text(dateCreated),
            "date_updated": .text(dateUpdated),
            "sna_attempts_error_codes": snaAttemptsErrorCodes.map { .array($0.map(\.jsonValue)) } ?? .null,
        ])
    }
}

extension [String: JSONValue] {
    /// `.some(nil)` for an absent or `null` field, `nil` for a field that is not a string.
    fileprivate func optionalText(_ key: String) -> String?? {
        switch self[key] {
        case nil, .null?: return .some(nil)
        case .string(let text)?: return .some(text)
        default: return nil
        }
    }
}

extension TwilioWire.ResourceSummary {
    /// The summary `JSONDecoder` reads from `data`, from the fast parser; `nil` when that parser leaves the
    /// body to Foundation, or when it is not an object whose four fields are strings, `null` or absent (then
    /// `JSONDecoder` decides, and throws for a wrong type as before).
    init?(fastJSON data: Data) {
        guard let value = JSONValue.parse(data), case .object(let fields) = value else { return nil }
        func text(_ key: String) -> String?? { fields.optionalText(key) }
        guard let sid = text("sid"), let status = text("status"), let channel = text("channel"),
            let dateCreated = text("date_created")
        else { return nil }
        self.init(sid: sid, status: status, channel: channel, dateCreated: dateCreated)
    }
}

extension TwilioMessagingWire.Message: TwilioJSONRepresentable {
    /// Every field, `null` where it is `nil`, as its `encode(to:)` writes them.
    var jsonValue: JSONValue {
        .object([
            "sid": .text(sid), "account_sid": .text(accountSID), "messaging_service_sid": .text(messagingServiceSID),
            "from": .text(from), "to": .text(to), "body": .text(body), "status": .text(status),
            "direction": .text(direction), "num_segments": .text(numSegments), "num_media": .text(numMedia),
            "price": .text(price), "price_unit": .text(priceUnit),
            "error_code": errorCode.map { .number(Double($0)) } ?? .null, "error_message": .text(errorMessage),
            "date_created": .text(dateCreated), "date_sent": .text(dateSent), "date_updated": .text(dateUpdated),
            "api_version": .text(apiVersion), "uri": .text(uri),
            "subresource_uris": subresourceURIs.map { .object($0.mapValues(JSONValue.string)) } ?? .null,
        ])
    }

    /// The fields the sender reads (`sid`, `status`, `num_segments`, `error_code`) from the fast parser; `nil` when
    /// it leaves the body to Foundation or a field has another type (then `JSONDecoder` decides, as before).
    init?(fastJSON data: Data) {
        guard let value = JSONValue.parse(data), case .object(let fields) = value else { return nil }
        func text(_ key: String) -> String?? { fields.optionalText(key) }
        var errorCode: Int?
        switch fields["error_code"] {
        case nil, .null?: errorCode = nil
        case .number(let number)?:
            guard let whole = Int(exactly: number) else { return nil }
            errorCode = whole
        default: return nil
        }
        guard let sid = text("sid"), let status = text("status"), let segments = text("num_segments") else {
            return nil
        }
        self.init()
        self.sid = sid
        self.status = status
        self.numSegments = segments
        self.errorCode = errorCode
    }
}
