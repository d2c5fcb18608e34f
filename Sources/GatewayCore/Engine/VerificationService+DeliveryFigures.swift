import Foundation

/// What a final delivery receipt teaches (docs/own-codes.md, "Delivery figures"): the provider's delivery tally
/// for the country, and, on an adaptive route that learns from deliveries, the result of the start.
extension VerificationService {
    /// The store's delivery tallies, when it keeps them (the in-memory, SQLite and PostgreSQL stores do).
    var deliveryStats: (any DeliveryStatsStore)? { store as? any DeliveryStatsStore }

    /// Learns from a receipt just recorded for `record`: a final one (`delivered`, `undelivered`, `failed`) for
    /// one of the messages the verification lists is tallied for its sender and country, a delivered one with
    /// the time since its send; the first message's also counts for the adaptive start. A message not listed
    /// while a send holds the verification's lease is that send's, whose answer is not stored yet: tallied, its
    /// time counted from the lease's start (an upper bound). Any other message the verification does not list
    /// (another part of a long message) teaches nothing. Best effort: a store failure is logged.
    func learnFromDelivery(_ receipt: DeliveryReceipt, of record: VerificationRecord, providerID: String) async {
        guard receipt.status.isFinal, !record.isTestNumber,
            let sends = record.providerState.ownCodeState?.sends
        else { return }
        let now = clock.now
        let index = sends.firstIndex { $0.provider == providerID && $0.messageID == receipt.messageID }
        let sentAt: Date?
        if let index {
            sentAt = sends[index].sentAt
        } else if let until = record.checkLeaseUntil, until > now {
            sentAt = until.addingTimeInterval(-policy.checkLease)
        } else {
            return
        }
        if let stats = deliveryStats {
            let latency =
                receipt.status == .delivered ? sentAt.map { DeliveryLatency.bucket(now.timeIntervalSince($0)) } ?? 0 : 0
            do {
                try await stats.countDeliveries(
                    DeliveryTally(
                        providerID: providerID, country: record.destination.phoneNumber?.region,
                        minute: DeliveryTally.minute(of: now), outcome: receipt.status, latencyMS: latency))
            } catch {
                logger.warning(
                    "delivery not tallied",
                    metadata: ["provider.id": "\(providerID)", "error.code": "\(error.code.rawValue)"])
            }
        }
        if index == 0 {
            await countAdaptiveDelivery(record, providerID: providerID, delivered: receipt.status == .delivered)
        }
    }
}
