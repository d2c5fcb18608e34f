import Foundation

/// One start on its way to a provider: the request, where routing sent it, and what happened so far.
/// ``VerificationService`` fills it in as it tries the candidates, and stores it when one accepts (or, for an
/// experiment's arm, when none did).
struct StartAttempt {
    /// The verification's id, sent to the vendor as its reference.
    let id: String
    /// The request, with ``StartVerification/verificationID`` set to ``id``.
    let request: StartVerification
    /// The API key that started it.
    let apiKeyID: String?
    /// Where routing sent it.
    let decision: RoutingTable.Decision
    /// The claim of its `Idempotency-Key`, if it has one.
    var idempotency: IdempotentStart? = nil
    /// The bandit's choice, on an adaptive route.
    var adaptive: AdaptiveChoice? = nil
    /// The `provider_call` events so far, in call order.
    var calls: [VerificationEvent] = []
    /// `provider:error_code` for each provider that failed and was failed over.
    var failovers: [String] = []
    /// The candidates passed over, by routing and then before their call.
    var skipped: [RoutingTable.Skip] = []
    /// Whether the destination is one of the gateway's test numbers (no vendor was called).
    var isTestNumber = false
    /// Whether the vendor found it for a request that took over a dead start's `Idempotency-Key`.
    var recovered = false
    /// What the risk step marked the verification with (``VerificationRecord/risk``).
    var risk: [String: String] = [:]
}
