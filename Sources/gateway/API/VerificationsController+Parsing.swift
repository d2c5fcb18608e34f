import Foundation
import GatewayCore

/// Reading a start's body: every field checked, unknown ones refused, each problem named with its field.
extension VerificationsController {
    static func parseStart(_ body: Data) throws(GatewayError) -> StartVerification {
        let reader = try JSONObjectReader(data: body)
        try reader.rejectUnknown(allowing: startFields)
        let channel = try parseChannel(try reader.string("channel", maxLength: 32) ?? "sms", field: "channel")
        let to = try reader.string("to", required: true, maxLength: 254) ?? ""
        let region = try PhoneNumbersController.region(try reader.string("region", maxLength: 8))
        let destination = try Destination.parse(to, for: channel, region: region)
        let locales = try reader.stringArray("locales", maxCount: 10, maxLength: 35) ?? []
        for locale in locales where !isLanguageTag(locale) {
            throw GatewayError.invalidRequest("`locales` entry `\(locale)` is not a language tag such as `es-ES`.")
        }
        let proof = try parseProof(reader)
        var fallbackChannels: [Channel] = []
        for (index, name) in (try reader.stringArray("fallback_channels", maxCount: 4, maxLength: 32) ?? [])
            .enumerated()
        {
            let fallback = try parseChannel(name, field: "fallback_channels[\(index)]")
            guard fallback != channel, !fallbackChannels.contains(fallback) else {
                throw GatewayError.invalidRequest(
                    "`fallback_channels` must not repeat a channel or the request's `channel`.")
            }
            guard fallback.needsPhoneNumber == channel.needsPhoneNumber else {
                throw GatewayError.invalidRequest(
                    "`fallback_channels[\(index)]` needs another kind of destination than `channel`.")
            }
            fallbackChannels.append(fallback)
        }
        return StartVerification(
            destination: destination,
            channel: channel,
            locales: locales,
            appVerification: proof,
            codeLength: try reader.integer("code_length", in: 4...10),
            clientReference: try reader.string("client_ref", maxLength: 128),
            metadata: try reader.stringMap("metadata", maxCount: 20) ?? [:],
            forcedProvider: try reader.string("provider", maxLength: 40),
            fallbackChannels: fallbackChannels,
            clientContext: try parseClientContext(reader),
            channelOptions: try parseChannelOptions(reader),
            multiFactor: try parseMultiFactor(reader))
    }

    /// The optional `multi_factor` object: the second factor of a sign-in (`type: sign_in`, the first factor's
    /// `pending_credential` and the enrolled factor's `enrollment_id`) or an enrollment (`type: enroll`, the
    /// signed-in user's `id_token` and an optional `display_name`). Each type takes only its own fields.
    static func parseMultiFactor(_ reader: JSONObjectReader) throws(GatewayError) -> MultiFactor? {
        guard let object = try reader.object("multi_factor") else { return nil }
        let typeName = try object.string("type", required: true, maxLength: 32) ?? ""
        guard let kind = MultiFactor.Kind(rawValue: typeName) else {
            let known = MultiFactor.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw GatewayError.invalidRequest("`multi_factor.type` must be one of: \(known).")
        }
        switch kind {
        case .signIn:
            try object.rejectUnknown(allowing: ["type", "pending_credential", "enrollment_id"])
            let credential = try object.string("pending_credential", required: true, maxLength: 8192) ?? ""
            let enrollment = try object.string("enrollment_id", required: true, maxLength: 128) ?? ""
            for (name, value) in [("pending_credential", credential), ("enrollment_id", enrollment)]
            where !isVisibleASCII(value) {
                throw GatewayError.invalidRequest(
                    "`multi_factor.\(name)` must be the value Firebase returned, without spaces.")
            }
            return .signIn(pendingCredential: credential, enrollmentID: enrollment)
        case .enroll:
            try object.rejectUnknown(allowing: ["type", "id_token", "display_name"])
            let idToken = try object.string("id_token", required: true, maxLength: 8192) ?? ""
            if !isVisibleASCII(idToken) {
                throw GatewayError.invalidRequest(
                    "`multi_factor.id_token` must be the user's ID token, without spaces.")
            }
            let name = try object.string("display_name", maxLength: 128)
            if let name, name.contains(where: { $0.isNewline || ($0.asciiValue.map { $0 < 0x20 } ?? false) }) {
                throw GatewayError.invalidRequest("`multi_factor.display_name` must be one line of text.")
            }
            return .enroll(idToken: idToken, displayName: name)
        }
    }

    static func parseChannel(_ name: String, field: String) throws(GatewayError) -> Channel {
        guard let channel = Channel(rawValue: name) else {
            let known = Channel.allCases.map(\.rawValue).joined(separator: ", ")
            throw GatewayError(.unsupportedChannel, "`\(field)` must be one of: \(known).")
        }
        return channel
    }

    /// The optional `client_context` object: the end user's IP, user agent, device id and app platform.
    static func parseClientContext(_ reader: JSONObjectReader) throws(GatewayError) -> ClientContext {
        guard let object = try reader.object("client_context") else { return ClientContext() }
        try object.rejectUnknown(allowing: ["ip", "user_agent", "device_id", "platform"])
        let ip = try object.string("ip", maxLength: 64)
        if let ip, !isIPAddress(ip) {
            throw GatewayError.invalidRequest("`client_context.ip` must be an IPv4 or IPv6 address.")
        }
        var platform: ClientContext.Platform?
        if let name = try object.string("platform", maxLength: 16) {
            guard let known = ClientContext.Platform(rawValue: name) else {
                let names = ClientContext.Platform.allCases.map(\.rawValue).joined(separator: ", ")
                throw GatewayError.invalidRequest("`client_context.platform` must be one of: \(names).")
            }
            platform = known
        }
        return ClientContext(
            ipAddress: ip, userAgent: try object.string("user_agent", maxLength: 512),
            deviceID: try object.string("device_id", maxLength: 128), platform: platform)
    }

    static func isIPAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4 {
            return parts.allSatisfy { part in
                (1...3).contains(part.count) && part.allSatisfy(\.isASCII) && UInt8(part) != nil
            }
        }
        return text.contains(":") && text.count <= 45
            && text.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }

    /// The optional `channel_options` object: a push factor and its prompt.
    static func parseChannelOptions(_ reader: JSONObjectReader) throws(GatewayError) -> ChannelOptions {
        guard let object = try reader.object("channel_options") else { return ChannelOptions() }
        try object.rejectUnknown(allowing: ["factor_id", "prompt"])
        var options = ChannelOptions(factorID: try object.string("factor_id", maxLength: 64))
        if let prompt = try object.object("prompt") {
            try prompt.rejectUnknown(allowing: ["message", "details", "hidden_details"])
            let message = try prompt.string("message", required: true, maxLength: 256) ?? ""
            var details: [ChannelOptions.Prompt.Detail] = []
            for (index, item) in (try prompt.objectArray("details", maxCount: 10) ?? []).enumerated() {
                try item.rejectUnknown(allowing: ["label", "value"])
                guard let label = try item.string("label", required: true, maxLength: 64),
                    let value = try item.string("value", required: true, maxLength: 256)
                else { throw GatewayError.invalidRequest("`channel_options.prompt.details[\(index)]` is incomplete.") }
                details.append(ChannelOptions.Prompt.Detail(label: label, value: value))
            }
            options.prompt = ChannelOptions.Prompt(
                message: message, details: details,
                hiddenDetails: try prompt.stringMap("hidden_details", maxCount: 20, maxLength: 256) ?? [:])
        }
        return options
    }

    /// The optional `app_verification` object of a start or a resend.
    static func parseProof(_ reader: JSONObjectReader) throws(GatewayError) -> AppVerificationProof? {
        guard let object = try reader.object("app_verification") else { return nil }
        try object.rejectUnknown(allowing: ["type", "token", "secret"])
        let kind = try proofKind(try object.string("type", required: true, maxLength: 32) ?? "")
        let token = try object.string("token", required: true, maxLength: 8192) ?? ""
        let secret = try object.string("secret", maxLength: 1024)
        if kind == .iosReceipt && secret == nil {
            throw GatewayError.invalidRequest("`app_verification.secret` is required with type ios_receipt.")
        }
        return AppVerificationProof(kind: kind, token: token, secret: secret)
    }

    /// Whether `value` is non-empty and only visible ASCII (`!` to `~`): the shape of Firebase's credentials and
    /// tokens (the OpenAPI pattern `^[!-~]+$`).
    static func isVisibleASCII(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// The proof kind `app_verification.type` names. A retired kind (`safety_net`) is refused with the kind
    /// that replaced it, so an app still sending one learns what to send instead.
    static func proofKind(_ name: String) throws(GatewayError) -> AppVerificationProof.Kind {
        if let replacement = AppVerificationProof.retiredKinds[name] {
            throw GatewayError.invalidRequest(
                "`app_verification.type` `\(name)` is no longer accepted: Google shut SafetyNet Attestation down "
                    + "and Firebase no longer takes its tokens. Send a `\(replacement.rawValue)` token instead.")
        }
        guard let kind = AppVerificationProof.Kind(rawValue: name) else {
            let known = AppVerificationProof.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw GatewayError.invalidRequest("`app_verification.type` must be one of: \(known).")
        }
        return kind
    }

    static func isLanguageTag(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return false }
        return parts.dropFirst().allSatisfy {
            (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }
}
