import Foundation
import GatewayClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Silent first over the sandbox's CAMARA operator (docs/network-signals.md): the app opens the URL, the
/// operator recognises the device's connection and sends its browser back to the gateway, which asks the operator
/// whether the number is the device's.
extension Demo {
    /// A device whose mobile data connection belongs to the number: approved with no code.
    func camaraSilentAuth() async throws -> String {
        let started = try await backend.start(
            StartRequest(to: "+447400555101", channel: .silentAuth, fallbackChannels: [.sms], provider: "camara"))
        guard case .openURL(let opening) = started.nextAction, opening.cellularOnly else {
            throw DemoFailure("next action: \(String(describing: started.nextAction))")
        }
        let flow = try appFlow(
            for: started,
            handlers: .init(
                enterCode: { _ in throw DemoFailure("asked for a code: the operator matched the number") },
                openURL: { opening in try await Self.openOverMobileData(opening) }))
        let final = try await flow.run(started)
        try expect(final.status == .approved && final.token != nil && final.provider == "camara", "final: \(final)")
        return "approved \(final.id) by the operator, no code"
    }

    /// A device on Wi-Fi (the operator cannot recognise it): the silent step fails and the verification moves to
    /// an SMS code through the route's SMS providers, which the flow asks for and checks.
    func camaraSilentFallback() async throws -> String {
        let to = "+447400555102"
        try await setSandboxNumber(to, #"{"on_wifi": true}"#)
        let before = try await messageCount(to: to, kind: "sms")
        let started = try await backend.start(
            StartRequest(to: to, channel: .silentAuth, fallbackChannels: [.sms], provider: "camara"))
        let flow = try appFlow(
            for: started,
            handlers: .init(
                enterCode: { prompt in
                    guard prompt.verification.channel == .sms else {
                        throw DemoFailure("asked for a code on \(prompt.verification.channel)")
                    }
                    return .code(try await nextMessage(to: to, after: before, kind: "sms").code ?? "")
                },
                openURL: { opening in try await Self.openOverMobileData(opening) }))
        let final = try await flow.run(started)
        try expect(final.status == .approved && final.channel == .sms && final.provider != "camara", "final: \(final)")
        return "silent step failed (Wi-Fi); approved \(final.id) by an SMS code from \(final.provider)"
    }

    /// On a phone, a request bound to the cellular interface that follows the operator's redirects. Here: the
    /// sandbox operator, which recognises the device by the number the gateway names.
    static func openOverMobileData(_ opening: URLOpening) async throws -> Data {
        let (body, _) = try await URLSession.shared.data(from: opening.url)
        return body
    }

    /// Sets what the sandbox operator's network says of `number` (docs/network-signals.md, "The sandbox").
    func setSandboxNumber(_ number: String, _ json: String) async throws {
        let encoded = number.replacingOccurrences(of: "+", with: "%2B")
        guard let url = URL(string: options.base.absoluteString + "/sandbox/camara/sandbox/numbers/" + encoded) else {
            throw DemoFailure("no URL for the sandbox control")
        }
        var request = URLRequest(url: url)
        request.httpMethod = "PUT"
        request.httpBody = Data(json.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        try expect((response as? HTTPURLResponse)?.statusCode == 200, "sandbox control answered \(response)")
    }
}
