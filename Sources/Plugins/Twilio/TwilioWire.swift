import Foundation
import GatewayCore

/// Twilio Verify v2 on the wire, shared by the provider and the emulator. Field names follow
/// `specs/twilio_verify_v2.yaml` exactly, so the official `twilio` client parses the emulator's answers.
enum TwilioWire {
    /// How long a code stays valid: Twilio's documented default of 10 minutes (docs/vendors/twilio.md §2.6, [RL]).
    static let validity: TimeInterval = 600
    /// Checks Twilio allows per verification before answering 60202 (docs/vendors/twilio.md §2.6, [ERR-60202]).
    static let maxChecks = 5
    /// Sends Twilio allows per verification window before answering 60203 ([ERR-60203]).
    static let maxSends = 5
    /// The length range of `Code` (docs/vendors/twilio.md §2.3).
    static let codeLengths = 4...10

    /// Twilio's `Channel` for each gateway channel Verify v2 OTP offers.
    static let channelNames: [Channel: String] = [.sms: "sms", .voice: "call", .whatsapp: "whatsapp", .email: "email"]

    static func channelName(for channel: Channel) -> String? { channelNames[channel] }

    static func channel(named name: String) -> Channel? {
        channelNames.first { $0.value == name.lowercased() }?.key
    }

    /// The gateway status of each `status` Twilio documents; `deleted` is a verification Twilio soft-deleted once
    /// it could no longer be used.
    static let statuses: [String: VerificationStatus] = [
        "pending": .pending, "approved": .approved, "canceled": .canceled, "expired": .expired, "deleted": .expired,
        "max_attempts_reached": .maxAttemptsReached, "failed": .failed,
    ]

    static func status(named name: String) -> VerificationStatus? { statuses[name] }

    static func format(_ date: Date) -> String { VendorDate.iso8601(date) }

    static func parseDate(_ text: String?) -> Date? { VendorDate.parseISO8601(text) }

    // MARK: bodies

    /// The REST error envelope of every non-2xx answer (docs/vendors/twilio.md §4.1).
    struct ErrorEnvelope: Codable, Sendable, Equatable {
        var code: Int?
        var message: String?
        var moreInfo: String?
        var status: Int?

        enum CodingKeys: String, CodingKey {
            case code, message, status
            case moreInfo = "more_info"
        }

        init(code: Int, message: String, status: Int) {
            self.code = code
            self.message = message
            self.moreInfo = "https://www.twilio.com/docs/errors/\(code)"
            self.status = status
        }
    }

    /// One entry of `send_code_attempts`.
    struct SendCodeAttempt: Codable, Sendable, Equatable {
        var time: String?
        var channel: String?
        var attemptSID: String?

        enum CodingKeys: String, CodingKey {
            case time, channel
            case attemptSID = "attempt_sid"
        }
    }

    /// `lookup` as the emulator reports it: an empty object (no Lookup add-on).
    struct Lookup: Codable, Sendable, Equatable {}

    /// `sna`: the URL of a silent-network-auth verification.
    struct SNA: Codable, Sendable, Equatable {
        var url: String?
    }

    /// The Verification resource (start, fetch, update). Every field is nullable in the spec and is
    /// always written, as `null` when absent.
    struct Verification: Codable, Sendable, Equatable {
        var sid: String?
        var serviceSID: String?
        var accountSID: String?
        var to: String?
        var channel: String?
        var status: String?
        var valid: Bool?
        var lookup: Lookup?
        var amount: String?
        var payee: String?
        var sendCodeAttempts: [SendCodeAttempt]?
        var dateCreated: String?
        var dateUpdated: String?
        var sna: SNA?
        var url: String?

        enum CodingKeys: String, CodingKey {
            case sid, to, channel, status, valid, lookup, amount, payee, sna, url
            case serviceSID = "service_sid"
            case accountSID = "account_sid"
            case sendCodeAttempts = "send_code_attempts"
            case dateCreated = "date_created"
            case dateUpdated = "date_updated"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(sid, forKey: .sid)
            try container.encode(serviceSID, forKey: .serviceSID)
            try container.encode(accountSID, forKey: .accountSID)
            try container.encode(to, forKey: .to)
            try container.encode(channel, forKey: .channel)
            try container.encode(status, forKey: .status)
            try container.encode(valid, forKey: .valid)
            try container.encode(lookup, forKey: .lookup)
            try container.encode(amount, forKey: .amount)
            try container.encode(payee, forKey: .payee)
            try container.encode(sendCodeAttempts, forKey: .sendCodeAttempts)
            try container.encode(dateCreated, forKey: .dateCreated)
            try container.encode(dateUpdated, forKey: .dateUpdated)
            try container.encode(sna, forKey: .sna)
            try container.encode(url, forKey: .url)
        }
    }

    /// The VerificationCheck resource. No `url` and no `send_code_attempts` (docs/vendors/twilio.md §2.5).
    struct VerificationCheck: Codable, Sendable, Equatable {
        var sid: String?
        var serviceSID: String?
        var accountSID: String?
        var to: String?
        var channel: String?
        var status: String?
        var valid: Bool?
        var amount: String?
        var payee: String?
        var dateCreated: String?
        var dateUpdated: String?
        /// `null` when the last channel was not `sna`; the emulator never uses `sna`.
        var snaAttemptsErrorCodes: [SNAAttemptError]?

        struct SNAAttemptError: Codable, Sendable, Equatable {
            var attemptSID: String?
            var code: Int?

            enum CodingKeys: String, CodingKey {
                case code
                case attemptSID = "attempt_sid"
            }
        }

        enum CodingKeys: String, CodingKey {
            case sid, to, channel, status, valid, amount, payee
            case serviceSID = "service_sid"
            case accountSID = "account_sid"
            case dateCreated = "date_created"
            case dateUpdated = "date_updated"
            case snaAttemptsErrorCodes = "sna_attempts_error_codes"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(sid, forKey: .sid)
            try container.encode(serviceSID, forKey: .serviceSID)
            try container.encode(accountSID, forKey: .accountSID)
            try container.encode(to, forKey: .to)
            try container.encode(channel, forKey: .channel)
            try container.encode(status, forKey: .status)
            try container.encode(valid, forKey: .valid)
            try container.encode(amount, forKey: .amount)
            try container.encode(payee, forKey: .payee)
            try container.encode(dateCreated, forKey: .dateCreated)
            try container.encode(dateUpdated, forKey: .dateUpdated)
            try container.encode(snaAttemptsErrorCodes, forKey: .snaAttemptsErrorCodes)
        }
    }

    /// What the provider needs from a Verification or VerificationCheck answer; it ignores the rest so
    /// that Twilio adding or changing an unrelated field cannot break it.
    struct ResourceSummary: Decodable, Sendable {
        var sid: String?
        var status: String?
        var channel: String?
        var dateCreated: String?

        enum CodingKeys: String, CodingKey {
            case sid, status, channel
            case dateCreated = "date_created"
        }
    }
}
