import Foundation
import Logging

/// What a plugin gets to build a provider.
public struct ProviderContext: Sendable {
    /// The id of the provider being built, from the configuration (`twilio-eu`).
    public var providerID: String
    /// Settings already checked against the plugin's ``SettingSpec``s, secrets resolved.
    public var settings: [String: String]
    /// How the provider reaches its vendor: the real network in production, an emulator in tests and the sandbox.
    public var transport: any HTTPTransport
    /// The clock the provider reads time from, so tests can move it.
    public var clock: any WallClock
    /// The logger for the provider's vendor calls.
    public var logger: Logger
    /// The deadline for one vendor call.
    public var requestTimeout: Duration
    /// The gateway's public base URL (configuration `public_base_url`), where vendors reach it.
    public var publicBaseURL: URL?
    /// Where ``VendorHTTPClient`` times the vendor's calls.
    public var metrics: GatewayMetrics
    /// How a messaging provider issues the gateway's own codes (the configuration's `own_codes`, `messages` and
    /// the provider's `senders`); `nil` for a provider of a plugin that does not send them.
    public var ownCodes: OwnCodeSettings?

    /// A context with the caller's clock and logger, and unless given a 10-second call deadline, no public base
    /// URL, no metrics and no own-code settings.
    public init(
        providerID: String, settings: [String: String], transport: any HTTPTransport,
        clock: any WallClock, logger: Logger,
        requestTimeout: Duration = .seconds(10), publicBaseURL: URL? = nil, metrics: GatewayMetrics = .disabled,
        ownCodes: OwnCodeSettings? = nil
    ) {
        self.ownCodes = ownCodes
        self.publicBaseURL = publicBaseURL
        self.metrics = metrics
        self.providerID = providerID
        self.settings = settings
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.requestTimeout = requestTimeout
    }
}

extension ProviderContext {
    /// Where this provider's vendor sends callbacks: `<public base URL>/callbacks/<provider id>`; `nil` when
    /// no public base URL is configured.
    public var callbackURL: URL? {
        publicBaseURL?.appending(path: "callbacks").appending(path: providerID)
    }
}
