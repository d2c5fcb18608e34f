import Foundation

/// A provider that may set the app a challenge before anything is sent (IDaaS's slider). The engine asks
/// ``prepare(_:)`` before every start through this provider, and takes answers at
/// `POST /v1/verifications/{id}/challenge` only for a verification whose challenge is open.
public protocol ChallengingProvider: VerificationProvider {
    /// Runs before ``VerificationProvider/start(_:)``: a challenge the app must solve before anything is sent, or
    /// `nil` to start at once. A verification waiting for its challenge has sent nothing and cost nothing.
    func prepare(_ request: StartVerification) async throws(GatewayError) -> ProviderChallenge?

    /// The app's answer to the challenge ``prepare(_:)`` (or a resend) returned. Returns what a start returns; a
    /// wrong answer returns a fresh challenge as the result's ``ProviderStartResult/nextAction`` with
    /// ``ProviderStartResult/sentNothing``, never a send.
    func submitChallenge(_ verification: ProviderVerification, answer: ChallengeAnswer) async throws(GatewayError)
        -> ProviderStartResult
}
