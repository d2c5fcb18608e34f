import Foundation

/// What a provider can do, declared so the router can decide before calling it.
public struct ProviderCapabilities: Sendable, Equatable {
    public var channels: Set<Channel>
    /// ISO 3166 regions the provider will not serve.
    public var excludedRegions: Set<String>
    /// Proof kinds the provider accepts; non-empty with ``requiresAppVerification`` means a start
    /// without one of them is refused with `app_verification_required` before the vendor is called.
    public var appVerificationKinds: Set<AppVerificationProof.Kind>
    public var requiresAppVerification: Bool
    /// Whether a successful check returns vendor tokens (Firebase `idToken`, IDaaS `id_token`).
    public var issuesTokens: Bool
    /// Whether a resend delivers the same code (Twilio) or a new one (Sinch, Firebase).
    public var resendKeepsCode: Bool
    public var supportsResend: Bool
    public var supportsCancel: Bool
    public var supportsStatus: Bool
    /// Whether a resend may switch channel (Twilio, Vonage's next step).
    public var resendCanChangeChannel: Bool

    public init(
        channels: Set<Channel>,
        excludedRegions: Set<String> = [],
        appVerificationKinds: Set<AppVerificationProof.Kind> = [],
        requiresAppVerification: Bool = false,
        issuesTokens: Bool = false,
        resendKeepsCode: Bool = false,
        supportsResend: Bool = true,
        supportsCancel: Bool = true,
        supportsStatus: Bool = true,
        resendCanChangeChannel: Bool = false
    ) {
        self.channels = channels
        self.excludedRegions = excludedRegions
        self.appVerificationKinds = appVerificationKinds
        self.requiresAppVerification = requiresAppVerification
        self.issuesTokens = issuesTokens
        self.resendKeepsCode = resendKeepsCode
        self.supportsResend = supportsResend
        self.supportsCancel = supportsCancel
        self.supportsStatus = supportsStatus
        self.resendCanChangeChannel = resendCanChangeChannel
    }
}

/// What the vendor said when it accepted a start (or a resend that started again).
public struct ProviderStartResult: Sendable, Equatable {
    /// The vendor's id for the verification.
    public var reference: String?
    /// Opaque vendor state to keep with the verification (never shown to API clients).
    public var state: [String: String]
    public var status: VerificationStatus
    /// When the vendor says the code stops working, if it says.
    public var expiresAt: Date?
    /// The language the vendor actually used for the content (Sinch reports it back).
    public var contentLanguage: String?
    /// The channel actually used, if the vendor chose (Twilio `auto`, Vonage workflows).
    public var channel: Channel?
    /// Whether this start was a test number that sent nothing.
    public var sentNothing: Bool

    public init(
        reference: String?,
        state: [String: String] = [:],
        status: VerificationStatus = .pending,
        expiresAt: Date? = nil,
        contentLanguage: String? = nil,
        channel: Channel? = nil,
        sentNothing: Bool = false
    ) {
        self.reference = reference
        self.state = state
        self.status = status
        self.expiresAt = expiresAt
        self.contentLanguage = contentLanguage
        self.channel = channel
        self.sentNothing = sentNothing
    }
}

/// The outcome of a check at the vendor.
public struct ProviderCheckResult: Sendable, Equatable {
    /// `approved`, `pending` (wrong code, or push not answered yet), or a final failure state.
    public var status: VerificationStatus
    /// Vendor tokens issued on success (Firebase `idToken`, IDaaS `session_token`/`id_token`).
    public var tokens: [String: String]
    /// Replacement vendor state, when the vendor rotates it.
    public var state: [String: String]?
    /// The vendor's own count of checks left, if it reports one.
    public var attemptsRemaining: Int?

    public init(
        status: VerificationStatus, tokens: [String: String] = [:], state: [String: String]? = nil,
        attemptsRemaining: Int? = nil
    ) {
        self.status = status
        self.tokens = tokens
        self.state = state
        self.attemptsRemaining = attemptsRemaining
    }
}

/// The stored view of a verification a provider is asked about.
public struct ProviderVerification: Sendable {
    public var destination: Destination
    public var channel: Channel
    public var reference: String?
    public var state: [String: String]
    public var locales: [String]

    public init(
        destination: Destination, channel: Channel, reference: String?, state: [String: String],
        locales: [String] = []
    ) {
        self.destination = destination
        self.channel = channel
        self.reference = reference
        self.state = state
        self.locales = locales
    }

    public init(_ record: VerificationRecord) {
        self.init(
            destination: record.destination, channel: record.channel, reference: record.providerReference,
            state: record.providerState, locales: record.locales)
    }
}

/// One configured vendor account that can send and check codes.
///
/// Every method throws only ``GatewayError``; a plugin maps its vendor's errors through one mapping
/// table. Optional operations default to `unsupported_channel`-style errors, and the router reads
/// ``capabilities`` first so it never calls them when they are missing.
public protocol VerificationProvider: Sendable {
    /// The provider instance id, as used in routes and API responses (`twilio`, `twilio-eu`).
    var id: String { get }
    var capabilities: ProviderCapabilities { get }

    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult

    /// Whether this particular start needs an app-verification proof. Defaults to
    /// ``ProviderCapabilities/requiresAppVerification``; a vendor with fixed test numbers (Firebase)
    /// answers `false` for them, since they never reach the vendor.
    func requiresAppVerification(for request: StartVerification) -> Bool

    func check(_ verification: ProviderVerification, code: String?) async throws(GatewayError) -> ProviderCheckResult

    /// Sends again. `channel` is set when the caller asks for another channel. A vendor that resends by
    /// starting over returns a new reference and state.
    func resend(_ verification: ProviderVerification, channel: Channel?) async throws(GatewayError)
        -> ProviderStartResult

    /// Sends again with a fresh app-verification proof, for vendors that want one per send (Firebase
    /// sends a new code only with a new proof). The default ignores the proof.
    func resend(_ verification: ProviderVerification, channel: Channel?, appVerification: AppVerificationProof?)
        async throws(GatewayError) -> ProviderStartResult

    func cancel(_ verification: ProviderVerification) async throws(GatewayError)

    /// The vendor's current view of the verification.
    func status(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationStatus

    /// Vendor-only operations this provider offers through `POST /v1/providers/{id}/actions/{name}`
    /// (IDaaS `refresh_id_token`, Twilio `create_access_token`).
    var actions: [ProviderAction] { get }

    /// Runs one of ``actions``. Input and output are flat string maps so the core never needs to
    /// know a vendor's types.
    func perform(action: String, input: [String: String]) async throws(GatewayError) -> [String: String]
}

/// A vendor-specific operation a provider exposes through the API.
public struct ProviderAction: Sendable, Equatable, Codable {
    public var name: String
    public var summary: String
    /// Input keys the action requires.
    public var requiredInputs: [String]

    public init(name: String, summary: String, requiredInputs: [String] = []) {
        self.name = name
        self.summary = summary
        self.requiredInputs = requiredInputs
    }
}

extension VerificationProvider {
    public var actions: [ProviderAction] { [] }

    public func requiresAppVerification(for request: StartVerification) -> Bool {
        capabilities.requiresAppVerification
    }

    public func perform(action: String, input: [String: String]) async throws(GatewayError) -> [String: String] {
        throw GatewayError(.notFound, "Provider \(id) has no action named \(action).")
    }

    public func resend(_ verification: ProviderVerification, channel: Channel?) async throws(GatewayError)
        -> ProviderStartResult
    {
        throw GatewayError(.invalidRequest, "Provider \(id) cannot resend; start a new verification.")
    }

    public func resend(
        _ verification: ProviderVerification, channel: Channel?, appVerification: AppVerificationProof?
    ) async throws(GatewayError) -> ProviderStartResult {
        try await resend(verification, channel: channel)
    }

    public func cancel(_ verification: ProviderVerification) async throws(GatewayError) {
        throw GatewayError(.invalidRequest, "Provider \(id) cannot cancel a verification.")
    }

    public func status(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationStatus {
        throw GatewayError(.invalidRequest, "Provider \(id) cannot report a verification's status.")
    }
}
