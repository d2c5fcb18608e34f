import Foundation
import GatewayCore
import HTTPTypes
import Logging

extension VonageProvider: CallbackReceivingProvider {
    /// The v2 workflow for a request: its channel, then its fallback channels, each with the destination.
    func workflowV2(_ request: StartVerification) throws(GatewayError) -> [VonageWire.WorkflowStep] {
        let channels = [request.channel] + request.fallbackChannels
        guard channels.count <= VonageWire.maxWorkflowLength else {
            throw GatewayError.invalidRequest(
                "A Vonage workflow holds at most \(VonageWire.maxWorkflowLength) channels (the channel and 2 fallbacks)."
            )
        }
        if let late = channels.dropFirst().first(where: { $0 == .silentAuth }) {
            throw GatewayError.invalidRequest("Vonage runs \(late.rawValue) only as the first channel of a workflow.")
        }
        let to = Self.vonageNumber(request.destination)
        var steps: [VonageWire.WorkflowStep] = []
        for channel in channels {
            guard let name = VonageWire.v2Channel(channel), capabilities.channels.contains(channel) else {
                throw .unsupported(channel, by: "Vonage Verify")
            }
            try request.destination.requireFits(channel)
            steps.append(
                VonageWire.WorkflowStep(
                    channel: name, to: to, from: channel == .whatsapp ? configuration.whatsappFrom : nil))
        }
        return steps
    }

    func startV2(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        let workflow = try workflowV2(request)
        let codeLength =
            request.codeLength.flatMap { VonageWire.v2CodeLengths.contains($0) ? $0 : nil }
            ?? configuration.codeLength
        let body = VonageWire.StartRequest(
            brand: configuration.brand, workflow: workflow, locale: VonageWire.locale(from: request.locales),
            channelTimeout: configuration.channelTimeout, codeLength: codeLength, clientRef: nil)
        let response = try await callV2(.post, path: "/v2/verify", json: body, operation: .start)
        let started = try client.decode(VonageWire.StartResponse.self, from: response, operation: .start)
        guard !started.requestID.isEmpty else { throw client.malformed(.start, httpStatus: response.status.code) }
        let channels = [request.channel] + request.fallbackChannels
        let state = try ProviderState(State(api: "v2", workflow: channels.map(\.rawValue), position: 0))
        var nextAction: NextAction?
        if request.channel == .silentAuth {
            let url = try client.required(
                started.checkURL, where: { URL(string: $0)?.scheme?.hasPrefix("http") == true }, .start, in: response)
            nextAction = .openURL(NextAction.URLOpening(url: url, cellularOnly: true))
        }
        client.logger.debug(
            "vonage workflow started",
            metadata: [
                "provider.id": "\(id)", "workflow": "\(channels.map(\.rawValue).joined(separator: ","))",
                "to": "\(request.destination.masked)",
            ])
        return ProviderStartResult(
            reference: started.requestID, state: state, contentLanguage: body.locale, channel: request.channel,
            nextAction: nextAction)
    }

    func checkV2(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        let requestID = try reference(of: verification)
        let response: TransportResponse
        do {
            response = try await callV2(
                .post, path: "/v2/verify/" + requestID, json: VonageWire.CheckRequest(code: code), operation: .check)
        } catch  where error.code == .incorrectCode {
            // Vonage answers a wrong code 400; the workflow goes on.
            return ProviderCheckResult(status: .pending)
        }
        let checked = try client.decode(VonageWire.CheckResponse.self, from: response, operation: .check)
        guard checked.status == "completed" else { throw client.malformed(.check, httpStatus: response.status.code) }
        return ProviderCheckResult(status: .approved)
    }

    func nextWorkflowV2(_ verification: ProviderVerification, asked: Channel?) async throws(GatewayError)
        -> ProviderStartResult
    {
        let requestID = try reference(of: verification)
        let state = state(of: verification)
        let next = try Self.requireNext(Self.next(after: verification.channel, in: state.channels), asked: asked)
        _ = try await callV2(.post, path: "/v2/verify/\(requestID)/next_workflow", operation: .nextWorkflow)
        return ProviderStartResult(reference: requestID, channel: next)
    }

    func cancelV2(_ verification: ProviderVerification) async throws(GatewayError) {
        let requestID = try reference(of: verification)
        _ = try await callV2(.delete, path: "/v2/verify/" + requestID, operation: .cancel)
    }

    // MARK: callbacks

    /// Checks the callback's HS256 JWT against the signature secret, then reads what changed: an `event` for
    /// a channel that ended moves the verification to the workflow's next channel; silent auth's
    /// `action_pending` sets the URL to open; the `summary` settles the verification.
    func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
    {
        guard let secret = configuration.signatureSecret else {
            throw GatewayError(.notFound, "Provider \(id) takes no callbacks (no signature secret).")
        }
        if let problem = VonageJWT.callbackProblem(
            authorization: callback.headerFields[.authorization], body: callback.body, secret: secret,
            now: client.clock.now)
        {
            throw client.refusedCallback(problem)
        }
        let event = try client.callbackBody(VonageWire.Callback.self, from: callback.body)
        let target = ProviderUpdate.Target.reference(event.requestID)
        guard let verification = try await lookup(target) else {
            return CallbackReply(updates: [])
        }
        let change = Self.change(for: event, verification: verification, state: state(of: verification))
        return CallbackReply(updates: change.map { [ProviderUpdate(target: target, change: $0)] } ?? [])
    }

    /// What a v2 callback changes for `verification`; `nil` when nothing.
    static func change(for event: VonageWire.Callback, verification: ProviderVerification, state: State)
        -> VerificationChange?
    {
        if event.type == "summary" {
            let statuses: [String: VerificationStatus] = [
                "completed": .approved, "failed": .failed, "user_rejected": .failed, "expired": .expired,
                "blocked": .blocked, "cancelled": .canceled, "canceled": .canceled,
            ]
            return statuses[event.status].map { VerificationChange(status: $0, reason: event.status) }
        }
        guard let name = event.channel, let channel = VonageWire.channel(v2: name) else { return nil }
        switch event.status {
        case "completed":
            return VerificationChange(status: .approved, channel: channel, reason: "completed")
        case "action_pending":
            guard let url = event.action?.checkURL else { return nil }
            return VerificationChange(nextAction: .set(.openURL(NextAction.URLOpening(url: url, cellularOnly: true))))
        case "expired", "failed", "user_rejected", "blocked":
            // The step ended; Vonage went on with the next one, if any (the summary settles the rest).
            guard channel == verification.channel, let next = next(after: channel, in: state.channels) else {
                return nil
            }
            return VerificationChange(channel: next, nextAction: .clear, reason: "\(name)_\(event.status)")
        default:
            return nil
        }
    }
}
