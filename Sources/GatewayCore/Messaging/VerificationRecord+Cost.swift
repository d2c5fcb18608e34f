extension VerificationRecord {
    /// What the verification cost by `prices`: a Verify vendor's price per verification, or for a code the gateway
    /// issued, each send's provider's price per segment times its segments (a resend through another provider
    /// at that one's price). `nil` as soon as one price is unknown, so that a partial sum never passes for a cost.
    public func cost(_ prices: PriceTable) -> Double? {
        let country = destination.phoneNumber?.region
        guard let state = providerState.ownCodeState, !state.sends.isEmpty else {
            return prices.price(provider: providerID, country: country)
        }
        var total = 0.0
        for send in state.sends {
            guard let price = prices.price(provider: send.provider, country: country) else { return nil }
            total += price * Double(max(1, send.segments))
        }
        return total
    }
}
