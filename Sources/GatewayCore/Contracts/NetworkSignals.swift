import Foundation

/// A provider that can tell whether the SIM behind a number changed recently (CAMARA SIM Swap, docs/network-signals.md):
/// the engine's risk step asks it before a start, ahead of any vendor that would send or charge.
public protocol SimSwapSignalProvider: VerificationProvider {
    /// Whether the SIM behind `number` changed within the last `hours` hours (1–2400). Throws when the signal
    /// is unavailable for it: the operator is down, refuses the call, or does not cover the number.
    func simSwapped(_ number: PhoneNumber, withinHours hours: Int) async throws(GatewayError) -> Bool
}

/// A provider whose callbacks include the user's own browser arriving by redirect (an OpenID Connect
/// authorization answer on the device): its callback route takes `GET` as well as the vendors' `POST`.
public protocol RedirectReceivingProvider: CallbackReceivingProvider {}
