import Foundation
import GatewayCore
import Logging

/// Vonage (formerly Nexmo) Verify: v2 workflows by default, the legacy v1 API with `api: v1`. A v2 start sends the
/// channel and its fallbacks as one workflow; Vonage moves on by itself after its channel timeout and says so in
/// signed status callbacks. The gateway's resend is Vonage's "next workflow".
struct VonageProvider: VendorHTTPProvider, ResendingProvider, CancelingProvider, StatusReportingProvider {
    /// What the plugin keeps: the workflow's channels in order (v1 repeats channels: workflow 1 is sms, voice,
    /// voice), and for v1 the index of the event in progress.
    struct State: Codable, Sendable, Equatable {
        var api: String
        var workflow: [String]
        var position: Int?

        var channels: [Channel] { workflow.compactMap(Channel.init(rawValue:)) }
    }

    let configuration: VonageConfiguration
    /// A 5xx may hide an accepted send (Vonage does not say).
    let client: VendorHTTPClient

    init(context: ProviderContext) throws(ConfigurationError) {
        configuration = try VonageConfiguration(settings: context.settings, providerID: context.providerID)
        client = VendorHTTPClient(
            vendor: "Vonage", context: context, baseURL: configuration.baseURL, serverErrorMaySend: true)
    }

    var capabilities: ProviderCapabilities {
        switch configuration.api {
        case .v2:
            var channels: Set<Channel> = [.sms, .voice, .email, .silentAuth]
            if configuration.whatsappFrom != nil { channels.insert(.whatsapp) }
            // Silent auth ends in a code the backend checks ([SPEC-V2-CUR] `silentAuthCheck`): not codeless. v2 has
            // no status call (its callbacks keep a verification current), and without the signature secret no
            // callback can be verified.
            return ProviderCapabilities(
                channels: channels, resendCanChangeChannel: true, nativeWorkflows: true,
                vendorMaxAttempts: VonageWire.maxChecks,
                withheld: configuration.signatureSecret == nil ? [.status, .callbacks] : [.status])
        case .v1:
            return ProviderCapabilities(
                channels: [.sms, .voice], resendKeepsCode: true, resendCanChangeChannel: true, nativeWorkflows: true,
                vendorMaxAttempts: VonageWire.maxChecks, withheld: [.callbacks])
        }
    }

    // MARK: operations

    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        switch configuration.api {
        case .v2: return try await startV2(request)
        case .v1: return try await startV1(request)
        }
    }

    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        guard (4...10).contains(code.count), code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw GatewayError.invalidRequest("The code must be 4 to 10 letters or digits.")
        }
        switch configuration.api {
        case .v2: return try await checkV2(verification, code: code)
        case .v1: return try await checkV1(verification, code: code)
        }
    }

    /// Vonage's next workflow step: the channel is Vonage's next, never one the caller picks.
    func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        switch configuration.api {
        case .v2: return try await nextWorkflowV2(verification, asked: request.channel)
        case .v1: return try await nextEventV1(verification, asked: request.channel)
        }
    }

    func cancel(_ verification: ProviderVerification) async throws(GatewayError) {
        switch configuration.api {
        case .v2: try await cancelV2(verification)
        case .v1: try await controlV1(verification, command: "cancel")
        }
    }

    func status(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationChange {
        switch configuration.api {
        case .v2:
            // Withheld for v2 (``capabilities``): the engine never asks.
            throw GatewayError(
                .invalidRequest, "Vonage Verify v2 has no status lookup; its callbacks keep the verification current.")
        case .v1: return try await searchV1(verification)
        }
    }

    // MARK: shared helpers

    /// The stored Vonage request id.
    func reference(of verification: ProviderVerification) throws(GatewayError) -> String {
        try client.reference(of: verification) {
            (1...64).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    func state(of verification: ProviderVerification) -> State {
        (try? verification.state.decode(State.self))
            ?? State(api: configuration.api.rawValue, workflow: [verification.channel.rawValue], position: 0)
    }

    /// The channel that follows `current` in the workflow, for v2 (channels are distinct).
    static func next(after current: Channel, in workflow: [Channel]) -> Channel? {
        guard let index = workflow.firstIndex(of: current), index + 1 < workflow.count else { return nil }
        return workflow[index + 1]
    }

    /// Refuses a resend to a channel other than Vonage's next one.
    static func requireNext(_ next: Channel?, asked: Channel?) throws(GatewayError) -> Channel {
        guard let next else {
            throw GatewayError(
                .invalidState, "The Vonage workflow has no further channel; start a new verification.")
        }
        if let asked, asked != next {
            throw GatewayError(
                .unsupportedChannel,
                "Vonage runs its workflow in order: the next channel is \(next.rawValue), not \(asked.rawValue).")
        }
        return next
    }

    /// E.164 without `+`, as Vonage takes numbers.
    static func vonageNumber(_ destination: Destination) -> String { String(destination.value.trimmingPrefix("+")) }
}
