import Foundation
import GatewayCore
import GatewayKitCrypto

/// The gateway's own codes (docs/own-codes.md), for the providers of messaging plugins:
///
/// ```yaml
/// own_codes: {secret_env: GATEWAY_OWN_CODE_SECRET, length: 6, alphabet: digits, new_code_on_resend: false}
/// messages:
///   app: Acme
///   origin_bound: {host: example.com}
///   android_app_hash: FA+9qCX9VSu
///   max_segments: 1
///   templates: {en: "Your {app} code is {code}.", pt-BR: "Seu código {app}: {code}"}
/// providers:
///   - {id: twilio_messaging, plugin: twilio_messaging, settings: {…},
///      senders: {default: "+14155550100", GB: Acme, US: "+14155550101"}}
/// ```
///
/// A code stays good for `policy.code_validity_seconds`, which `{minutes}` states. The sandbox needs none of
/// it: without `own_codes` it keys the codes with a secret of its own (new at each start), names the app
/// `Sandbox`, and sends from `+15005550006` where a provider has no `senders`.
struct OwnCodeConfiguration: Sendable {
    /// The key from `own_codes.secret_env`; `nil` when absent.
    var key: (any OwnCodeKey)?
    var format = OwnCodeFormat.standard
    var newCodeOnResend = false
    var catalog: MessageCatalog?
    /// `senders` of each messaging provider, by provider id.
    var senders: [String: SenderTable] = [:]

    /// The sender of a sandbox provider that names none.
    static let sandboxSender = SenderAddress.number("+15005550006")
}

extension GatewayConfiguration {
    /// `own_codes` and `messages`.
    mutating func readOwnCodes(_ top: ConfigMap, environment: [String: String]) {
        if let section = top.map("own_codes", message: "`own_codes` must be a mapping with `secret_env`") {
            section.rejectUnknown(
                ["secret_env", "length", "alphabet", "new_code_on_resend"],
                hints: ["secret": "give the secret as secret_env: VARIABLE, never in clear"])
            let message = "own_codes: `secret_env` must name an environment variable"
            if let variable = section.string("secret_env", nonEmpty: true, message: message) {
                if let secret = environment[variable], let key = HMACOwnCodeKey(secret: Array(secret.utf8)) {
                    ownCodes.key = key
                } else {
                    section.problem(
                        "own_codes: environment variable \(variable) is not set or shorter than "
                            + "\(HMACOwnCodeKey.minimumSecretBytes) bytes",
                        at: "secret_env")
                }
            } else if !section.has("secret_env") {
                section.problem("own_codes: `secret_env` is required")
            }
            let length = section.int(
                "length", in: OwnCodeFormat.minimumLength...OwnCodeFormat.maximumLength,
                message: "own_codes: `length` must be a whole number from 4 to 10")
            let alphabet = section.value("alphabet")?.choice(OwnCodeFormat.Alphabet.self)
            ownCodes.format = OwnCodeFormat(length: length ?? 6, alphabet: alphabet ?? .digits)
            ownCodes.newCodeOnResend = section.bool("new_code_on_resend") ?? false
        }
        if let section = top.map("messages", message: "`messages` must be a mapping with `app` and `templates`") {
            ownCodes.catalog = readMessages(section)
        }
    }

    private func readMessages(_ section: ConfigMap) -> MessageCatalog? {
        section.rejectUnknown(["app", "templates", "origin_bound", "android_app_hash", "max_segments"])
        let app = section.string("app", nonEmpty: true, message: "messages: `app` must be a name such as Acme")
        var overrides: [String: MessageTemplate] = [:]
        if let templates = section.map("templates", message: "messages: `templates` must map language tags to texts") {
            for member in templates.node.members ?? [] {
                let position = member.value.position ?? member.keyPosition
                guard let text = member.value.scalarText else {
                    section.log.problem("messages.templates.\(member.key) must be a text", at: position)
                    continue
                }
                do {
                    overrides[member.key] = try MessageTemplate(text)
                } catch {
                    for problem in error.problems {
                        section.log.problem("messages.templates.\(member.key): \(problem)", at: position)
                    }
                }
            }
        }
        var host: String?
        if let originBound = section.map(
            "origin_bound", message: "messages: `origin_bound` must be {host: example.com}")
        {
            originBound.rejectUnknown(["host"])
            host = originBound.string("host", nonEmpty: true, message: "messages.origin_bound: `host` is required")
        }
        let appHash = section.string("android_app_hash", message: "messages: `android_app_hash` must be a text")
        let autofill: MessageAutofill
        do {
            autofill = try MessageAutofill(originBoundHost: host, androidAppHash: appHash)
        } catch {
            for problem in error.problems {
                let key = problem.hasPrefix("android_app_hash") ? "android_app_hash" : "origin_bound"
                section.problem("messages: \(problem)", at: key)
            }
            return nil
        }
        let maxSegments = section.int(
            "max_segments", in: 1...10, message: "messages: `max_segments` must be a whole number from 1 to 10")
        return MessageCatalog(app: app ?? "", overrides: overrides, autofill: autofill, maxSegments: maxSegments)
    }

    /// A provider's `senders: {default: SENDER, GB: SENDER, …}`.
    static func readSenders(_ map: ConfigMap, label: String) -> SenderTable? {
        var fallback: SenderAddress?
        var byCountry: [String: SenderAddress] = [:]
        var failed = false
        for member in map.node.members ?? [] {
            let position = member.value.position ?? member.keyPosition
            guard let text = member.value.scalarText else {
                map.log.problem("\(label): senders.\(member.key) must be a text", at: position)
                failed = true
                continue
            }
            let address: SenderAddress
            do { address = try SenderAddress(parsing: text) } catch {
                for problem in error.problems { map.log.problem("\(label): \(problem)", at: position) }
                failed = true
                continue
            }
            if member.key == "default" {
                fallback = address
            } else if PhoneRegion.named(member.key.uppercased()) != nil {
                byCountry[member.key.uppercased()] = address
            } else {
                map.log.problem(
                    "\(label): senders.\(member.key) is neither `default` nor a region code such as GB",
                    at: member.keyPosition)
                failed = true
            }
        }
        do {
            let table = try SenderTable(fallback: fallback, byCountry: byCountry)
            return failed ? nil : table
        } catch {
            for problem in error.problems { map.log.problem("\(label): \(problem)", at: map.position) }
            return nil
        }
    }

    /// Every template that renders over `max_segments` with the longest code of the format. (A messaging
    /// provider that lacks its key, `messages` or `senders` is refused by its plugin, with the rest of its
    /// problems.)
    func ownCodeProblems() -> [String] {
        guard let catalog = ownCodes.catalog else { return [] }
        let minutes = max(1, Int(policy.codeValidity / 60))
        return catalog.problems(format: ownCodes.format, minutes: minutes).map { "messages: " + $0 }
    }

    /// What a messaging provider issues codes with; `nil` for a provider of another plugin, or when the
    /// configuration lacks what it needs (a problem of ``ownCodeProblems(plugins:)`` outside the sandbox).
    func ownCodeSettings(providerID: String, plugin: GatewayPlugin) -> OwnCodeSettings? {
        guard plugin.sendsOwnCodes else { return nil }
        let senders =
            ownCodes.senders[providerID]
            ?? (sandbox ? try? SenderTable(fallback: OwnCodeConfiguration.sandboxSender) : nil)
        guard let key = ownCodes.key ?? (sandbox ? Self.sandboxOwnCodeKey : nil), let senders else { return nil }
        let catalog = ownCodes.catalog ?? (sandbox ? MessageCatalog(app: "Sandbox") : nil)
        guard let catalog else { return nil }
        return OwnCodeSettings(
            key: key, catalog: catalog, senders: senders, format: ownCodes.format,
            validity: .seconds(Int64(policy.codeValidity)), newCodeOnResend: ownCodes.newCodeOnResend)
    }

    /// The sandbox's key when the configuration names none: new at each start of the process.
    static let sandboxOwnCodeKey: any OwnCodeKey = {
        var generator = SystemRandomNumberGenerator()
        let secret = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return HMACOwnCodeKey(secret: secret)!
    }()
}
