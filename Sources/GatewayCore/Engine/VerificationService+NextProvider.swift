import Foundation

extension VerificationService {
    // MARK: the next messaging provider of a resend

    /// Where a resend without `provider` of an own-code verification goes instead of its own provider: the next
    /// provider of the verification's route, in the route's order after its own and then around, that sends
    /// the gateway's codes under the same key, serves the number's country over the verification's channel, has
    /// its breaker closed, and has not failed this verification: neither failed over from at its start nor
    /// reported undelivered or failed by a receipt. `nil` keeps the verification where it is: a Verify vendor's
    /// verification, a route without such a provider, or one that names no fixed list (an experiment, whose
    /// arm must stay its arm's; a forced provider; a front door's service route).
    ///
    /// The timeline is read only when the route has a candidate, to learn which providers' messages failed.
    /// `excluding` passes over more providers (a delivery failover's, those that already sent this code).
    func nextMessagingProvider(
        _ record: VerificationRecord, current: any VerificationProvider, excluding: Set<String> = []
    ) async -> (any VerificationProvider)? {
        guard let own = current as? OwnCodeProvider, let route = record.route,
            let ids = routing.providerIDs(ofRoute: route, channel: record.channel), ids.count > 1
        else { return nil }
        let position = ids.firstIndex(of: current.id).map { $0 + 1 } ?? 0
        let order = ids[position...] + ids[..<position]
        let country = record.destination.phoneNumber?.region
        let region = record.destination.phoneNumber?.policyRegion
        let startFailed = Set(record.failovers.map { String($0.prefix { $0 != ":" }) })
        let candidates = order.compactMap { id -> OwnCodeProvider? in
            guard id != current.id, !startFailed.contains(id), !excluding.contains(id),
                let target = registry.provider(id) as? OwnCodeProvider, target.keyID == own.keyID,
                target.capabilities.channels.contains(record.channel),
                region.map(target.capabilities.serves(region:)) ?? true,
                breakers.wouldAllow(id, country: country)
            else { return nil }
            return target
        }
        guard !candidates.isEmpty else { return nil }
        let undelivered = Self.undeliveredProviders((try? await store.events(verificationID: record.id)) ?? [])
        return candidates.first { !undelivered.contains($0.id) }
    }

    /// The providers a `delivery` event of the timeline reports a message of as undelivered or failed.
    static func undeliveredProviders(_ events: [VerificationEvent]) -> Set<String> {
        Set(
            events.compactMap { event in
                guard event.kind == .delivery, let provider = event.detail["provider"],
                    let status = event.detail["status"].flatMap(DeliveryStatus.init(rawValue:)),
                    status == .undelivered || status == .failed
                else { return nil }
                return provider
            })
    }
}
