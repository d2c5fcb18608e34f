import Foundation
import GatewayCore

/// Sinch Verification v1 on the wire (docs/vendors/sinch.md §2–§3, Sinch's camelCase of [OAS] 2.0.1), shared by the
/// provider and the emulator.
enum SinchWire {
    static let basePath = "/verification/v1"
    static let verificationsPath = basePath + "/verifications"

    /// `…/verifications/{kind}/{value}` (`id`, `reference`, `sms/number`).
    static func path(_ kind: String, _ value: String) -> String { verificationsPath + "/" + kind + "/" + value }

    /// Sinch's `method` for each gateway channel it offers (docs/vendors/sinch.md §2.1).
    static let methods: [Channel: String] = [
        .sms: "sms", .voice: "callout", .flashcall: "flashcall", .silentAuth: "seamless", .whatsapp: "whatsapp",
    ]

    static func method(for channel: Channel) -> String? { methods[channel] }

    /// The gateway channel for a Sinch `method`, whatever its case (older specs and the Python SDK 1.x spell the
    /// flash call `flashCall`).
    static func channel(method: String) -> Channel? { methods.first { $0.value == method.lowercased() }?.key }

    /// The canonical lower-case method (`flashCall` → `flashcall`), or `nil` for an unknown one.
    static func canonicalMethod(_ method: String) -> String? {
        channel(method: method).flatMap(self.method(for:))
    }

    // MARK: bodies

    struct Identity: Codable, Sendable, Equatable {
        var type: String
        var endpoint: String?

        init(endpoint: String) {
            self.type = "number"
            self.endpoint = endpoint
        }
    }

    struct SMSOptions: Codable, Sendable, Equatable {
        var codeType: String?
        /// `HH:MM:SS`.
        var expiry: String?
    }

    struct FlashCallOptions: Codable, Sendable, Equatable {
        var dialTimeout: Int?
        var interceptionTimeout: Int?
    }

    struct CodeTypeOptions: Codable, Sendable, Equatable {
        var codeType: String?
    }

    /// `POST /verification/v1/verifications`.
    struct StartRequest: Codable, Sendable, Equatable {
        var identity: Identity?
        var method: String?
        var reference: String?
        var custom: String?
        var smsOptions: SMSOptions?
        var flashCallOptions: FlashCallOptions?
        var whatsappOptions: CodeTypeOptions?
    }

    struct Link: Codable, Sendable, Equatable {
        var rel: String
        var href: String
        var method: String
    }

    struct SMSDetails: Codable, Sendable, Equatable {
        var template: String?
        var interceptionTimeout: Int?
        var codeType: String?
    }

    struct FlashCallDetails: Codable, Sendable, Equatable {
        /// A regular expression the incoming caller number matches.
        var cliFilter: String?
        var interceptionTimeout: Int?
        var reportTimeout: Int?
        var denyCallAfter: Int?
    }

    struct SeamlessDetails: Codable, Sendable, Equatable {
        var targetUri: String?
    }

    /// The start answer (docs/vendors/sinch.md §2.2); the member named after the method carries its details.
    struct StartResponse: Codable, Sendable, Equatable {
        var id: String?
        var method: String?
        var links: [Link]?
        var sms: SMSDetails?
        var flashCall: FlashCallDetails?
        var seamless: SeamlessDetails?
        var whatsapp: CodeTypeOptions?

        enum CodingKeys: String, CodingKey {
            case id, method, sms, flashCall, seamless, whatsapp
            case links = "_links"
        }
    }

    struct ReportCode: Codable, Sendable, Equatable {
        var code: String?
        var cli: String?
    }

    /// `PUT …/id/{id}` or `…/number/{endpoint}`: `{"method": "sms", "sms": {"code": "…"}}`.
    struct ReportRequest: Codable, Sendable, Equatable {
        var method: String?
        var sms: ReportCode?
        var flashCall: ReportCode?
        var callout: ReportCode?
        var whatsapp: ReportCode?

        /// The member carrying a `method`'s report (`sms` for any other).
        static func member(_ method: String) -> WritableKeyPath<ReportRequest, ReportCode?> {
            ["flashcall": \.flashCall, "callout": \.callout, "whatsapp": \.whatsapp][method] ?? \.sms
        }

        /// The report for `method` carrying `value`: the code, or for a flash call the caller number as `cli`.
        init(method: String, value: String) {
            self.method = method
            self[keyPath: Self.member(method)] =
                method == "flashcall" ? ReportCode(code: nil, cli: value) : ReportCode(code: value, cli: nil)
        }

        /// What the user reported for `method`: the flash call's `cli`, the other methods' `code` (an SMS
        /// may also carry `cli`, which the SDKs send for an intercepted SMS; the code is what counts).
        func value(for method: String) -> String? {
            let report = self[keyPath: Self.member(method)]
            return (method == "flashcall" ? report?.cli : report?.code).flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    struct Money: Codable, Sendable, Equatable {
        var currencyId: String
        var amount: Double
    }

    struct Price: Codable, Sendable, Equatable {
        var verificationPrice: Money?
        var terminationPrice: Money?
        var billableDuration: Int?
    }

    /// The report answer and the status answer (docs/vendors/sinch.md §2.4); the status adds the identity and the rest.
    struct StatusResponse: Codable, Sendable, Equatable {
        var id: String?
        var method: String?
        var status: String?
        var reason: String?
        var reference: String?
        var identity: Identity?
        var countryId: String?
        /// UTC without `Z`: `YYYY-MM-DDThh:mm:ss.SSS`.
        var verificationTimestamp: String?
        var source: String?
        var callComplete: Bool?
        var price: Price?
    }

    /// Sinch's error body (docs/vendors/sinch.md §4.1). `errorCode` is a string in the schema and a number in every
    /// example: both are read.
    struct ErrorBody: Codable, Sendable, Equatable {
        var errorCode: Int?
        var message: String?
        var reference: String?
    }

    // MARK: callbacks (docs/vendors/sinch.md §3.3)

    static let requestEvent = "VerificationRequestEvent"
    static let resultEvent = "VerificationResultEvent"
    static let smsDeliveredEvent = "VerificationSmsDeliveredEvent"

    /// Any of the three events; `event` says which.
    struct Event: Codable, Sendable, Equatable {
        var id: String?
        var event: String?
        var method: String?
        var identity: Identity?
        var reference: String?
        var custom: String?
        var status: String?
        var reason: String?
        var source: String?
        var acceptLanguage: [String]?
        var smsResult: String?
    }

    /// The answer to a request event: `allow` or `deny`.
    struct EventAction: Codable, Sendable, Equatable {
        var action: String
    }

    // MARK: dates

    /// `verificationTimestamp`'s form: UTC, milliseconds, no zone designator.
    static func verificationTimestamp(_ date: Date) -> String { VendorDate.utc(date, milliseconds: true) }

    // MARK: languages

    /// The caller's ordered languages as an `Accept-Language` value: the first without a weight, the next
    /// ones with falling `q` (docs/vendors/sinch.md §2.3). At most ten; tags that are not language tags are skipped.
    static func acceptLanguage(_ locales: [String]) -> String? {
        var tags: [String] = []
        for locale in locales {
            let tag = locale.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "-")
            guard (2...35).contains(tag.count),
                tag.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }),
                !tags.contains(where: { $0.caseInsensitiveCompare(tag) == .orderedSame })
            else { continue }
            tags.append(tag)
            if tags.count == 10 { break }
        }
        guard !tags.isEmpty else { return nil }
        return tags.enumerated().map { index, tag in
            index == 0 ? tag : tag + ";q=0." + String(10 - index)
        }.joined(separator: ", ")
    }

    /// Reads an `Accept-Language` value into tags, highest weight first (ties keep their order).
    static func languages(fromAcceptLanguage header: String?) -> [String] {
        guard let header else { return [] }
        var weighted: [(tag: String, q: Double, index: Int)] = []
        for (index, item) in header.split(separator: ",").enumerated() {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, !tag.isEmpty, tag != "*" else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                q = Double(parameter.dropFirst(2)) ?? 0
            }
            if q > 0 { weighted.append((tag, q, index)) }
        }
        return weighted.sorted { ($0.q, -$0.index) > ($1.q, -$1.index) }.map(\.tag)
    }
}

extension SinchWire.ErrorBody {
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let text = try? container.decodeIfPresent(String.self, forKey: .errorCode)
        errorCode =
            (try? container.decodeIfPresent(Int.self, forKey: .errorCode))
            ?? text.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        message = try? container.decodeIfPresent(String.self, forKey: .message)
        reference = try? container.decodeIfPresent(String.self, forKey: .reference)
    }
}
