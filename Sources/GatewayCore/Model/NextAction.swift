import Foundation

/// What the app must do before a verification can finish (docs/design.md §3.1).
///
/// A provider's start, check, resend, status or callback result can carry one; the record keeps it and the
/// API shows it as `next_action` while the verification is pending. Like Stripe's `next_action`, a client
/// switches on ``type`` and reads the member of the same name:
/// `{"type": "open_url", "open_url": {"url": "…", "cellular_only": true}}`.
public enum NextAction: Sendable, Equatable, Codable {
    /// Solve a challenge (a slider captcha) and post the answer to `POST /v1/verifications/{id}/challenge`.
    /// Nothing has been sent while a verification waits for it.
    case solveChallenge(Challenge)
    /// A missed call will arrive; the app intercepts it and checks the caller's number as the code.
    case interceptCall(CallInterception)
    /// The app opens a URL (over cellular data when ``URLOpening/cellularOnly``); the verification then
    /// completes without a code, by callback or refresh.
    case openURL(URLOpening)
    /// The user approves or denies a prompt on an enrolled device; the result arrives by callback or refresh.
    case awaitApproval(ApprovalPrompt)

    /// A challenge the app shows the user, whose answer it posts back.
    public struct Challenge: Sendable, Equatable {
        /// The plugin's name for the kind of challenge (`slider_captcha`).
        public var kind: String
        /// What the app needs to show it (images, sizes, a token the answer must echo).
        public var data: JSONValue
        /// When the challenge stops taking answers, if the vendor says.
        public var expiresAt: Date?

        /// A challenge of `kind` with the data to show it.
        public init(kind: String, data: JSONValue, expiresAt: Date? = nil) {
            self.kind = kind
            self.data = data
            self.expiresAt = expiresAt
        }
    }

    /// The missed call a flash call verification waits for.
    public struct CallInterception: Sendable, Equatable {
        /// The caller number the call will come from, with `*` for the digits that are the code
        /// (`+4670123****`), or a regular expression where the vendor gives one.
        public var callerPattern: String
        /// How long the app should wait for the call.
        public var timeoutSeconds: Int

        /// A call from a number matching `callerPattern`, expected within `timeoutSeconds`.
        public init(callerPattern: String, timeoutSeconds: Int) {
            self.callerPattern = callerPattern
            self.timeoutSeconds = timeoutSeconds
        }
    }

    /// The URL the app opens for silent network authentication.
    public struct URLOpening: Sendable, Equatable {
        /// The URL to open, as the vendor gave it.
        public var url: String
        /// Whether the URL must be opened over the mobile network (silent network authentication).
        public var cellularOnly: Bool

        /// An opening of `url`, over cellular data when `cellularOnly`.
        public init(url: String, cellularOnly: Bool) {
            self.url = url
            self.cellularOnly = cellularOnly
        }
    }

    /// The prompt an enrolled device shows for a push approval.
    public struct ApprovalPrompt: Sendable, Equatable {
        /// The text the device shows, when the provider knows it.
        public var message: String?
        /// When the prompt stops taking an answer, if the vendor says.
        public var expiresAt: Date?

        /// A prompt with an optional message and expiry.
        public init(message: String? = nil, expiresAt: Date? = nil) {
            self.message = message
            self.expiresAt = expiresAt
        }
    }

    /// The wire name of the action.
    public var type: String {
        switch self {
        case .solveChallenge: return "solve_challenge"
        case .interceptCall: return "intercept_call"
        case .openURL: return "open_url"
        case .awaitApproval: return "await_approval"
        }
    }

    /// The API form: `{"type": T, T: {…}}`, timestamps in ISO 8601.
    public var json: JSONValue {
        let payload: [String: JSONValue]
        switch self {
        case .solveChallenge(let challenge):
            payload = [
                "kind": .string(challenge.kind), "data": challenge.data,
                "expires_at": challenge.expiresAt.map { .string(Self.timestamp($0)) } ?? .null,
            ]
        case .interceptCall(let call):
            payload = [
                "caller_pattern": .string(call.callerPattern),
                "timeout_seconds": .number(Double(call.timeoutSeconds)),
            ]
        case .openURL(let opening):
            payload = ["url": .string(opening.url), "cellular_only": .bool(opening.cellularOnly)]
        case .awaitApproval(let prompt):
            payload = [
                "message": prompt.message.map(JSONValue.string) ?? .null,
                "expires_at": prompt.expiresAt.map { .string(Self.timestamp($0)) } ?? .null,
            ]
        }
        return .object(["type": .string(type), type: .object(payload)])
    }

    /// Reads the form ``json`` writes.
    public init?(json: JSONValue) {
        guard let type = json["type"]?.stringValue, let payload = json[type] else { return nil }
        func date(_ key: String) -> Date? { payload[key]?.stringValue.flatMap(Self.parseTimestamp) }
        switch type {
        case "solve_challenge":
            guard let kind = payload["kind"]?.stringValue else { return nil }
            self = .solveChallenge(Challenge(kind: kind, data: payload["data"] ?? .null, expiresAt: date("expires_at")))
        case "intercept_call":
            guard let pattern = payload["caller_pattern"]?.stringValue,
                let timeout = payload["timeout_seconds"]?.numberValue
            else { return nil }
            self = .interceptCall(CallInterception(callerPattern: pattern, timeoutSeconds: Int(timeout)))
        case "open_url":
            guard let url = payload["url"]?.stringValue else { return nil }
            self = .openURL(URLOpening(url: url, cellularOnly: payload["cellular_only"]?.boolValue ?? false))
        case "await_approval":
            self = .awaitApproval(
                ApprovalPrompt(message: payload["message"]?.stringValue, expiresAt: date("expires_at")))
        default:
            return nil
        }
    }

    /// Reads the API form (``init(json:)``); throws `DecodingError.dataCorrupted` for anything else.
    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        guard let action = NextAction(json: json) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a next action"))
        }
        self = action
    }

    /// Writes the API form, ``json``.
    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    static func timestamp(_ date: Date) -> String { VendorDate.iso8601(date) }

    static func parseTimestamp(_ text: String) -> Date? {
        try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }
}
