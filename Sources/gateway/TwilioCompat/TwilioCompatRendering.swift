import Crypto
import Foundation
import GatewayCore

/// Twilio's resources from the gateway's records: a Verification, a VerificationCheck and a Service, each
/// with the fields of Twilio's schema, and the gateway's truth in the documented extension field `gateway`.
extension TwilioCompatController {
    /// Twilio's channel names: the gateway's `voice` is Twilio's `call`.
    static func twilioChannel(_ channel: Channel) -> String {
        switch channel {
        case .voice: "call"
        default: channel.rawValue
        }
    }

    /// Twilio's status values: `denied` and `blocked` end as Twilio's `failed`.
    static func twilioStatus(_ status: VerificationStatus) -> String {
        switch status {
        case .pending, .approved, .canceled, .expired, .failed: status.rawValue
        case .maxAttemptsReached: "max_attempts_reached"
        case .denied, .blocked: "failed"
        }
    }

    /// A `VL…` attempt SID for a send: derived from the verification and the send's number, so it is the same
    /// on every read.
    static func attemptSID(_ id: String, index: Int) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(id.utf8))
        hasher.update(data: Array("#\(index)".utf8))
        return "VL" + Hex.lowercase(hasher.finalize().prefix(16))
    }

    /// The Verification resource as JSON text, written field by field in the order `.sortedKeys` gives (the
    /// bytes ``JSONResponse/encode(_:)`` writes for the same object, without building it first: a create
    /// answers one on every call). The gateway's truth is in the documented extension field `gateway`.
    func render(
        _ record: VerificationRecord, service verifyService: TwilioCompatSettings.Service, base: String,
        sendTimes: [Date]
    ) -> String {
        let sid = Self.sid(verificationID: record.id)
        let status = record.effectiveStatus(at: service.clock.now)
        let channel = Self.twilioChannel(record.channel)
        var attempts = "["
        for index in 0..<max(record.sends, 1) {
            let time = index < sendTimes.count ? sendTimes[index] : record.updatedAt
            var attempt = JSONObjectText()
            attempt.field("attempt_sid", Self.attemptSID(record.id, index: index))
            attempt.field("channel", channel)
            attempt.field("time", VerificationsController.timestamp(time))
            attempts += (index > 0 ? "," : "") + attempt.done
        }
        var out = JSONObjectText()
        out.field("account_sid", settings.accountSID)
        out.field("amount", raw: "null")
        out.field("channel", channel)
        out.field("date_created", VerificationsController.timestamp(record.createdAt))
        out.field("date_updated", VerificationsController.timestamp(record.updatedAt))
        out.field("gateway", raw: gatewayJSON(record, status: status, token: nil))
        out.field("lookup", raw: "{}")
        out.field("payee", raw: "null")
        out.field("send_code_attempts", raw: attempts + "]")
        out.field("service_sid", verifyService.sid)
        out.field("sid", sid)
        out.field("sna", raw: "null")
        out.field("status", Self.twilioStatus(status))
        out.field("to", record.destination.value)
        out.field("url", "\(base)/v2/Services/\(verifyService.sid)/Verifications/\(sid)")
        out.field("valid", raw: status == .approved ? "true" : "false")
        return out.done
    }

    /// The extension field `gateway`: the verification as the gateway knows it (its id, the real provider,
    /// route, experiment and arm, status, attempts left, expiry) and, after an approving check, its token.
    private func gatewayJSON(_ record: VerificationRecord, status: VerificationStatus, token: String?) -> String {
        var out = JSONObjectText()
        out.field("attempts_remaining", raw: String(record.attemptsRemaining))
        out.field("experiment", record.experiment)
        out.field("experiment_arm", record.experimentArm)
        out.field("expires_at", VerificationsController.timestamp(record.expiresAt))
        out.field("provider", record.providerID)
        out.field("route", record.route)
        out.field("status", status.rawValue)
        if let token { out.field("token", token) }
        out.field("verification_id", record.id)
        return out.done
    }

    /// The VerificationCheck resource as JSON text, as ``render(_:service:base:sendTimes:)`` writes its
    /// Verification.
    func renderCheck(_ record: VerificationRecord, service verifyService: TwilioCompatSettings.Service, token: String?)
        -> String
    {
        let status = record.effectiveStatus(at: service.clock.now)
        var out = JSONObjectText()
        out.field("account_sid", settings.accountSID)
        out.field("amount", raw: "null")
        out.field("channel", Self.twilioChannel(record.channel))
        out.field("date_created", VerificationsController.timestamp(record.createdAt))
        out.field("date_updated", VerificationsController.timestamp(record.updatedAt))
        out.field("gateway", raw: gatewayJSON(record, status: status, token: token))
        out.field("payee", raw: "null")
        out.field("service_sid", verifyService.sid)
        out.field("sid", Self.sid(verificationID: record.id))
        out.field("sna_attempts_error_codes", raw: "null")
        out.field("status", Self.twilioStatus(status))
        out.field("to", record.destination.value)
        out.field("valid", raw: status == .approved ? "true" : "false")
        return out.done
    }

    func renderService(_ verifyService: TwilioCompatSettings.Service, base: String) -> JSONValue {
        let url = "\(base)/v2/Services/\(verifyService.sid)"
        let date = JSONValue.string(VerificationsController.timestamp(loadedAt))
        return .object([
            "sid": .string(verifyService.sid),
            "account_sid": .string(settings.accountSID),
            "friendly_name": .string(verifyService.friendlyName),
            "code_length": .number(Double(verifyService.codeLength ?? 6)),
            "lookup_enabled": .bool(false),
            "psd2_enabled": .bool(false),
            "skip_sms_to_landlines": .bool(false),
            "dtmf_input_required": .bool(false),
            "tts_name": .null,
            "do_not_share_warning_enabled": .bool(false),
            "custom_code_enabled": .bool(takesCustomCodes(verifyService)),
            "push": .null,
            "totp": .null,
            "default_template_sid": .null,
            "whatsapp": .null,
            "passkeys": .null,
            "verify_event_subscription_enabled": .bool(false),
            "date_created": date,
            "date_updated": date,
            "url": .string(url),
            "links": .object([
                "verifications": .string("\(url)/Verifications"),
                "verification_checks": .string("\(url)/VerificationCheck"),
            ]),
            "gateway": .object([
                "route": .string(verifyService.route.name),
                "target": verifyService.route.targetDescription,
                "fallbacks": .array(verifyService.route.fallbacks.map(JSONValue.string)),
            ]),
        ])
    }
}

extension Route {
    /// `{"providers": [...]}`, `{"experiment": NAME}` or `{"adaptive": [...]}` (the bandit's providers).
    fileprivate var targetDescription: JSONValue {
        switch target {
        case .providers(let ids): .object(["providers": .array(ids.map(JSONValue.string))])
        case .experiment(let name): .object(["experiment": .string(name)])
        case .adaptive(let policy): .object(["adaptive": .array(policy.providers.map(JSONValue.string))])
        }
    }
}

/// A JSON object written field by field; the caller gives the fields in the order `.sortedKeys` would.
struct JSONObjectText {
    private var text = "{"
    private var empty = true

    var done: String { text + "}" }

    mutating func field(_ name: String, raw value: String) {
        open(name)
        text += value
    }

    mutating func field(_ name: String, _ value: String?) {
        guard let value else { return field(name, raw: "null") }
        open(name)
        JSONTextWriter.writeString(value, into: &text)
    }

    private mutating func open(_ name: String) {
        if !empty { text += "," }
        empty = false
        JSONTextWriter.writeString(name, into: &text)
        text += ":"
    }
}
