import Foundation
import GatewayCore
import Logging

/// The legacy Verify API (`api: v1`): form bodies with the key and secret in them, answers in HTTP 200 with
/// a `status` string (docs/vendors/vonage.md §1).
extension VonageProvider {
    func startV1(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        guard case .phone = request.destination else {
            throw GatewayError(.unsupportedChannel, "The Vonage v1 API verifies phone numbers only.")
        }
        guard
            let workflowID = configuration.workflowID
                ?? VonageWire.v1WorkflowID(channel: request.channel, fallbacks: request.fallbackChannels)
        else {
            throw GatewayError(
                .unsupportedChannel,
                "The Vonage v1 API offers sms, voice, or sms then voice; set `workflow_id` for its other workflows.")
        }
        let channels = VonageWire.v1Workflows[workflowID] ?? [request.channel]
        guard channels.first == request.channel else {
            throw GatewayError(
                .unsupportedChannel, "Vonage v1 workflow \(workflowID) starts with \(channels.first?.rawValue ?? "-").")
        }
        var fields = [
            ("number", Self.vonageNumber(request.destination)), ("brand", configuration.brand),
            ("workflow_id", String(workflowID)),
        ]
        let codeLength =
            request.codeLength.flatMap { VonageWire.v1CodeLengths.contains($0) ? $0 : nil }
            ?? configuration.codeLength
        if let codeLength { fields.append(("code_length", String(codeLength))) }
        let language = VonageWire.locale(from: request.locales)
        if let language { fields.append(("lg", language)) }
        let answer = try await callV1(.post, path: "/verify/json", fields: fields, operation: .start)
        guard let requestID = answer.requestID, !requestID.isEmpty else {
            throw client.malformed(.start, httpStatus: 200)
        }
        let state = try ProviderState(State(api: "v1", workflow: channels.map(\.rawValue), position: 0))
        return ProviderStartResult(
            reference: requestID, state: state, contentLanguage: language, channel: request.channel)
    }

    func checkV1(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        let requestID = try reference(of: verification)
        do {
            _ = try await callV1(
                .post, path: "/verify/check/json", fields: [("request_id", requestID), ("code", code)],
                operation: .check)
        } catch  where error.code == .incorrectCode {
            return ProviderCheckResult(status: .pending)
        }
        return ProviderCheckResult(status: .approved)
    }

    /// `trigger_next_event`: the next event of the workflow (which may repeat the channel).
    func nextEventV1(_ verification: ProviderVerification, asked: Channel?) async throws(GatewayError)
        -> ProviderStartResult
    {
        var state = state(of: verification)
        let position = state.position ?? 0
        let channels = state.channels
        let next = position + 1 < channels.count ? channels[position + 1] : nil
        let channel = try Self.requireNext(next, asked: asked)
        try await controlV1(verification, command: "trigger_next_event")
        state.position = position + 1
        return ProviderStartResult(reference: verification.reference, state: try ProviderState(state), channel: channel)
    }

    func controlV1(_ verification: ProviderVerification, command: String) async throws(GatewayError) {
        let requestID = try reference(of: verification)
        let operation: VendorOperation = command == "cancel" ? .cancel : .nextWorkflow
        let answer = try await callV1(
            .post, path: "/verify/control/json", fields: [("request_id", requestID), ("cmd", command)],
            operation: operation)
        guard answer.command == nil || answer.command == command else {
            throw client.malformed(operation, httpStatus: 200)
        }
    }

    /// `search`: the status word, and the channel of the latest event.
    func searchV1(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationChange {
        let requestID = try reference(of: verification)
        let answer = try await callV1(
            .get, path: "/verify/search/json", fields: [("request_id", requestID)], operation: .search)
        let statuses: [String: VerificationStatus] = [
            "IN PROGRESS": .pending, "SUCCESS": .approved, "FAILED": .failed, "EXPIRED": .expired,
            "CANCELLED": .canceled,
        ]
        guard let status = statuses[answer.status] else { throw client.malformed(.search, httpStatus: 200) }
        var change = VerificationChange(status: status, reason: status == .pending ? nil : answer.status)
        if let events = answer.events, let last = events.last {
            change.channel = VonageWire.channel(v1Event: last.type)
            var state = state(of: verification)
            if state.position != events.count - 1 {
                state.position = events.count - 1
                change.state = try ProviderState(state)
            }
        }
        return change
    }
}
