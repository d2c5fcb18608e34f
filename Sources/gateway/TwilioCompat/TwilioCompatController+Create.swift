import Foundation
import GatewayCore

/// Reading a Twilio `CreateVerification` form into the engine's start: each parameter served, refused with
/// Twilio's code, or checked and ignored, as docs/twilio-compat.md lists them.
extension TwilioCompatController {
    /// Twilio's channels the facade serves, as the gateway's.
    static let channels: [String: Channel] = ["sms": .sms, "call": .voice, "whatsapp": .whatsapp, "email": .email]

    static func parseCreate(
        _ form: TwilioCompatForm, service verifyService: TwilioCompatSettings.Service, takesCustomCodes: Bool = false
    ) throws(TwilioCompatError) -> StartVerification {
        let to = try form.required("To")
        let channelName = try form.required("Channel")
        guard let channel = channels[channelName] else {
            if channelName == "sna" || channelName == "auto" {
                throw TwilioCompatError.unsupported(
                    "Channel", "`\(channelName)` is not served by this gateway; use sms, call, whatsapp or email")
            }
            throw TwilioCompatError.invalidParameter("Channel", "it must be one of sms, call, whatsapp, email")
        }
        for name in ["Amount", "Payee", "CustomMessage", "TemplateSid", "TemplateCustomSubstitutions"]
        where form[name] != nil {
            throw TwilioCompatError.unsupported(name, refusals[name] ?? "")
        }
        var customCode: String?
        if let code = form["CustomCode"] {
            guard takesCustomCodes else {
                throw TwilioCompatError.unsupported("CustomCode", refusals["CustomCode"] ?? "")
            }
            guard channel == .sms, let custom = OwnCodeFormat.custom(code) else {
                throw TwilioCompatError.invalidParameter(
                    "CustomCode",
                    channel == .sms
                        ? "it must be 4 to 10 digits, or letters and digits without 0, O, 1, I and L"
                        : "the gateway's own codes go by sms only")
            }
            customCode = custom.code
        }
        if let token = form["EnableSnaClientToken"], token != "false" {
            throw TwilioCompatError.unsupported("EnableSnaClientToken", "the `sna` channel is not served")
        }
        guard to.utf8.count <= 254 else { throw TwilioCompatError.invalidParameter("To", "it is too long") }
        let destination: Destination
        do {
            destination = try Destination.parse(to, for: channel)
        } catch {
            throw TwilioCompatError.invalidParameter("To", error.message)
        }
        var locales: [String] = []
        if let locale = form["Locale"] {
            guard locale.utf8.count <= 35, VerificationsController.isLanguageTag(locale) else {
                throw TwilioCompatError.invalidParameter("Locale", "it must be a language tag such as `es` or `pt-BR`")
            }
            locales = [locale]
        }
        if let name = form["CustomFriendlyName"], name.count > 30 {
            throw TwilioCompatError.invalidParameter("CustomFriendlyName", "it must be at most 30 characters")
        }
        if let hash = form["AppHash"], hash.count > 32 || !hash.allSatisfy({ $0.isASCII && !$0.isWhitespace }) {
            throw TwilioCompatError.invalidParameter("AppHash", "it must be the app's 11-character hash")
        }
        if let digits = form["SendDigits"], digits.count > 32 || !digits.allSatisfy({ "0123456789wW#*".contains($0) }) {
            throw TwilioCompatError.invalidParameter("SendDigits", "it takes digits, `w`, `#` and `*`")
        }
        if let risk = form["RiskCheck"], risk != "enable" && risk != "disable" {
            throw TwilioCompatError.invalidParameter("RiskCheck", "it must be `enable` or `disable`")
        }
        _ = try form.jsonObject("RateLimits")
        _ = try form.jsonObject("ChannelConfiguration")
        var metadata = [serviceMetadataKey: verifyService.sid]
        if let tags = try form.jsonObject("Tags") {
            guard tags.count <= 10 else {
                throw TwilioCompatError.invalidParameter("Tags", "it takes at most 10 tags")
            }
            for (key, value) in tags {
                guard case .string(let text) = value, (1...128).contains(key.count), text.count <= 128 else {
                    throw TwilioCompatError.invalidParameter(
                        "Tags", "keys and values are strings of up to 128 characters")
                }
                metadata["twilio_tag." + key] = text
            }
        }
        var clientContext = ClientContext()
        if let ip = form["DeviceIp"] {
            guard ip.utf8.count <= 64, VerificationsController.isIPAddress(ip) else {
                throw TwilioCompatError.invalidParameter("DeviceIp", "it must be an IPv4 or IPv6 address")
            }
            clientContext.ipAddress = ip
        }
        var start = StartVerification(
            destination: destination, channel: channel, locales: locales, codeLength: verifyService.codeLength,
            metadata: metadata, clientContext: clientContext, route: verifyService.route)
        start.customCode = customCode
        return start
    }

    /// Whether the service's starts may bring a `CustomCode` (its `custom_code_enabled`): every provider its route
    /// can send to, fallbacks and experiment arms included, sends the gateway's own codes.
    func takesCustomCodes(_ verifyService: TwilioCompatSettings.Service) -> Bool {
        let route = verifyService.route
        var ids: [String]
        switch route.target {
        case .providers(let list): ids = list
        case .adaptive(let policy): ids = policy.providers
        case .experiment(let name): ids = service.routing.experiments[name]?.arms.map(\.providerID) ?? []
        }
        ids += route.fallbacks
        return !ids.isEmpty
            && ids.allSatisfy { service.registry.provider($0)?.capabilities.takesCustomCode == true }
    }

    /// Why each refused parameter is refused (Twilio's 60204, "Service does not support this feature").
    static let refusals: [String: String] = [
        "CustomCode": "this service's route sends through vendors that generate and check their own codes; only a "
            + "route of the gateway's own-code providers takes one",
        "Amount": "PSD2 transaction parameters are not served by this gateway",
        "Payee": "PSD2 transaction parameters are not served by this gateway",
        "CustomMessage": "deprecated by Twilio; each vendor sends its own message",
        "TemplateSid": "each vendor sends its own message template",
        "TemplateCustomSubstitutions": "each vendor sends its own message template",
    ]
}
