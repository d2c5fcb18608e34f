import Foundation

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
