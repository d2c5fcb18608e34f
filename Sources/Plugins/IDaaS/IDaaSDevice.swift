import Crypto
import Foundation
import GatewayCore

/// The device headers of every IDaaS call (docs/vendors/idaas.md §1), taken from the request's client context with the
/// configured defaults where the client gave none. Kept in the verification's state so the check sends
/// what the start sent. Never logged: ``masked`` is the only form logs see.
struct IDaaSDevice: Codable, Sendable, Equatable {
    var fingerprint: String
    var os: String
    var agent: String
    var ip: String?
    var language: String

    enum CodingKeys: String, CodingKey {
        case fingerprint, os, agent, ip, language
    }

    /// - `fingerprint`: the client's device id; else a stable digest of the client id and the number, so the
    ///   same user keeps the same fingerprint (docs/vendors/idaas.md §1: "keep stable per user/device").
    /// - `os`: read from the user agent (Android, iOS, Windows, macOS), else the configured default.
    init(context: ClientContext, subject: String, locales: [String], configuration: IDaaSConfiguration) {
        if let id = context.deviceID.map(Self.clean), !id.isEmpty {
            fingerprint = id
        } else {
            let digest = SHA256.hash(data: Data((configuration.clientID + "|" + subject).utf8))
            fingerprint = "gw" + digest.prefix(15).map { String(format: "%02x", $0) }.joined()
        }
        let agent = context.userAgent.map(Self.clean).flatMap { $0.isEmpty ? nil : $0 }
        self.agent = agent ?? configuration.defaultAgent
        os = agent.flatMap(Self.operatingSystem(in:)) ?? configuration.defaultOS
        ip = context.ipAddress.map(Self.clean).flatMap { $0.isEmpty ? nil : $0 }
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
                {
                    "iOS "
                        + ($0.split(separator: " ").last.map(String.init) ?? "").replacingOccurrences(
                            of: "_", with: ".")
                }
            ),
            (#"Windows NT [0-9.]+"#, { $0 }),
            (#"Mac OS X [0-9_.]+"#, { $0.replacingOccurrences(of: "_", with: ".") }),
        ]
        for (pattern, render) in patterns {
            if let range = agent.range(of: pattern, options: .regularExpression) { return render(String(agent[range])) }
        }
        return nil
    }

    /// Printable ASCII only, at most 256 characters: safe as an HTTP header value.
    static func clean(_ value: String) -> String {
        String(
            String.UnicodeScalarView(value.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }).prefix(256)
        )
        .trimmingCharacters(in: .whitespaces)
    }
}
