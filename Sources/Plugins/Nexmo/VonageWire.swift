import Foundation
import GatewayCore

/// Vonage Verify on the wire: v2 (`/v2/verify`, JSON, RFC 7807 errors) and the legacy v1
/// (`/verify/*/json`, form bodies, errors inside HTTP 200 with a `status` string). Field names are
/// Vonage's own (docs/vendors/vonage.md §1.2–1.4, §2.2–2.5; the v1 spec `vonage_verify_v1.yaml`).
enum VonageWire {
    // MARK: v2

    /// One channel of a v2 workflow (docs/vendors/vonage.md §2.3 "Workflow item schemas").
    struct WorkflowStep: Codable, Sendable, Equatable {
        var channel: String
        /// E.164 without `+` for phone channels, an address for email.
        var to: String
        /// sms: the sender; whatsapp: the WhatsApp Business number (required there).
        var from: String?
        /// silent_auth: where the last redirect of `check_url` goes, with `#request_id=…&code=…` after it.
        var redirectURL: String?

        enum CodingKeys: String, CodingKey {
            case channel, to, from
            case redirectURL = "redirect_url"
        }
    }

    /// `POST /v2/verify`.
    struct StartRequest: Codable, Sendable, Equatable {
        var brand: String
        var workflow: [WorkflowStep]
        var locale: String?
        var channelTimeout: Int?
        var codeLength: Int?
        var clientRef: String?

        enum CodingKeys: String, CodingKey {
            case brand, workflow, locale
            case channelTimeout = "channel_timeout"
            case codeLength = "code_length"
            case clientRef = "client_ref"
        }
    }

    /// 202 to a start: `check_url` only for silent authentication.
    struct StartResponse: Codable, Sendable, Equatable {
        var requestID: String
        var checkURL: String?

        enum CodingKeys: String, CodingKey {
            case requestID = "request_id"
            case checkURL = "check_url"
        }
    }

    /// `POST /v2/verify/{request_id}`.
    struct CheckRequest: Codable, Sendable, Equatable {
        var code: String
    }

    /// 200 to a right code: `{request_id, status: "completed"}`.
    struct CheckResponse: Codable, Sendable, Equatable {
        var requestID: String
        var status: String

        enum CodingKeys: String, CodingKey {
            case requestID = "request_id"
            case status
        }
    }

    /// RFC 7807 problem details, as every v2 error (docs/vendors/vonage.md §2.4).
    struct Problem: Codable, Sendable, Equatable {
        struct InvalidParameter: Codable, Sendable, Equatable {
            var name: String
            var reason: String
        }

        var type: String?
        var title: String?
        var detail: String?
        var instance: String?
        var invalidParameters: [InvalidParameter]?
        /// The verification in flight, on the 409 of a concurrent start.
        var requestID: String?

        enum CodingKeys: String, CodingKey {
            case type, title, detail, instance
            case invalidParameters = "invalid_parameters"
            case requestID = "request_id"
        }

        /// The error id after `#` in `type` (`invalid-code`, `concurrent`), lower-cased: the only part of
        /// the URL that is stable across Vonage's hosts and paths.
        var fragment: String? {
            guard let type, let hash = type.lastIndex(of: "#") else { return nil }
            let id = type[type.index(after: hash)...].lowercased()
            return id.isEmpty ? nil : id
        }

        /// Whether `invalid_parameters` names the destination (`to`, `workflow[0].to`).
        var namesDestination: Bool {
            (invalidParameters ?? []).contains { $0.name == "to" || $0.name.hasSuffix(".to") }
        }
    }

    /// A v2 status callback: an `event` for one channel, or the `summary` when the verification ends
    /// (docs/vendors/vonage.md §2.5). Silent authentication adds `action` with the `check_url`.
    struct Callback: Codable, Sendable, Equatable {
        struct WorkflowEntry: Codable, Sendable, Equatable {
            var channel: String
            var initiatedAt: String?
            var status: String

            enum CodingKeys: String, CodingKey {
                case channel, status
                case initiatedAt = "initiated_at"
            }
        }

        struct Action: Codable, Sendable, Equatable {
            var type: String
            var checkURL: String?

            enum CodingKeys: String, CodingKey {
                case type
                case checkURL = "check_url"
            }
        }

        var requestID: String
        var type: String
        var status: String
        var channel: String?
        var triggeredAt: String?
        var submittedAt: String?
        var finalizedAt: String?
        var channelTimeout: Int?
        var workflow: [WorkflowEntry]?
        var action: Action?
        var clientRef: String?

        enum CodingKeys: String, CodingKey {
            case type, status, channel, workflow, action
            case requestID = "request_id"
            case triggeredAt = "triggered_at"
            case submittedAt = "submitted_at"
            case finalizedAt = "finalized_at"
            case channelTimeout = "channel_timeout"
            case clientRef = "client_ref"
        }
    }

    /// The v2 channel name of each gateway channel Vonage offers (docs/vendors/vonage.md §2.3; Python SDK
    /// `ChannelType`).
    static let v2Channels: [Channel: String] = [
        .sms: "sms", .voice: "voice", .whatsapp: "whatsapp", .email: "email", .silentAuth: "silent_auth",
    ]

    static func v2Channel(_ channel: Channel) -> String? { v2Channels[channel] }

    static func channel(v2 name: String) -> Channel? { v2Channels.first { $0.value == name }?.key }

    /// Vonage's limit on workflow length ([SPEC-V2-CUR] `workflow` 1–3 items).
    static let maxWorkflowLength = 3
    /// Vonage's own limit on wrong codes per request (v1 status 17, v2 410).
    static let maxChecks = 3
    /// v2 `code_length` 4–10; v1 4 or 6.
    static let v2CodeLengths = 4...10
    static let v1CodeLengths: Set<Int> = [4, 6]
    /// v2 `channel_timeout` bounds and default (seconds).
    static let channelTimeouts = 15...900
    static let defaultChannelTimeout = 180
    /// Cancel is refused this soon after the start (v1 spec `cmd`; v2 spec cancel note).
    static let cancelWindow: TimeInterval = 30

    // MARK: v1

    /// Every v1 answer, whatever the endpoint: `status` is a string (`"0"` success, a number, or a search
    /// status word), the rest depends on the endpoint (docs/vendors/vonage.md §1.4).
    struct V1Response: Codable, Sendable, Equatable {
        struct Event: Codable, Sendable, Equatable {
            var type: String
            var id: String
        }

        struct Check: Codable, Sendable, Equatable {
            var dateReceived: String?
            var code: String?
            var status: String

            enum CodingKeys: String, CodingKey {
                case code, status
                case dateReceived = "date_received"
            }
        }

        var status: String
        var requestID: String?
        var errorText: String?
        var eventID: String?
        var network: String?
        var command: String?
        var price: String?
        var currency: String?
        var number: String?
        var accountID: String?
        var senderID: String?
        var dateSubmitted: String?
        var dateFinalized: String?
        var firstEventDate: String?
        var lastEventDate: String?
        var checks: [Check]?
        var events: [Event]?

        enum CodingKeys: String, CodingKey {
            case status, network, command, price, currency, number, checks, events
            case requestID = "request_id"
            case errorText = "error_text"
            case eventID = "event_id"
            case accountID = "account_id"
            case senderID = "sender_id"
            case dateSubmitted = "date_submitted"
            case dateFinalized = "date_finalized"
            case firstEventDate = "first_event_date"
            case lastEventDate = "last_event_date"
        }

        /// The numeric status, when `status` is one (`"16"` → 16); search words give `nil`.
        var code: Int? { Int(status) }
    }

    /// The v1 workflows (docs/vendors/vonage.md §1.3, [WF]): the channel of each event, in order.
    static let v1Workflows: [Int: [Channel]] = [
        1: [.sms, .voice, .voice], 2: [.sms, .sms, .voice], 3: [.voice, .voice], 4: [.sms, .sms],
        5: [.sms, .voice], 6: [.sms], 7: [.voice],
    ]

    /// The v1 workflow for a channel and its fallbacks: the one whose distinct channels, in order, are
    /// exactly these (sms → 6, voice → 7, sms then voice → 5); `nil` when no workflow has that shape.
    static func v1WorkflowID(channel: Channel, fallbacks: [Channel]) -> Int? {
        switch [channel] + fallbacks {
        case [.sms]: return 6
        case [.voice]: return 7
        case [.sms, .voice]: return 5
        default: return nil
        }
    }

    /// v1 event types: `sms` and `tts` (text to speech, the voice channel).
    static func channel(v1Event type: String) -> Channel? {
        ["sms": .sms, "tts": .voice, "voice": .voice][type.lowercased()]
    }

    /// The v1 `lg` values ([SPEC-V1-2021] `lg` enum).
    static let v1Languages: [String] = [
        "ar-xa", "cs-cz", "cy-cy", "cy-gb", "da-dk", "de-de", "el-gr", "en-au", "en-gb", "en-in", "en-us", "es-es",
        "es-mx", "es-us", "fi-fi", "fil-ph", "fr-ca", "fr-fr", "hi-in", "hu-hu", "id-id", "is-is", "it-it", "ja-jp",
        "ko-kr", "nb-no", "nl-nl", "pl-pl", "pt-br", "pt-pt", "ro-ro", "ru-ru", "sv-se", "th-th", "tr-tr", "vi-vn",
        "yue-cn", "zh-cn", "zh-tw",
    ]

    /// The first of `locales` Vonage speaks, in its lower-case `xx-yy` form (`de` → `de-de`); `nil`: Vonage
    /// chooses from the number.
    static func locale(from locales: [String]) -> String? { LanguageTags.firstMatch(locales, in: v1Languages) }

    /// `YYYY-MM-DD HH:MM:SS` in UTC, as v1 dates are written.
    static func v1Date(_ date: Date) -> String { VendorDate.utc(date, separator: " ") }

    /// ISO 8601 with seconds, as v2 callbacks write times.
    static func v2Date(_ date: Date) -> String { VendorDate.iso8601(date) }
}
