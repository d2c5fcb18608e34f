import Foundation
import GatewayCore
import HTTPTypes

extension SinchProvider: CallbackReceivingProvider {
    /// Sinch's callbacks (docs/vendors/sinch.md §3.3), signed like requests to Sinch (§1.1) over the URL's path:
    /// a request event is answered `allow` or `deny` on the spot (``decide(_:lookup:)``), a result event updates
    /// the verification of its Sinch id, and a failed SMS delivery ends it as failed.
    func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
    {
        let verdict = SinchSigning.verify(
            headers: callback.headerFields, method: callback.method.rawValue, body: callback.body,
            resources: [callback.url.path(percentEncoded: true)], applicationKey: configuration.applicationKey,
            secret: configuration.applicationSecret, now: client.clock.now, tolerance: configuration.callbackTolerance,
            allowBasic: false)
        if case .failure(let refusal) = verdict { throw client.refusedCallback("\(refusal)") }
        let event = try client.callbackBody(SinchWire.Event.self, from: callback.body)
        guard let kind = event.event else { throw GatewayError.invalidRequest("The callback names no Sinch event.") }
        switch kind {
        case SinchWire.requestEvent:
            let allow = await decide(event, lookup: lookup)
            client.logger.info(
                "sinch request event answered",
                metadata: ["provider.id": "\(id)", "sinch.action": "\(allow ? "allow" : "deny")"])
            return CallbackReply(
                updates: [], response: .json(SinchWire.EventAction(action: allow ? "allow" : "deny")))
        case SinchWire.resultEvent:
            guard let sinchID = event.id, !sinchID.isEmpty, let status = event.status else {
                throw GatewayError.invalidRequest("The result event names no verification or status.")
            }
            let change = try self.change(
                from: SinchWire.StatusResponse(id: sinchID, method: event.method, status: status, reason: event.reason))
            return CallbackReply(updates: [ProviderUpdate(target: .reference(sinchID), change: change)])
        case SinchWire.smsDeliveredEvent:
            guard let sinchID = event.id, !sinchID.isEmpty else {
                throw GatewayError.invalidRequest("The delivery event names no verification.")
            }
            guard event.smsResult?.lowercased() == "failed" else { return CallbackReply(updates: []) }
            let change = VerificationChange(status: .failed, nextAction: .clear, reason: "SMS delivery failure")
            return CallbackReply(updates: [ProviderUpdate(target: .reference(sinchID), change: change)])
        default:
            // An event this gateway does not use: acknowledged so Sinch does not retry it.
            return CallbackReply(updates: [])
        }
    }

    /// Allow or deny a request event: denied for a destination the country permissions block, one no longer
    /// pending or for another number, or one the gateway did not start unless `foreign_request_events` allows it.
    /// Sinch asks before it sends, so for a first start the event's `reference` (the gateway's id) vouches for it.
    private func decide(_ event: SinchWire.Event, lookup: VerificationLookup) async -> Bool {
        guard let endpoint = event.identity?.endpoint, let number = try? PhoneNumber(parsing: endpoint) else {
            return false
        }
        guard lookup.permits(.phone(number)) else { return false }
        guard let reference = event.reference, let gatewayID = Self.gatewayID(fromReference: reference) else {
            // Not started by the gateway: the mobile SDK or another backend on the same application.
            return configuration.allowsForeignVerifications
        }
        var known: ProviderVerification?
        do {
            if let sinchID = event.id { known = try await lookup(.reference(sinchID)) }
            if known == nil { known = try await lookup(.verificationID(gatewayID)) }
        } catch {
            return false
        }
        guard let known else { return true }
        return known.status == .pending && known.destination.phoneNumber?.e164 == number.e164
    }

    /// The gateway id in a reference this plugin sent: `vf_…`, or `vf_…-N` after a resend.
    static func gatewayID(fromReference reference: String) -> String? {
        reference.wholeMatch(of: /(vf_[A-Za-z0-9]+)(?:-[0-9]+)?/).map { String($0.output.1) }
    }
}
