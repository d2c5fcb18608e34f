import Foundation

/// A verification as the gateway stores it.
///
/// Updates go through the store with compare-and-set on ``version``, so two gateway instances never
/// both accept the same check.
public struct VerificationRecord: Sendable, Codable, Equatable {
    /// The gateway's id (`vf_…`).
    public var id: String
    /// Where the code goes.
    public var destination: Destination
    /// The channel of the latest send (the vendor or a resend may have moved it).
    public var channel: Channel
    /// The provider that sent it.
    public var providerID: String
    /// The vendor's id for this verification (Twilio `VE…`, Vonage `request_id`, …).
    public var providerReference: String?
    /// Vendor state the gateway keeps for the plugin and never shows to API clients (Firebase
    /// `sessionInfo`, for example). Plugins read it back on check, resend and cancel.
    public var providerState: ProviderState
    /// The status as stored; ``effectiveStatus(at:)`` accounts for expiry.
    public var status: VerificationStatus
    /// Checks made so far.
    public var attempts: Int
    /// Checks allowed: the policy's limit, or the vendor's own when lower.
    public var maxAttempts: Int
    /// Sends made so far (the start counts as one).
    public var sends: Int
    /// When the verification was started.
    public var createdAt: Date
    /// When the record last changed.
    public var updatedAt: Date
    /// When the code stops working: the vendor's expiry, or the policy's code validity after the start.
    public var expiresAt: Date
    /// The language the vendor used for the content, if it said.
    public var contentLanguage: String?
    /// The locales the caller asked for, kept so a resend can ask the vendor again.
    public var locales: [String]
    /// The routing rule that matched (`default`, `channel:sms`, `forced` or a configured route's name).
    public var route: String?
    /// The experiment that assigned the provider, and the arm (``experimentArm``).
    public var experiment: String?
    /// The arm of ``experiment`` the destination fell in.
    public var experimentArm: String?
    /// The context an adaptive route learned this start in (`GB/sms`): its approval or failure is counted
    /// there, whatever channel the verification moves to later. `nil` outside adaptive routes.
    public var adaptiveContext: String?
    /// Providers that failed before the one that sent, as `provider:error_code`, in order.
    public var failovers: [String]
    /// A configured test number: no vendor was called and the code is the configured one.
    public var isTestNumber: Bool
    /// The caller's own reference from the start, echoed back.
    public var clientReference: String?
    /// The caller's free-form metadata from the start; never sent to a vendor.
    public var metadata: [String: String]
    /// The API key (its id, not its secret) that started the verification.
    public var apiKeyID: String?
    /// What the app must do next, while the verification is pending (docs/design.md §3.1).
    public var nextAction: NextAction?
    /// Fallback channels the verification has not used yet, in order.
    public var fallbackChannels: [Channel]
    /// Answers to challenges received so far (bounded by the policy).
    public var challengeAttempts: Int
    /// Approved outside a check (callback or refresh) and the gateway's token not yet handed out: the next
    /// `GET` carries it, once.
    public var tokenPending: Bool
    /// Vendor tokens that came with such an approval, kept only until that `GET`.
    public var pendingTokens: [String: JSONValue]
    /// Set while one check is at the vendor: checks of one verification are settled one at a time, and a
    /// lease left by a crashed instance lapses at this time.
    public var checkLeaseUntil: Date?
    /// The instance that holds the lease (``LeaseOwners/instanceID``): another instance takes over the lease
    /// of a dead one at once. `nil` for a lease taken without one (tests, records from before owners).
    public var checkLeaseOwner: String?
    /// Whether the lease holds an attempt its check reserved: given back when the lease's instance died.
    public var checkLeaseHoldsAttempt: Bool
    /// The vendor's reason for the last status it reported (a bounded code such as `DENIED`).
    public var statusReason: String?
    /// The SHA-256 (hex) of the client secret the start handed out, never the secret: the app presents the
    /// secret for this verification's app-side steps. `nil` for a verification that has none.
    public var clientSecretHash: String?
    /// What the start's risk step found that the app should know (`sim_swap: recent` on a `step_up` route):
    /// shown in the answer, the approval token's claims and the webhooks. Empty when nothing was found.
    public var risk: [String: String] = [:]
    /// The compare-and-set version: 1 when inserted, one more on each update.
    public var version: Int

    /// A record of a verification started at `createdAt`; one send, no attempts and no lease unless given.
    public init(
        id: String,
        destination: Destination,
        channel: Channel,
        providerID: String,
        providerReference: String?,
        providerState: ProviderState = .empty,
        status: VerificationStatus = .pending,
        attempts: Int = 0,
        maxAttempts: Int,
        sends: Int = 1,
        createdAt: Date,
        updatedAt: Date,
        expiresAt: Date,
        contentLanguage: String? = nil,
        locales: [String] = [],
        route: String? = nil,
        experiment: String? = nil,
        experimentArm: String? = nil,
        failovers: [String] = [],
        isTestNumber: Bool = false,
        clientReference: String? = nil,
        metadata: [String: String] = [:],
        apiKeyID: String? = nil,
        nextAction: NextAction? = nil,
        fallbackChannels: [Channel] = [],
        challengeAttempts: Int = 0,
        tokenPending: Bool = false,
        pendingTokens: [String: JSONValue] = [:],
        checkLeaseUntil: Date? = nil,
        checkLeaseOwner: String? = nil,
        checkLeaseHoldsAttempt: Bool = false,
        statusReason: String? = nil,
        clientSecretHash: String? = nil,
        version: Int = 1
    ) {
        self.clientSecretHash = clientSecretHash
        self.nextAction = nextAction
        self.fallbackChannels = fallbackChannels
        self.challengeAttempts = challengeAttempts
        self.tokenPending = tokenPending
        self.pendingTokens = pendingTokens
        self.checkLeaseUntil = checkLeaseUntil
        self.checkLeaseOwner = checkLeaseOwner
        self.checkLeaseHoldsAttempt = checkLeaseHoldsAttempt
        self.statusReason = statusReason
        self.id = id
        self.destination = destination
        self.channel = channel
        self.providerID = providerID
        self.providerReference = providerReference
        self.providerState = providerState
        self.status = status
        self.attempts = attempts
        self.maxAttempts = maxAttempts
        self.sends = sends
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.expiresAt = expiresAt
        self.contentLanguage = contentLanguage
        self.locales = locales
        self.route = route
        self.experiment = experiment
        self.experimentArm = experimentArm
        self.failovers = failovers
        self.isTestNumber = isTestNumber
        self.clientReference = clientReference
        self.metadata = metadata
        self.apiKeyID = apiKeyID
        self.version = version
    }

    /// Checks left: ``maxAttempts`` less ``attempts``, never below zero.
    public var attemptsRemaining: Int { max(0, maxAttempts - attempts) }

    /// The status as of `now`: a pending verification past its expiry is expired.
    public func effectiveStatus(at now: Date) -> VerificationStatus {
        status == .pending && now >= expiresAt ? .expired : status
    }

    /// The next action while it applies: only a pending verification has one.
    public func effectiveNextAction(at now: Date) -> NextAction? {
        effectiveStatus(at: now) == .pending ? nextAction : nil
    }
}

/// One entry of a verification's append-only event log.
public struct VerificationEvent: Sendable, Codable, Equatable {
    /// What an event records; the raw value is the timeline's `kind`.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case started
        case providerCall = "provider_call"
        case checked
        case resent
        case canceled
        case statusChanged = "status_changed"
        /// The app answered a challenge.
        case challenge
        /// The vendor reported a change by callback or status refresh.
        case providerUpdate = "provider_update"
        /// The gateway's token for an approval outside a check was handed out.
        case tokenIssued = "token_issued"
        /// A messaging vendor's receipt for one of the gateway's own messages (docs/own-codes.md, "Receipts").
        case delivery
    }

    /// The verification the event belongs to.
    public var verificationID: String
    /// What happened.
    public var kind: Kind
    /// When it happened.
    public var at: Date
    /// Bounded, non-personal facts: provider id, operation, outcome code, latency, status.
    public var detail: [String: String]

    /// An event of `kind` at `at`, with no detail unless given.
    public init(verificationID: String, kind: Kind, at: Date, detail: [String: String] = [:]) {
        self.verificationID = verificationID
        self.kind = kind
        self.at = at
        self.detail = detail
    }
}
