import Foundation

/// One configured vendor account that can send and check codes.
///
/// Every method throws only ``GatewayError``; a plugin maps its vendor's errors through one mapping
/// table. Start and check are all a provider must do. The optional operations are protocols of their own,
/// adopted beside this one (``ResendingProvider``, ``CancelingProvider``, ``StatusReportingProvider``,
/// ``CallbackReceivingProvider``, ``ChallengingProvider``, ``ActionProvider``): what a provider offers follows from
/// what it implements (``operations``), so none can be advertised and then refused by a default. The defaults
/// below answer "nothing to do", never an error.
public protocol VerificationProvider: Sendable {
    /// The provider instance id, as used in routes and API responses (`twilio`, `twilio-eu`).
    var id: String { get }
    /// What the provider supports; the engine and the router read it before calling any operation.
    var capabilities: ProviderCapabilities { get }

    /// Sends the first code (or starts the vendor's flow) for a request routing chose this provider for.
    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult

    /// Whether this particular start needs an app-verification proof. Defaults to
    /// ``ProviderCapabilities/requiresAppVerification``; a vendor with fixed test numbers (Firebase)
    /// answers `false` for them, since they never reach the vendor.
    func requiresAppVerification(for request: StartVerification) -> Bool

    /// Whether the request's destination is one of this provider's own fixed test numbers (Firebase's):
    /// they may be fictional, so the engine does not refuse them as invalid. The default is `false`.
    func isTestNumber(_ request: StartVerification) -> Bool

    /// Checks the code the user entered (for a flash call, the caller number the app intercepted).
    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult

    /// Asks the vendor about a start whose gateway instance died during the vendor call, before the gateway
    /// stored its answer (docs/architecture.md §9.2): by the reference that start sent (the gateway's
    /// verification id), or by what else the vendor can find the start by (its destination). The answer is
    /// what the retry of that start's `Idempotency-Key` gets: ``StartLookupResult/found(_:)`` is stored as the
    /// key's verification, ``StartLookupResult/notFound`` lets the start run anew, anything else keeps
    /// `idempotency_outcome_unknown`. The default answers ``StartLookupResult/unknown``: the vendor has no
    /// lookup, which is a true answer, not a refusal.
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
    /// Default: nothing to read.
    public func warmUp() async {}

    /// Default: `nil`, the vendor keeps no country list.
    public func countryList() async throws(GatewayError) -> ProviderCountryList? { nil }

    /// Default: ``ProviderCapabilities/requiresAppVerification``, whatever the request.
    public func requiresAppVerification(for request: StartVerification) -> Bool {
        capabilities.requiresAppVerification
    }

    /// Default: ``StartLookupResult/unknown``, the vendor has no lookup.
    public func lookUpStart(_ lookup: StartLookup) async throws(GatewayError) -> StartLookupResult { .unknown }

    /// Default: `false`, no number is a test number.
    public func isTestNumber(_ request: StartVerification) -> Bool { false }
}
