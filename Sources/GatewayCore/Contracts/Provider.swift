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
    /// Whether the provider can send a verification again; when not, a resend is refused before the vendor is
    /// called.
    public var supportsResend: Bool
    /// Whether the vendor can cancel a verification; when not, a cancel only marks it canceled in the gateway.
    public var supportsCancel: Bool
    /// Whether the vendor reports a verification's status; when not, a refresh answers from the store.
    public var supportsStatus: Bool
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
    /// Whether the plugin verifies and applies the vendor's callbacks at `/callbacks/{provider id}`.
    public var acceptsCallbacks: Bool

    /// Capabilities with `channels` and the most common answers for the rest: resend, cancel and status
    /// supported, everything else off or empty.
    public init(
        channels: Set<Channel>,
        excludedRegions: Set<String> = [],
        servedRegions: Set<String>? = nil,
        appVerificationKinds: Set<AppVerificationProof.Kind> = [],
        requiresAppVerification: Bool = false,
        multiFactorKinds: Set<MultiFactor.Kind> = [],
        issuesTokens: Bool = false,
        resendKeepsCode: Bool = false,
        supportsResend: Bool = true,
        supportsCancel: Bool = true,
        supportsStatus: Bool = true,
        resendCanChangeChannel: Bool = false,
        completesWithoutCode: Set<Channel> = [],
        nativeWorkflows: Bool = false,
        vendorMaxAttempts: Int? = nil,
        acceptsCallbacks: Bool = false
    ) {
        self.channels = channels
        self.excludedRegions = excludedRegions
        self.servedRegions = servedRegions
        self.appVerificationKinds = appVerificationKinds
        self.requiresAppVerification = requiresAppVerification
        self.multiFactorKinds = multiFactorKinds
        self.issuesTokens = issuesTokens
        self.resendKeepsCode = resendKeepsCode
        self.supportsResend = supportsResend
        self.supportsCancel = supportsCancel
        self.supportsStatus = supportsStatus
        self.resendCanChangeChannel = resendCanChangeChannel
        self.completesWithoutCode = completesWithoutCode
        self.nativeWorkflows = nativeWorkflows
        self.vendorMaxAttempts = vendorMaxAttempts
        self.acceptsCallbacks = acceptsCallbacks
    }

    /// Whether the provider serves destinations in `region` (ISO 3166).
    public func serves(region: String) -> Bool {
        !excludedRegions.contains(region) && servedRegions.map { $0.contains(region) } != false
    }
}

/// What the vendor said when it accepted a start (or a resend, or a solved challenge).
public struct ProviderStartResult: Sendable, Equatable {
    /// The vendor's id for the verification.
    public var reference: String?
    /// Opaque vendor state to keep with the verification (never shown to API clients).
    public var state: ProviderState
    /// The verification's status after the start: `pending` unless the vendor settled it at once.
    public var status: VerificationStatus
    /// When the vendor says the code stops working, if it says.
    public var expiresAt: Date?
    /// The language the vendor actually used for the content (Sinch reports it back).
    public var contentLanguage: String?
    /// The channel actually used, if the vendor chose (Twilio `auto`, Vonage workflows).
    public var channel: Channel?
    /// Whether nothing was sent (a test number, a reentrant resend, a fresh challenge).
    public var sentNothing: Bool
    /// What the app must do next (`nil`: enter the code it receives).
    public var nextAction: NextAction?

    /// A result with the vendor's `reference`; the rest defaults to a pending verification with no news.
    public init(
        reference: String?,
        state: ProviderState = .empty,
        status: VerificationStatus = .pending,
        expiresAt: Date? = nil,
        contentLanguage: String? = nil,
        channel: Channel? = nil,
        sentNothing: Bool = false,
        nextAction: NextAction? = nil
    ) {
        self.reference = reference
        self.state = state
        self.status = status
        self.expiresAt = expiresAt
        self.contentLanguage = contentLanguage
        self.channel = channel
        self.sentNothing = sentNothing
        self.nextAction = nextAction
    }
}

/// A challenge the app must solve before anything is sent (IDaaS's slider captcha).
public struct ProviderChallenge: Sendable, Equatable {
    /// What the app is shown to solve.
    public var challenge: NextAction.Challenge
    /// State to keep until the answer arrives (the captcha's token).
    public var state: ProviderState
    /// The vendor's id, when it gives one before anything is sent.
    public var reference: String?

    /// A challenge with the state to keep until its answer arrives.
    public init(challenge: NextAction.Challenge, state: ProviderState = .empty, reference: String? = nil) {
        self.challenge = challenge
        self.state = state
        self.reference = reference
    }
}

/// The outcome of a check at the vendor.
public struct ProviderCheckResult: Sendable, Equatable {
    /// `approved`, `pending` (wrong code), or a final state (`denied`, `expired`…).
    public var status: VerificationStatus
    /// Vendor tokens issued on success (Firebase `idToken`, IDaaS `session_token`, its `expire` number).
    public var tokens: [String: JSONValue]
    /// Replacement vendor state, when the vendor rotates it.
    public var state: ProviderState?
    /// The vendor's own count of checks left, if it reports one.
    public var attemptsRemaining: Int?
    /// A step the app must take before the verification can finish (IDaaS `MFA_AUTH`).
    public var nextAction: NextAction?

    /// A result with `status`; the rest defaults to no tokens, no new state and no next action.
    public init(
        status: VerificationStatus, tokens: [String: JSONValue] = [:], state: ProviderState? = nil,
        attemptsRemaining: Int? = nil, nextAction: NextAction? = nil
    ) {
        self.status = status
        self.tokens = tokens
        self.state = state
        self.attemptsRemaining = attemptsRemaining
        self.nextAction = nextAction
    }
}

/// What changed at the vendor, as a status refresh or a callback reports it. Every field is optional:
/// `nil` means "no news". The engine never moves a final verification (an approval stays approved).
public struct VerificationChange: Sendable, Equatable {
    /// What to do with the verification's ``VerificationRecord/nextAction``.
    public enum NextActionChange: Sendable, Equatable {
        case keep
        case clear
        case set(NextAction)
    }

    /// The new status; a final status also clears the next action.
    public var status: VerificationStatus?
    /// The channel the vendor moved to (Vonage's workflow from SMS to voice).
    public var channel: Channel?
    /// Whether the next action stays, is cleared or is replaced.
    public var nextAction: NextActionChange
    /// Vendor tokens issued with an approval; returned once with the gateway's own token.
    public var tokens: [String: JSONValue]
    /// Replacement vendor state.
    public var state: ProviderState?
    /// The language the vendor used for the content.
    public var contentLanguage: String?
    /// The new expiry.
    public var expiresAt: Date?
    /// The vendor's reason for the status, as a bounded code (`DENIED`, `Fraud`), for the timeline.
    public var reason: String?

    /// A change that says nothing unless told: every field `nil` or empty, the next action kept.
    public init(
        status: VerificationStatus? = nil, channel: Channel? = nil, nextAction: NextActionChange = .keep,
        tokens: [String: JSONValue] = [:], state: ProviderState? = nil, contentLanguage: String? = nil,
        expiresAt: Date? = nil, reason: String? = nil
    ) {
        self.status = status
        self.channel = channel
        self.nextAction = nextAction
        self.tokens = tokens
        self.state = state
        self.contentLanguage = contentLanguage
        self.expiresAt = expiresAt
        self.reason = reason
    }
}

/// The stored view of a verification a provider is asked about, with the current request's client context.
public struct ProviderVerification: Sendable {
    /// The gateway's id (`vf_…`), which plugins send as the vendor's reference where it takes one.
    public var id: String
    /// The stored status.
    public var status: VerificationStatus
    /// Where the verification was sent.
    public var destination: Destination
    /// The channel of the latest send.
    public var channel: Channel
    /// The fallback channels not used yet.
    public var fallbackChannels: [Channel]
    /// The vendor's id for the verification (``VerificationRecord/providerReference``), if it gave one.
    public var reference: String?
    /// The vendor state the plugin stored with the verification.
    public var state: ProviderState
    /// The preferred content languages of the start, most preferred first.
    public var locales: [String]
    /// The end user's device for the request being served (empty for callbacks).
    public var clientContext: ClientContext

    /// A view from its parts; tests and callbacks build one without a stored record.
    public init(
        id: String = "", status: VerificationStatus = .pending, destination: Destination, channel: Channel,
        fallbackChannels: [Channel] = [], reference: String?, state: ProviderState, locales: [String] = [],
        clientContext: ClientContext = ClientContext()
    ) {
        self.id = id
        self.status = status
        self.destination = destination
        self.channel = channel
        self.fallbackChannels = fallbackChannels
        self.reference = reference
        self.state = state
        self.locales = locales
        self.clientContext = clientContext
    }

    /// The view of a stored record, with the context of the request being served.
    public init(_ record: VerificationRecord, clientContext: ClientContext = ClientContext()) {
        self.init(
            id: record.id, status: record.status, destination: record.destination, channel: record.channel,
            fallbackChannels: record.fallbackChannels, reference: record.providerReference,
            state: record.providerState, locales: record.locales, clientContext: clientContext)
    }
}

/// One configured vendor account that can send and check codes.
///
/// Every method throws only ``GatewayError``; a plugin maps its vendor's errors through one mapping
/// table. Optional operations have defaults that refuse, and the engine reads ``capabilities`` first so
/// it never calls them when they are missing.
public protocol VerificationProvider: Sendable {
    /// The provider instance id, as used in routes and API responses (`twilio`, `twilio-eu`).
    var id: String { get }
    /// What the provider supports; the engine and the router read it before calling any operation.
    var capabilities: ProviderCapabilities { get }

    /// Runs before ``start(_:)``: a challenge the app must solve before anything is sent, or `nil` to start
    /// at once. A verification waiting for its challenge has sent nothing and cost nothing. The default
    /// returns `nil`.
    func prepare(_ request: StartVerification) async throws(GatewayError) -> ProviderChallenge?

    /// Sends the first code (or starts the vendor's flow) for a request routing chose this provider for.
    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult

    /// The app's answer to the challenge ``prepare(_:)`` returned. Returns what a start returns; a wrong
    /// answer returns a fresh challenge as the result's ``ProviderStartResult/nextAction`` with
    /// ``ProviderStartResult/sentNothing``, never a send.
    func submitChallenge(_ verification: ProviderVerification, answer: ChallengeAnswer) async throws(GatewayError)
        -> ProviderStartResult

    /// Whether this particular start needs an app-verification proof. Defaults to
    /// ``ProviderCapabilities/requiresAppVerification``; a vendor with fixed test numbers (Firebase)
    /// answers `false` for them, since they never reach the vendor.
    func requiresAppVerification(for request: StartVerification) -> Bool

    /// Whether the request's destination is one of this provider's own fixed test numbers (Firebase's):
    /// they may be fictional, so the engine does not refuse them as invalid. The default is `false`.
    func isTestNumber(_ request: StartVerification) -> Bool

    /// Checks the code the user entered (for a flash call, the caller number the app intercepted).
    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult

    /// Sends again. ``ResendRequest/channel`` is set when the caller (or the next fallback channel) asks for
    /// another channel. A vendor that resends by starting over returns a new reference and state.
    func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult

    /// Cancels the verification at the vendor. Called only when ``ProviderCapabilities/supportsCancel`` and something
    /// was sent.
    func cancel(_ verification: ProviderVerification) async throws(GatewayError)

    /// The vendor's current view of the verification (`GET …?refresh=true`). Never spends an attempt.
    func status(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationChange

    /// Verifies and reads a callback the vendor sent to `/callbacks/{provider id}/…`. A callback whose
    /// signature is missing or wrong throws `unauthorized` and changes nothing. `lookup` finds the
    /// verifications a callback names, for vendors that must be answered on the spot (Sinch's request
    /// event is answered allow or deny).
    func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply

    /// Vendor-only operations this provider offers through `POST /v1/providers/{id}/actions/{name}`
    /// (IDaaS `refresh_id_token`, Twilio `create_access_token`).
    var actions: [ProviderAction] { get }

    /// Runs one of ``actions``. Input and output are JSON objects, so the core never needs to know a
    /// vendor's types.
    func perform(action: String, input: [String: JSONValue]) async throws(GatewayError) -> [String: JSONValue]

    /// Asks the vendor about a start whose gateway instance died during the vendor call, before the gateway
    /// stored its answer (docs/architecture.md §9.2): by the reference that start sent (the gateway's
    /// verification id), or by what else the vendor can find the start by (its destination). The answer is
    /// what the retry of that start's `Idempotency-Key` gets: ``StartLookupResult/found(_:)`` is stored as the
    /// key's verification, ``StartLookupResult/notFound`` lets the start run anew, anything else keeps
    /// `idempotency_outcome_unknown`. The default answers ``StartLookupResult/unknown``: the vendor has no
    /// lookup.
    func lookUpStart(_ lookup: StartLookup) async throws(GatewayError) -> StartLookupResult

    /// Reads what routing needs from the vendor before the first request (IDaaS: the tenant's area codes, which
    /// decide ``ProviderCapabilities/servedRegions``). The gateway awaits it once at startup, every provider at
    /// once; a failure is the provider's to log and to retry when it next needs the data. The default does
    /// nothing.
    func warmUp() async

    /// The vendor's own list of the countries it serves, with the names, patterns and preferred entry its SDK
    /// shows in a country picker (IDaaS's area codes), for `GET /v1/countries?provider=…`; `nil` when the
    /// vendor keeps no such list (the default).
    func countryList() async throws(GatewayError) -> ProviderCountryList?
}

/// What a takeover knows of a start that died at the vendor: what a plugin asks its vendor by
/// (``VerificationProvider/lookUpStart(_:)``).
public struct StartLookup: Sendable, Equatable {
    /// The gateway's id for the verification: what the dead start sent as the vendor's reference, where the
    /// vendor takes one.
    public var verificationID: String
    /// Where the dead start was sending.
    public var destination: Destination
    /// The channel the dead start used.
    public var channel: Channel
    /// When the dead start's call to this provider began.
    public var callBegunAt: Date

    /// What a takeover read from the dead start's stored progress.
    public init(verificationID: String, destination: Destination, channel: Channel, callBegunAt: Date) {
        self.verificationID = verificationID
        self.destination = destination
        self.channel = channel
        self.callBegunAt = callBegunAt
    }

    /// Whether the dead start's request can no longer reach the vendor at `now`: its call began more than
    /// `requestTimeout` (the provider's bound on one vendor call) ago, so the dead instance's client had
    /// given up on it by then. Until then a vendor that has nothing under the reference may still get it,
    /// and ``StartLookupResult/notYet`` is the true answer rather than ``StartLookupResult/notFound``.
    public func callSettled(at now: Date, requestTimeout: Duration) -> Bool {
        let seconds =
            TimeInterval(requestTimeout.components.seconds)
            + TimeInterval(requestTimeout.components.attoseconds) / 1e18
        return now >= callBegunAt.addingTimeInterval(seconds)
    }
}

/// What a vendor says of a start whose instance died (``VerificationProvider/lookUpStart(_:)``).
public enum StartLookupResult: Sendable, Equatable {
    /// The vendor has the verification: the start reached it. What a start would have returned.
    case found(ProviderStartResult)
    /// The vendor has nothing for it and the dead call can no longer reach it: nothing was sent.
    case notFound
    /// The vendor has nothing for it yet, but the dead call may still reach it (it began less than the
    /// provider's request timeout ago): ask again later.
    case notYet
    /// The vendor cannot say (no lookup, or an answer that does not settle it).
    case unknown
}

/// A vendor-specific operation a provider exposes through the API.
public struct ProviderAction: Sendable, Equatable, Codable {
    /// The action's name in the route (`refresh_id_token`).
    public var name: String
    /// A one-line description of what the action does.
    public var summary: String
    /// Input keys the action requires.
    public var requiredInputs: [String]

    /// An action with no required inputs unless told.
    public init(name: String, summary: String, requiredInputs: [String] = []) {
        self.name = name
        self.summary = summary
        self.requiredInputs = requiredInputs
    }
}

extension VerificationProvider {
    /// Default: no actions.
    public var actions: [ProviderAction] { [] }

    /// Default: nothing to read.
    public func warmUp() async {}

    /// Default: `nil`, the vendor keeps no country list.
    public func countryList() async throws(GatewayError) -> ProviderCountryList? { nil }

    /// Default: ``ProviderCapabilities/requiresAppVerification``, whatever the request.
    public func requiresAppVerification(for request: StartVerification) -> Bool {
        capabilities.requiresAppVerification
    }

    /// Default: `nil`, start at once.
    public func prepare(_ request: StartVerification) async throws(GatewayError) -> ProviderChallenge? { nil }

    /// Default: ``StartLookupResult/unknown``, the vendor has no lookup.
    public func lookUpStart(_ lookup: StartLookup) async throws(GatewayError) -> StartLookupResult { .unknown }

    /// Default: `false`, no number is a test number.
    public func isTestNumber(_ request: StartVerification) -> Bool { false }

    /// Default: throws `invalid_state`, since a provider that sets no challenge has nothing to answer.
    public func submitChallenge(_ verification: ProviderVerification, answer: ChallengeAnswer)
        async throws(GatewayError) -> ProviderStartResult
    {
        throw GatewayError(.invalidState, "Provider \(id) sets no challenge.")
    }

    /// Default: throws `not_found`, since the provider has no actions.
    public func perform(action: String, input: [String: JSONValue]) async throws(GatewayError)
        -> [String: JSONValue]
    {
        throw GatewayError(.notFound, "Provider \(id) has no action named \(action).")
    }

    /// Default: throws `invalid_request`; the caller starts a new verification instead.
    public func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        throw GatewayError(.invalidRequest, "Provider \(id) cannot resend; start a new verification.")
    }

    /// Default: throws `invalid_request`, the provider cannot cancel.
    public func cancel(_ verification: ProviderVerification) async throws(GatewayError) {
        throw GatewayError(.invalidRequest, "Provider \(id) cannot cancel a verification.")
    }

    /// Default: throws `invalid_request`, the provider cannot report a status.
    public func status(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationChange {
        throw GatewayError(.invalidRequest, "Provider \(id) cannot report a verification's status.")
    }

    /// Default: throws `not_found`, the provider takes no callbacks.
    public func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
    {
        throw GatewayError(.notFound, "Provider \(id) takes no callbacks.")
    }
}
