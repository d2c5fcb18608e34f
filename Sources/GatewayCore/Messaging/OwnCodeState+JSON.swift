import Foundation

/// ``OwnCodeState`` to and from its stored JSON directly, the same keys and values its `Codable` form has (dates as
/// seconds since 2001, as `JSONEncoder` writes them by default): a start and every read of the state skip a
/// `JSONEncoder` or `JSONDecoder` pass and the bytes between (docs/performance.md, "What a request costs").
extension OwnCodeState {
    /// The state as JSON.
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "seed": .string(seed), "digest": .string(digest), "key_id": .string(keyID),
            "format": .object(["length": .number(Double(format.length)), "alphabet": .string(format.alphabet.rawValue)]
            ),
            "sends": .array(sends.map(\.json)),
        ]
        if let expiresAt { fields["expires_at"] = .number(expiresAt.timeIntervalSinceReferenceDate) }
        if let sealedCode { fields["sealed_code"] = .string(sealedCode) }
        return .object(fields)
    }

    /// Reads ``json`` (or what the `Codable` form wrote); nil when `json` is not an own-code state.
    init?(json: JSONValue) {
        guard case .object(let fields) = json, let seed = fields["seed"]?.stringValue,
            let digest = fields["digest"]?.stringValue, let keyID = fields["key_id"]?.stringValue,
            case .object(let format)? = fields["format"],
            let length = format["length"]?.numberValue.flatMap({ Int(exactly: $0) }),
            let alphabet = format["alphabet"]?.stringValue.flatMap(OwnCodeFormat.Alphabet.init(rawValue:)),
            case .array(let sends)? = fields["sends"]
        else { return nil }
        var parsedSends: [OwnCodeSend] = []
        parsedSends.reserveCapacity(sends.count)
        for send in sends {
            guard let parsed = OwnCodeSend(json: send) else { return nil }
            parsedSends.append(parsed)
        }
        var expiresAt: Date?
        if let value = fields["expires_at"], value != .null {
            guard case .number(let seconds) = value else { return nil }
            expiresAt = Date(timeIntervalSinceReferenceDate: seconds)
        }
        var sealedCode: String?
        if let value = fields["sealed_code"], value != .null {
            guard let text = value.stringValue else { return nil }
            sealedCode = text
        }
        self.init(
            seed: seed, digest: digest, keyID: keyID, format: OwnCodeFormat(length: length, alphabet: alphabet),
            expiresAt: expiresAt, sends: parsedSends)
        self.sealedCode = sealedCode
    }
}

extension OwnCodeSend {
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "provider": .string(provider), "message_id": .string(messageID), "sender": .string(sender),
            "locale": .string(locale), "encoding": .string(encoding.rawValue), "segments": .number(Double(segments)),
            "status": .string(status.rawValue),
        ]
        if let sentAt { fields["sent_at"] = .number(sentAt.timeIntervalSinceReferenceDate) }
        return .object(fields)
    }

    init?(json: JSONValue) {
        guard case .object(let fields) = json, let provider = fields["provider"]?.stringValue,
            let messageID = fields["message_id"]?.stringValue, let sender = fields["sender"]?.stringValue,
            let locale = fields["locale"]?.stringValue,
            let encoding = fields["encoding"]?.stringValue.flatMap(SMSEncoding.init(rawValue:)),
            let segments = fields["segments"]?.numberValue.flatMap({ Int(exactly: $0) }),
            let status = fields["status"]?.stringValue.flatMap(DeliveryStatus.init(rawValue:))
        else { return nil }
        var sentAt: Date?
        if let value = fields["sent_at"], value != .null {
            guard case .number(let seconds) = value else { return nil }
            sentAt = Date(timeIntervalSinceReferenceDate: seconds)
        }
        self.init(
            provider: provider, messageID: messageID, sender: sender, locale: locale, encoding: encoding,
            segments: segments, status: status, sentAt: sentAt)
    }
}

extension ProviderState {
    /// The state of an own-code verification, read without a `JSONDecoder` pass; nil when it is not one.
    var ownCodeState: OwnCodeState? { OwnCodeState(json: json) }

    /// Stores an own-code state, without a `JSONEncoder` pass.
    init(ownCode state: OwnCodeState) {
        self.init(json: state.json)
    }
}
