import Foundation

extension VerificationService {
    // MARK: delivery receipts

    /// Records the delivery receipts a messaging vendor's callback carried, each as a `delivery` event on its
    /// verification's timeline (docs/own-codes.md, "Receipts"). The log is append-only: a receipt changes
    /// no verification, whatever its status, and a receipt that arrives twice (a vendor's retry, or the same one
    /// at once on two instances) is recorded once.
    ///
    /// A receipt for a verification the gateway does not hold throws `not_found`, so that a vendor that retries
    /// brings it again: it can arrive before the start that sent the message has stored it.
    func recordDeliveries(_ receipts: [DeliveryReceipt], providerID: String) async throws(GatewayError) {
        for receipt in receipts {
            try await traced("delivery.receipt") { (span) throws(GatewayError) in
                span?.set("verification.provider", providerID)
                span?.set("delivery.status", receipt.status.rawValue)
                if let id = receipt.verificationID, Self.isWellFormedID(id) { span?.set("verification.id", id) }
                do throws(GatewayError) {
                    try await recordDelivery(receipt, providerID: providerID)
                } catch {
                    span?.fail(error.code)
                    throw error
                }
            }
        }
    }

    private func recordDelivery(_ receipt: DeliveryReceipt, providerID: String) async throws(GatewayError) {
        let found: VerificationRecord?
        if let id = receipt.verificationID {
            found = Self.isWellFormedID(id) ? try await store.record(id: id) : nil
        } else {
            found = try await store.record(providerID: providerID, reference: receipt.messageID)
        }
        guard let record = found else {
            throw GatewayError(
                .notFound, "No verification the gateway holds sent this message through `\(providerID)`.")
        }
        guard Self.sent(receipt, by: providerID, in: record, at: clock.now) else {
            logger.notice(
                "delivery receipt for a message the verification did not send",
                metadata: ["provider.id": "\(providerID)", "verification.id": "\(record.id)"])
            return
        }
        // The claim makes a repeated receipt (same message, same news) one event, across instances too.
        let key = IdempotencyKey(
            scope: "receipt/" + providerID,
            key: [receipt.messageID, receipt.status.rawValue, receipt.vendorStatus, receipt.errorCode ?? ""]
                .joined(separator: " "))
        let token = UUID().uuidString
        switch try await store.claimIdempotencyKey(key, fingerprint: "receipt", token: token, at: clock.now, lease: 60)
        {
        case .claimed, .takenOver: break
        case .replay, .inProgress, .mismatch: return
        }
        var detail = [
            "provider": providerID, "message_id": String(receipt.messageID.prefix(64)),
            "status": receipt.status.rawValue, "vendor_status": String(receipt.vendorStatus.prefix(32)),
        ]
        if let code = receipt.errorCode { detail["error_code"] = String(code.prefix(16)) }
        if let error = receipt.error { detail["error"] = error.rawValue }
        do {
            try await store.append(
                VerificationEvent(verificationID: record.id, kind: .delivery, at: clock.now, detail: detail))
        } catch {
            try? await store.releaseIdempotencyKey(key, token: token)
            throw error
        }
        _ = try? await store.completeIdempotencyKey(
            key, token: token, response: StoredResponse(status: 200, body: Data()))
        metrics.delivery(record, provider: providerID, status: receipt.status, error: receipt.error)
        countDelivery(receipt, of: record, providerID: providerID)
        await expediteDeliveryDeadline(receipt, of: record, providerID: providerID)
        await learnFromDelivery(receipt, of: record, providerID: providerID)
    }

    /// Whether `record` sent the message `receipt` is about through `providerID`. Found by its message id, it is
    /// the verification's latest message. Named by the verification id the vendor signed, the verification must
    /// have sent through `providerID`: it is its provider (its message ids, a long message's other parts), one of
    /// its own-code sends went that way, or a resend holds its lease (handing it over to `providerID`, perhaps,
    /// with the vendor's answer not stored yet).
    static func sent(_ receipt: DeliveryReceipt, by providerID: String, in record: VerificationRecord, at now: Date)
        -> Bool
    {
        guard receipt.verificationID != nil else { return true }
        if record.providerID == providerID { return true }
        let state = record.providerState.ownCodeState
        if state?.sends.contains(where: { $0.provider == providerID }) == true { return true }
        // A resend holds the lease until its answer is stored: the message may be this one.
        return record.checkLeaseUntil.map { $0 > now } ?? false
    }
}
