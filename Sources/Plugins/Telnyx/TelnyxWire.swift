import Foundation
import GatewayCore
import HTTPTypes

/// Telnyx Verify v2's JSON, as docs/vendors/telnyx.md §3, §7 and §8 describe it: answers under `data`, keys in
/// snake_case, which the kit's ``SnakeCaseJSON`` converts (so no type here lists its keys).
enum TelnyxWire {
    /// The Telnyx verification `type` of each gateway channel.
    static let channels: [Channel: String] = [
        .sms: "sms", .voice: "call", .flashcall: "flashcall", .whatsapp: "whatsapp",
    ]

    /// The body of `POST /verifications/{sms,call,flashcall,whatsapp}` (the plugin sends no `custom_code`).
    struct Trigger: Codable, Sendable {
        var phoneNumber: String
        var verifyProfileId: String
        var timeoutSecs: Int?
    }

    /// What the provider reads of a `Verification` ([SPEC], where no field is required; the emulator writes
    /// them all, ``TelnyxEmulatorState/Verification``).
    struct Verification: Codable, Sendable, Equatable {
        var id: String
        /// `pending`, `accepted`, `invalid`, `expired`, `error` (older values accepted as unknown).
        var status: String?
        var timeoutSecs: Int?
    }

    struct DataEnvelope<Value: Codable & Sendable>: Codable, Sendable {
        var data: Value
    }

    /// The body of a check: by id (`code`), or by number (`code` and `verify_profile_id`).
    struct VerifyCode: Codable, Sendable {
        var code: String
        var verifyProfileId: String?
    }

    /// A check's answer: `accepted` or `rejected`.
    struct CodeResult: Codable, Sendable {
        var phoneNumber: String
        var responseCode: String
    }

    /// `{"errors": [{code, title, detail, …}]}` (§8.1): the provider reads the first `code`, a string.
    struct Errors: Codable, Sendable {
        struct Item: Codable, Sendable { var code: String }
        var errors: [Item]
    }

    /// What the provider reads of a webhook (§7.3): `data.event_type`, and the verification's `id` and `status`
    /// in `data.payload`.
    struct Webhook: Codable, Sendable {
        struct Event: Codable, Sendable {
            var eventType: String
            var payload: Payload
        }

        struct Payload: Codable, Sendable {
            var id: String
            var status: String?
            var deliveryStatus: String?
        }

        var data: Event
    }

    /// The webhook signature headers (§7.4) and how far a timestamp may be from now.
    static let signatureHeader = HTTPField.Name("telnyx-signature-ed25519")!
    static let timestampHeader = HTTPField.Name("telnyx-timestamp")!
    static let timestampTolerance: TimeInterval = 300

    /// What a signature covers: `"{timestamp}|{body}"`, the body as received.
    static func signedBytes(timestamp: String, body: Data) -> Data { Data((timestamp + "|").utf8) + body }
}
