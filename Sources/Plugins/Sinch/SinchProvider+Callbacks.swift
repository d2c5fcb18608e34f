import Foundation
import GatewayCore
import HTTPTypes

extension SinchProvider {
    /// Sinch's callbacks (docs/vendors/sinch.md §3.3), signed like requests to Sinch (§1.1) with the application's key
    /// and secret over the callback URL's path.
    ///
    /// - `VerificationRequestEvent` is answered on the spot, `{"action": "allow"}` or `{"action": "deny"}`,
    ///   from the gateway's own policy: a destination the gateway's country permissions block is denied; so
    ///   is a verification the gateway did not start (no reference of its own) unless the
    ///   `foreign_request_events` setting allows it, one that is no longer pending, or one whose number is
    ///   not the event's.
    /// - `VerificationResultEvent` updates the verification named by its Sinch id (an event for an id a
    ///   resend replaced is ignored).
    /// - `VerificationSmsDeliveredEvent` with `smsResult: Failed` ends it as failed.
    func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
    {
        let verdict = SinchSigning.verify(
            headers: callback.headerFields, method: callback.method.rawValue, body: callback.body,
            resources: [callback.url.path(percentEncoded: true)], applicationKey: configuration.applicationKey,
            secret: configuration.applicationSecret, now: clock.now, tolerance: configuration.callbackTolerance,
            allowBasic: false)
        if case .failure(let refusal) = verdict {
            logger.warning(
                "sinch callback refused", metadata: ["provider.id": "\(id)", "sinch.refusal": "\(refusal)"])
            throw GatewayError(.unauthorized, "The callback's Sinch signature is missing or wrong.")
        }
        guard let event = try? JSONDecoder().decode(SinchWire.Event.self, from: callback.body), let kind = event.event
        else {
            throw GatewayError.invalidRequest("The callback is not a Sinch verification event.")
        }
        switch kind {
        case SinchWire.requestEvent:
            let allow = await decide(event, lookup: lookup)
            logger.info(
                "sinch request event answered",
                metadata: ["provider.id": "\(id)", "sinch.action": "\(allow ? "allow" : "deny")"])
            return CallbackReply(
                updates: [], response: Self.json(SinchWire.EventAction(action: allow ? "allow" : "deny")))
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

    /// Allow or deny a request event. Sinch asks before it sends, so for a first start the gateway holds
    /// no record yet: the event's `reference` (the gateway's id, sent with the start) vouches for it.
    private func decide(_ event: SinchWire.Event, lookup: VerificationLookup) async -> Bool {
        guard let endpoint = event.identity?.endpoint, let number = try? PhoneNumber(parsing: endpoint) else {
            return false
        }
        guard lookup.permits(.phone(number)) else { return false }
        guard let reference = event.reference, let gatewayID = Self.gatewayID(fromReference: reference) else {
            // Not started by the gateway: the mobile SDK or another backend on the same application.
            return configuration.allowsForeignVerifications
        }
        let known: ProviderVerification?
        do {
            if let sinchID = event.id, let found = try await lookup(.reference(sinchID)) {
                known = found
            } else {
                known = try await lookup(.verificationID(gatewayID))
            }
        } catch {
            return false
        }
        guard let known else { return true }
        return known.status == .pending && known.destination.phoneNumber?.e164 == number.e164
    }

    /// The gateway id in a reference this plugin sent: `vf_…`, or `vf_…-N` after a resend.
    static func gatewayID(fromReference reference: String) -> String? {
        var id = Substring(reference)
        if let dash = id.lastIndex(of: "-"), id[id.index(after: dash)...].allSatisfy(\.isNumber),
            id.index(after: dash) < id.endIndex
        {
            id = id[..<dash]
        }
        guard id.hasPrefix("vf_"), id.count > 3,
            id.dropFirst(3).allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return nil }
        return String(id)
    }

    static func json(_ value: some Encodable) -> TransportResponse {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        let body = (try? JSONEncoder().encode(value)) ?? Data("{}".utf8)
        return TransportResponse(status: .ok, headerFields: headers, body: body)
    }
}
