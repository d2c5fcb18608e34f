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
