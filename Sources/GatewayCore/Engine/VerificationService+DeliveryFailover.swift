import Foundation

extension VerificationService {
    // MARK: delivery failover (docs/routing.md, "Delivery failover")

    /// The store's delivery deadlines, when it keeps them.
    var deliveryDeadlines: (any DeliveryDeadlineStore)? { store as? any DeliveryDeadlineStore }

    /// Whether a message `provider` sends on `route` has a delivery deadline: its breaker then learns from the
    /// delivery (a `delivered` receipt, or the deadline passing or a failed receipt), not from the acceptance.
    func awaitsDelivery(_ provider: any VerificationProvider, route: String) -> Bool {
        provider is OwnCodeProvider && routing.delivery(ofRoute: route)?.failover == true && deliveryDeadlines != nil
    }

    /// A `delivered` receipt is a success of its provider's breaker for the destination's country.
    func countDelivery(_ receipt: DeliveryReceipt, of record: VerificationRecord, providerID: String) {
        guard receipt.status == .delivered else { return }
        breakers.record(providerID, country: record.destination.phoneNumber?.region, failure: false)
    }

    /// After an own-code send on a route whose ``DeliveryPolicy`` fails over: keeps the deadline by which the
    /// message must be reported delivered. Best effort: a store failure is logged, and that message is then
    /// only recorded, never failed over.
    func scheduleDeliveryDeadline(_ record: VerificationRecord) async {
        guard !record.isTestNumber, record.status == .pending, let route = record.route,
            let policy = routing.delivery(ofRoute: route), policy.failover, let deadlines = deliveryDeadlines,
            let state = record.providerState.ownCodeState, let last = state.sends.last
        else { return }
        let deadline = DeliveryDeadline(
            verificationID: record.id, send: record.sends, providerID: last.provider, messageID: last.messageID,
            dueAt: clock.now.addingTimeInterval(policy.deliverWithin))
        do {
            try await deadlines.scheduleDeliveryDeadline(deadline)
        } catch {
            logger.warning(
                "delivery deadline not kept; this message will not be failed over",
                metadata: ["verification.id": "\(record.id)", "error.code": "\(error.code.rawValue)"])
        }
    }

    /// A receipt that says a message failed brings its deadline forward to now, so the next round acts on it.
    /// A receipt can beat the deadline into the store (it arrives between the send's commit and the deadline's
    /// write): for the verification's latest message, still pending, it then writes the deadline itself, due
    /// now, and the send's own write, due later, keeps the earlier time (``DeliveryDeadlineStore``).
    func expediteDeliveryDeadline(_ receipt: DeliveryReceipt, of record: VerificationRecord, providerID: String) async {
        guard receipt.status == .undelivered || receipt.status == .failed, let deadlines = deliveryDeadlines,
            let route = record.route, routing.delivery(ofRoute: route)?.failover == true
        else { return }
        let now = clock.now
        let expedited = try? await deadlines.expediteDeliveryDeadline(
            verificationID: record.id, providerID: providerID, messageID: receipt.messageID, to: now)
        guard expedited == false, record.status == .pending, record.sends > 0,
            let last = record.providerState.ownCodeState?.sends.last,
            last.provider == providerID, last.messageID == receipt.messageID
        else { return }
        _ = try? await deadlines.scheduleDeliveryDeadline(
            DeliveryDeadline(
                verificationID: record.id, send: record.sends, providerID: providerID, messageID: receipt.messageID,
                dueAt: now))
    }

    /// One round: claims the deadlines that are due (each for `lease` seconds, the policy's check lease by
    /// default, so no other instance takes it meanwhile) and acts on each. Returns how many it acted on. A store
    /// failure ends the round; the next round tries again.
    @discardableResult
    public func runDueDeliveryDeadlines(limit: Int = 50, lease: TimeInterval? = nil) async -> Int {
        guard let deadlines = deliveryDeadlines else { return 0 }
        let due: [DeliveryDeadline]
        do {
            due = try await deadlines.claimDueDeliveryDeadlines(
                at: clock.now, limit: limit, lease: lease ?? policy.checkLease)
        } catch {
            logger.warning("delivery deadlines not read", metadata: ["error.code": "\(error.code.rawValue)"])
            return 0
        }
        for deadline in due { await actOnDeliveryDeadline(deadline, store: deadlines) }
        return due.count
    }

    /// What a due deadline comes to: nothing when the verification is settled, sent again since, or its
    /// message was delivered; otherwise the same code once more through the next messaging provider of its
    /// route that has not sent it, with why on the `resent` event. A failure that may pass (another request on
    /// the verification, the store, a vendor down before sending) tries again a little later.
    func actOnDeliveryDeadline(_ deadline: DeliveryDeadline, store deadlines: any DeliveryDeadlineStore) async {
        if deadline.messageID == Self.silentStepMarker { return await actOnSilentDeadline(deadline, store: deadlines) }
        let id = deadline.verificationID
        let done: @Sendable () async -> Void = {
            _ = try? await deadlines.removeDeliveryDeadline(verificationID: id, send: deadline.send)
        }
        guard let record = try? await store.record(id: id) else {
            return await done()
        }
        if record.status == .approved, record.providerID == deadline.providerID, record.sends == deadline.send {
            // The code arrived: as good as a `delivered` receipt, for a vendor that sends none.
            breakers.record(deadline.providerID, country: record.destination.phoneNumber?.region, failure: false)
        }
        guard record.effectiveStatus(at: clock.now) == .pending, record.sends == deadline.send,
            let state = record.providerState.ownCodeState, let current = try? provider(for: record),
            current.id == deadline.providerID
        else { return await done() }
        let events = (try? await self.store.events(verificationID: id)) ?? []
        let news = events.filter {
            $0.kind == .delivery && $0.detail["provider"] == deadline.providerID
                && $0.detail["message_id"] == String(deadline.messageID.prefix(64))
        }
        if news.contains(where: { $0.detail["status"] == DeliveryStatus.delivered.rawValue }) { return await done() }
        let failed = news.last {
            $0.detail["status"] == DeliveryStatus.undelivered.rawValue
                || $0.detail["status"] == DeliveryStatus.failed.rawValue
        }
        let within = record.route.flatMap { routing.delivery(ofRoute: $0)?.deliverWithin } ?? 0
        let reason =
            failed.map { event in
                ([deadline.providerID, event.detail["status"] ?? ""] + [event.detail["error_code"]].compactMap { $0 })
                    .joined(separator: " ")
            } ?? "\(deadline.providerID) not delivered within \(Int(within))s"
        // Not delivered: a failure of its provider's breaker for the country (a vendor that answers 201 and
        // delivers nothing is unwell), before the next provider is chosen by the breakers.
        breakers.record(deadline.providerID, country: record.destination.phoneNumber?.region, failure: true)
        let tried = Set(state.sends.map(\.provider))
        guard let next = await nextMessagingProvider(record, current: current, excluding: tried) else {
            logger.notice(
                "delivery failover: no other provider left",
                metadata: ["verification.id": "\(id)", "provider.id": "\(deadline.providerID)"])
            return await done()
        }
        do {
            // The send count is checked again under the verification's lease: a resend (or another instance's
            // failover) that got there first makes this one moot.
            _ = try await resend(
                id: id, request: ResendRequest(provider: next.id), owner: nil,
                failover: (reason: reason, sends: deadline.send))
            metrics.deliveryFailover(
                record, from: deadline.providerID, to: next.id, reason: failed == nil ? "not_delivered" : "failed")
            logger.info(
                "delivery failover",
                metadata: [
                    "verification.id": "\(id)", "provider.id": "\(deadline.providerID)", "provider.next": "\(next.id)",
                ])
            await done()
        } catch {
            let later =
                error.code == .concurrentVerification || error.code == .storeUnavailable
                || (error.errorClass == .providerTransient && !error.sendMayHaveHappened)
            logger.warning(
                later ? "delivery failover failed; tried again shortly" : "delivery failover failed",
                metadata: [
                    "verification.id": "\(id)", "provider.next": "\(next.id)", "error.code": "\(error.code.rawValue)",
                ])
            guard later else { return await done() }
            var retry = deadline
            retry.dueAt = clock.now.addingTimeInterval(2)
            _ = try? await deadlines.scheduleDeliveryDeadline(retry)
        }
    }
}
