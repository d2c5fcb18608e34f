import Foundation

/// What a provider can do, declared so the router can decide before calling it.
public struct ProviderCapabilities: Sendable, Equatable {
    /// The channels the provider sends over.
    public var channels: Set<Channel>
    /// ISO 3166 regions the provider will not serve.
    public var excludedRegions: Set<String>
    /// ISO 3166 regions the provider serves, when it serves only some (`nil`: every region not excluded).
    public var servedRegions: Set<String>?
    /// Proof kinds the provider accepts; non-empty with ``requiresAppVerification`` means a start
    /// without one of them is refused with `app_verification_required` before the vendor is called.
    public var appVerificationKinds: Set<AppVerificationProof.Kind>
    /// Whether the provider needs an app-verification proof for a start (see ``appVerificationKinds``).
    public var requiresAppVerification: Bool
    /// The multi-factor steps the provider runs (``StartVerification/multiFactor``); routing passes over a
    /// provider that lacks the request's step (`multi_factor_not_supported`).
    public var multiFactorKinds: Set<MultiFactor.Kind>
    /// Whether a successful check returns vendor tokens (Firebase `idToken`, IDaaS `id_token`).
    public var issuesTokens: Bool
    /// Whether a resend delivers the same code (Twilio) or a new one (Sinch, Firebase).
    public var resendKeepsCode: Bool
    /// Optional operations the provider's type implements but this configuration does not offer (Vonage Verify
    /// v2 has no status call; a Telnyx provider without `public_key` takes no callbacks). What a provider offers is
    /// ``VerificationProvider/operations``: what it implements less this. It can only take away.
    public var withheld: ProviderOperations
    /// Whether a resend may switch channel (Twilio, Vonage's next step).
    public var resendCanChangeChannel: Bool
    /// Channels whose verifications finish without a code (push approval, silent network
    /// authentication): a check is refused for them, and the result arrives by callback or refresh.
    public var completesWithoutCode: Set<Channel>
    /// Whether the vendor runs the request's fallback channels itself, from one start (Vonage workflows).
    public var nativeWorkflows: Bool
    /// The vendor's own limit on checks per verification (Vonage v1 allows 3); the gateway's limit for a
    /// verification is the lower of this and its policy.
    public var vendorMaxAttempts: Int?
    /// Whether a start may bring the code to send (``StartVerification/customCode``): only a provider that
    /// sends the gateway's own codes can; routing passes the others over for such a start.
    public var takesCustomCode: Bool
    /// For a provider priced per message segment (the gateway's own codes): the segments a start's message
    /// takes, in its default language with the longest code of its format. Adaptive routing multiplies the
    /// provider's price by it; `nil` for a vendor priced per verification.
    public var segmentsPerMessage: Int?

    /// Capabilities with `channels`, and everything else off or empty unless given. Which optional operations
    /// are offered is not declared here: it follows from the protocols the provider adopts, less `withheld`.
    public init(
        channels: Set<Channel>,
        excludedRegions: Set<String> = [],
        servedRegions: Set<String>? = nil,
        appVerificationKinds: Set<AppVerificationProof.Kind> = [],
        requiresAppVerification: Bool = false,
        multiFactorKinds: Set<MultiFactor.Kind> = [],
        issuesTokens: Bool = false,
        resendKeepsCode: Bool = false,
        resendCanChangeChannel: Bool = false,
        completesWithoutCode: Set<Channel> = [],
        nativeWorkflows: Bool = false,
        vendorMaxAttempts: Int? = nil,
        takesCustomCode: Bool = false,
        segmentsPerMessage: Int? = nil,
        withheld: ProviderOperations = []
    ) {
        self.takesCustomCode = takesCustomCode
        self.segmentsPerMessage = segmentsPerMessage
        self.channels = channels
        self.excludedRegions = excludedRegions
        self.servedRegions = servedRegions
        self.appVerificationKinds = appVerificationKinds
        self.requiresAppVerification = requiresAppVerification
        self.multiFactorKinds = multiFactorKinds
        self.issuesTokens = issuesTokens
        self.resendKeepsCode = resendKeepsCode
        self.resendCanChangeChannel = resendCanChangeChannel
        self.completesWithoutCode = completesWithoutCode
        self.nativeWorkflows = nativeWorkflows
        self.vendorMaxAttempts = vendorMaxAttempts
        self.withheld = withheld
    }

    /// Whether the provider serves destinations in `region` (ISO 3166).
    public func serves(region: String) -> Bool {
        !excludedRegions.contains(region) && servedRegions.map { $0.contains(region) } != false
    }
}
