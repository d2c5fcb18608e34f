import Crypto
import Foundation
import GatewayCore

/// The device headers of every IDaaS call (docs/vendors/idaas.md §1), taken from the request's client context with
/// the configured defaults where the client gave none. Kept in the verification's state so the check sends what the
/// start sent. Never logged: ``masked`` is the only form logs see.
struct IDaaSDevice: Codable, Sendable, Equatable {
    var fingerprint: String
    var os: String
    var agent: String
    var ip: String?
    var language: String

    /// - `fingerprint`: the client's device id; else a stable digest of the client id and the number, so the
    ///   same user keeps the same fingerprint (docs/vendors/idaas.md §1: "keep stable per user/device").
    /// - `os`: read from the user agent (Android, iOS, Windows, macOS), else the configured default.
    init(context: ClientContext, subject: String, locales: [String], configuration: IDaaSConfiguration) {
        let digest = SHA256.hash(data: Data((configuration.clientID + "|" + subject).utf8))
        fingerprint = context.deviceID.flatMap(Self.clean) ?? "gw" + Hex.lowercase(digest.prefix(15))
        let agent = context.userAgent.flatMap(Self.clean)
        self.agent = agent ?? configuration.defaultAgent
        os = agent.flatMap(Self.operatingSystem(in:)) ?? configuration.defaultOS
        ip = context.ipAddress.flatMap(Self.clean)
        language = Self.language(locales) ?? configuration.defaultLanguage
    }

    /// For logs: the IP's first part and the OS family only.
    var masked: String {
        let family = os.split(separator: " ").first.map(String.init) ?? "-"
        return "\(ClientContext(ipAddress: ip).masked) \(family)"
    }

    /// `X-L` from the preferred languages: the first that is Chinese or English.
    static func language(_ locales: [String]) -> String? {
        for locale in locales {
            let lower = locale.lowercased()
            if lower.hasPrefix("zh") { return "zh" }
            if lower.hasPrefix("en") { return "en" }
        }
        return nil
    }

    /// The OS a user agent names: `Android 14`, `iOS 17.4`, `Windows NT 10.0`, `Mac OS X 14.4`.
    static func operatingSystem(in agent: String) -> String? {
        let patterns: [(String, (String) -> String)] = [
            (#"Android [0-9.]+"#, { $0 }),
            (
                #"(?:iPhone|CPU) OS [0-9_]+"#,
                { "iOS " + $0.drop { !$0.isNumber }.replacingOccurrences(of: "_", with: ".") }
            ),
            (#"Windows NT [0-9.]+"#, { $0 }),
            (#"Mac OS X [0-9_.]+"#, { $0.replacingOccurrences(of: "_", with: ".") }),
        ]
        for (pattern, render) in patterns {
            if let range = agent.range(of: pattern, options: .regularExpression) { return render(String(agent[range])) }
        }
        return nil
    }

    /// Printable ASCII only, at most 256 characters: safe as an HTTP header value; `nil` when nothing is left.
    static func clean(_ value: String) -> String? {
        let cleaned = ASCIIText.printable(value, max: 256)
        return cleaned.isEmpty ? nil : cleaned
    }
}
