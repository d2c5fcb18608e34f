/// The end user's device, as the customer's backend saw it: passed to plugins whose vendor wants it
/// (IDaaS sends device headers on every call, fraud scoring uses the IP), never logged in full.
public struct ClientContext: Sendable, Equatable, Codable {
    /// The end user's IP address (not the customer backend's).
    public var ipAddress: String?
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

    public init(ipAddress: String? = nil, userAgent: String? = nil, deviceID: String? = nil, platform: Platform? = nil)
    {
        self.ipAddress = ipAddress
        self.userAgent = userAgent
        self.deviceID = deviceID
        self.platform = platform
    }

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

    public struct Prompt: Sendable, Equatable, Codable {
        public var message: String
        /// Label and value pairs shown under the message, in order.
        public var details: [Detail]
        /// Facts kept with the challenge and not shown to the user (the vendor's "hidden details").
        public var hiddenDetails: [String: String]

        public struct Detail: Sendable, Equatable, Codable {
            public var label: String
            public var value: String

            public init(label: String, value: String) {
                self.label = label
                self.value = value
            }
        }

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

    public init(factorID: String? = nil, prompt: Prompt? = nil) {
        self.factorID = factorID
        self.prompt = prompt
    }

    public var isEmpty: Bool { factorID == nil && prompt == nil }

    enum CodingKeys: String, CodingKey {
        case factorID = "factor_id"
        case prompt
    }
}
