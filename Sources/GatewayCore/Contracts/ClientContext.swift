/// The end user's device, as the customer's backend saw it: passed to plugins whose vendor wants it
/// (IDaaS sends device headers on every call, fraud scoring uses the IP), never logged in full.
public struct ClientContext: Sendable, Equatable, Codable {
    /// The end user's IP address (not the customer backend's).
    public var ipAddress: String?
    /// The user agent of the end user's browser or app.
    public var userAgent: String?
    /// A stable id of the app installation or device.
    public var deviceID: String?
    /// The kind of app the user is in: vendors that attest apps want it (Firebase's `clientType` for
    /// reCAPTCHA Enterprise differs between web, iOS and Android).
    public var platform: Platform?

    /// The app platforms a client context can name.
    public enum Platform: String, Sendable, Equatable, Codable, CaseIterable {
        case ios, android, web
    }

    /// A context with what the customer's backend passed; every field may be absent.
    public init(ipAddress: String? = nil, userAgent: String? = nil, deviceID: String? = nil, platform: Platform? = nil)
    {
        self.ipAddress = ipAddress
        self.userAgent = userAgent
        self.deviceID = deviceID
        self.platform = platform
    }

    /// Whether nothing at all is known of the device.
    public var isEmpty: Bool { ipAddress == nil && userAgent == nil && deviceID == nil && platform == nil }

    /// For logs: the IP's first part only, no user agent, no device id.
    public var masked: String {
        guard let ip = ipAddress else { return "-" }
        if let dot = ip.firstIndex(of: ".") { return String(ip[..<dot]) + ".*" }
        if let colon = ip.firstIndex(of: ":") { return String(ip[..<colon]) + ":*" }
        return "*"
    }

    enum CodingKeys: String, CodingKey {
        case ipAddress = "ip"
        case userAgent = "user_agent"
        case deviceID = "device_id"
        case platform
    }
}

/// Options for channels that need more than a destination: which enrolled device factor a push goes to,
/// and what its prompt says. Plugins read the ones their vendor takes.
public struct ChannelOptions: Sendable, Equatable, Codable {
    /// The push factor to challenge (the identity's only factor when absent).
    public var factorID: String?
    /// The prompt a push shows.
    public var prompt: Prompt?

    /// The text of a push challenge, as the device shows it.
    public struct Prompt: Sendable, Equatable, Codable {
        /// The main text of the prompt.
        public var message: String
        /// Label and value pairs shown under the message, in order.
        public var details: [Detail]
        /// Facts kept with the challenge and not shown to the user (the vendor's "hidden details").
        public var hiddenDetails: [String: String]

        /// One labelled line shown under a prompt's message.
        public struct Detail: Sendable, Equatable, Codable {
            /// The line's label (`Amount`).
            public var label: String
            /// The line's value (`€12.00`).
            public var value: String

            /// A line showing `label` and `value`.
            public init(label: String, value: String) {
                self.label = label
                self.value = value
            }
        }

        /// A prompt with `message`, and optionally the lines shown under it and the facts kept out of sight.
        public init(message: String, details: [Detail] = [], hiddenDetails: [String: String] = [:]) {
            self.message = message
            self.details = details
            self.hiddenDetails = hiddenDetails
        }

        enum CodingKeys: String, CodingKey {
            case message, details
            case hiddenDetails = "hidden_details"
        }
    }

    /// Options naming a push factor and a prompt; both absent by default.
    public init(factorID: String? = nil, prompt: Prompt? = nil) {
        self.factorID = factorID
        self.prompt = prompt
    }

    /// Whether no option is set.
    public var isEmpty: Bool { factorID == nil && prompt == nil }

    enum CodingKeys: String, CodingKey {
        case factorID = "factor_id"
        case prompt
    }
}
