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
        let digest = SHA256.hash(data: Data("\(id)#\(index)".utf8))
        return "VL" + Hex.lowercase(Data(digest.prefix(16)))
    }

    func gatewayField(_ record: VerificationRecord, token: String? = nil) -> JSONValue {
        var fields: [String: JSONValue] = [
            "verification_id": .string(record.id),
            "provider": .string(record.providerID),
            "route": record.route.map(JSONValue.string) ?? .null,
            "experiment": record.experiment.map(JSONValue.string) ?? .null,
            "experiment_arm": record.experimentArm.map(JSONValue.string) ?? .null,
            "status": .string(record.effectiveStatus(at: service.clock.now).rawValue),
            "attempts_remaining": .number(Double(record.attemptsRemaining)),
            "expires_at": .string(VerificationsController.timestamp(record.expiresAt)),
        ]
        if let token { fields["token"] = .string(token) }
        return .object(fields)
    }

    func render(
        _ record: VerificationRecord, service verifyService: TwilioCompatSettings.Service, base: String,
        sendTimes: [Date]
    ) -> JSONValue {
        let sid = Self.sid(verificationID: record.id)
        let status = record.effectiveStatus(at: service.clock.now)
        let channel = Self.twilioChannel(record.channel)
        let attempts: [JSONValue] = (0..<max(record.sends, 1)).map { index in
            let time = index < sendTimes.count ? sendTimes[index] : record.updatedAt
            return .object([
                "time": .string(VerificationsController.timestamp(time)), "channel": .string(channel),
                "attempt_sid": .string(Self.attemptSID(record.id, index: index)),
            ])
        }
        return .object([
            "sid": .string(sid),
            "service_sid": .string(verifyService.sid),
            "account_sid": .string(settings.accountSID),
            "to": .string(record.destination.value),
            "channel": .string(channel),
            "status": .string(Self.twilioStatus(status)),
            "valid": .bool(status == .approved),
            "lookup": .object([:]),
            "amount": .null,
            "payee": .null,
            "send_code_attempts": .array(attempts),
            "date_created": .string(VerificationsController.timestamp(record.createdAt)),
            "date_updated": .string(VerificationsController.timestamp(record.updatedAt)),
            "sna": .null,
            "url": .string("\(base)/v2/Services/\(verifyService.sid)/Verifications/\(sid)"),
            "gateway": gatewayField(record),
        ])
    }

    func renderCheck(_ record: VerificationRecord, service verifyService: TwilioCompatSettings.Service, token: String?)
        -> JSONValue
    {
        let status = record.effectiveStatus(at: service.clock.now)
        return .object([
            "sid": .string(Self.sid(verificationID: record.id)),
            "service_sid": .string(verifyService.sid),
            "account_sid": .string(settings.accountSID),
            "to": .string(record.destination.value),
            "channel": .string(Self.twilioChannel(record.channel)),
            "status": .string(Self.twilioStatus(status)),
            "valid": .bool(status == .approved),
            "amount": .null,
            "payee": .null,
            "date_created": .string(VerificationsController.timestamp(record.createdAt)),
            "date_updated": .string(VerificationsController.timestamp(record.updatedAt)),
            "sna_attempts_error_codes": .null,
            "gateway": gatewayField(record, token: token),
        ])
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
            "custom_code_enabled": .bool(false),
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
