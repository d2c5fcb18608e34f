/// One routing rule: which requests it matches and where it sends them.
///
/// Rules are tried in order and the first that matches wins. A match set that is nil matches
/// everything; countries are regions of the parsed number (`GB`, `US`), API keys are key names.
public struct Route: Sendable, Equatable {
    /// Where a matching request goes.
    public enum Target: Sendable, Equatable {
        /// Try these providers in order.
        case providers([String])
        /// Assign an arm of this experiment; its provider goes first.
        case experiment(String)
        /// Let a bandit choose among these providers, per context (``AdaptivePolicy``, docs/routing.md §3a).
        case adaptive(AdaptivePolicy)
    }

    /// The rule's name, recorded with each verification it routes.
    public var name: String
    /// The channels it matches; `nil`: every channel.
    public var channels: Set<Channel>?
    /// The regions it matches (ISO 3166); `nil`: every destination, those without a country included.
    public var countries: Set<String>?
    /// The API key names it matches; `nil`: every request, with or without a key.
    public var apiKeys: Set<String>?
    /// Where matching requests go.
    public var target: Target
    /// Tried after the target's providers, in order, when they fail before sending.
    public var fallbacks: [String]
    /// Fail over even after a timeout that may have sent the code (a second SMS is possible).
    public var failoverOnTimeout: Bool
    /// For a route of messaging providers: send the code again through another when a message is not
    /// delivered (``DeliveryPolicy``); `nil`: receipts are recorded and nothing more.
    public var delivery: DeliveryPolicy?
    /// The route's risk step (docs/network-signals.md); `nil`: the policy's, if any.
    public var risk: RiskPolicy?

    /// A rule that matches everything unless limited, with no fallbacks, failing over only before a send.
    public init(
        name: String, channels: Set<Channel>? = nil, countries: Set<String>? = nil, apiKeys: Set<String>? = nil,
        target: Target, fallbacks: [String] = [], failoverOnTimeout: Bool = false, delivery: DeliveryPolicy? = nil,
        risk: RiskPolicy? = nil
    ) {
        self.risk = risk
        self.delivery = delivery
        self.name = name
        self.channels = channels
        self.countries = countries
        self.apiKeys = apiKeys
        self.target = target
        self.fallbacks = fallbacks
        self.failoverOnTimeout = failoverOnTimeout
    }

    /// Whether a request over `channel` to `country` with the key `apiKey` matches every list the rule sets.
    public func matches(channel: Channel, country: String?, apiKey: String?) -> Bool {
        if let channels, !channels.contains(channel) { return false }
        if let countries {
            guard let country, countries.contains(country) else { return false }
        }
        if let apiKeys {
            guard let apiKey, apiKeys.contains(apiKey) else { return false }
        }
        return true
    }

    /// Whether every request this route matches is matched by `other` too.
    func isShadowed(by other: Route) -> Bool {
        func covers<T>(_ outer: Set<T>?, _ inner: Set<T>?) -> Bool {
            guard let outer else { return true }
            guard let inner else { return false }
            return inner.isSubset(of: outer)
        }
        return covers(other.channels, channels) && covers(other.countries, countries) && covers(other.apiKeys, apiKeys)
    }
}
