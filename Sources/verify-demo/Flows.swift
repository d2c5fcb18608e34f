import Foundation
import GatewayClient
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One flow per seed: the back end starts, `VerificationFlow` runs the app's side to the end.
extension Demo {
    /// The app's flow for a verification its back end started. With a client secret, a verification the vendor
    /// finished (a push, say) is no longer the app's to read: the app asks its back end, which reads it with
    /// the API key.
    func appFlow(
        for started: Verification, handlers: VerificationFlow.Handlers,
        polling: VerificationFlow.Polling = .init()
    ) throws -> VerificationFlow {
        var handlers = handlers
        let backend = backend
        handlers.outcome = { id in try await backend.status(id) }
        return VerificationFlow(client: try app(for: started), handlers: handlers, polling: polling)
    }

    /// Twilio SMS: a wrong code first (`incorrect_code` with the attempts left), then the one from the SMS.
    func twilioSMS() async throws -> String {
        let to = "+14155550100"
        let before = try await messageCount(to: to)
        let started = try await backend.start(StartRequest(to: to, locales: ["es-ES", "en-US"], provider: "twilio"))
        try expect(started.nextAction == nil && started.contentLanguage == "es", "start: \(started)")
        let refusals = Mutex<[GatewayAPIError]>([])
        let flow = try appFlow(
            for: started,
            handlers: .init(enterCode: { prompt in
                if let error = prompt.lastError { refusals.withLock { $0.append(error) } }
                guard refusals.withLock({ $0.isEmpty }), prompt.lastError == nil else {
                    return .code(try await nextMessage(to: to, after: before).code ?? "")
                }
                return .code("000000")
            }))
        let final = try await flow.run(started)
        let refused = refusals.withLock { $0 }
        try expect(final.status == .approved && final.token != nil, "final: \(final)")
        try expect(
            refused.map(\.code) == [.incorrectCode] && refused.first?.attemptsRemaining == 4
                && refused.first?.errorClass == .verification,
            "the wrong code: \(refused)")
        return "approved \(final.id) after \(refused[0].code) (4 attempts left), token \(Self.shortened(final.token))"
    }

    /// Nexmo's cancel, through Twilio (whose cancel is immediate): the user gives up at the code prompt.
    func twilioCancel() async throws -> String {
        let started = try await backend.start(StartRequest(to: "+14155550102", provider: "twilio"))
        let flow = try appFlow(for: started, handlers: .init(enterCode: { _ in .cancel }))
        let final = try await flow.run(started)
        try expect(final.status == .canceled, "final: \(final)")
        do {
            _ = try await backend.check(final.id, code: "123456")
            throw DemoFailure("a check after the cancel was accepted")
        } catch let error as GatewayAPIError {
            try expect(error.code == .canceled && error.httpStatus == 409, "a check after the cancel: \(error)")
        }
        return "canceled \(final.id); a later check is \(ErrorCode.canceled) (409)"
    }

    /// Sinch SMS with the app's languages: Sinch picks the first it has and says which.
    func sinchSMS() async throws -> String {
        let to = "+46701234567"
        let before = try await messageCount(to: to)
        let started = try await backend.start(StartRequest(to: to, locales: ["es-ES", "sv-SE"], provider: "sinch"))
        try expect(
            started.contentLanguage == "sv-SE", "content language: \(String(describing: started.contentLanguage))")
        let flow = try appFlow(
            for: started,
            handlers: .init(enterCode: { _ in .code(try await nextMessage(to: to, after: before).code ?? "") }))
        let final = try await flow.run(started)
        try expect(final.status == .approved && final.token != nil, "final: \(final)")
        return "approved \(final.id), content language \(started.contentLanguage ?? "-")"
    }

    /// Sinch flash call: the app intercepts the missed call and checks its caller number.
    func sinchFlashCall() async throws -> String {
        let to = "+46701234568"
        let before = try await messageCount(to: to, kind: "flash_call")
        let started = try await backend.start(StartRequest(to: to, channel: .flashcall, provider: "sinch"))
        guard case .interceptCall(let call) = started.nextAction else {
            throw DemoFailure("next action: \(String(describing: started.nextAction))")
        }
        let caller = Mutex<String?>(nil)
        let flow = try appFlow(
            for: started,
            handlers: .init(
                enterCode: { _ in throw DemoFailure("asked for a code: the call was intercepted") },
                interceptCall: { interception in
                    // The phone's call log: the missed call's number (an app reads it with CallKit's
                    // call directory extension or the platform's call-screening API).
                    let number = try await nextMessage(to: to, after: before, kind: "flash_call").code
                    caller.withLock { $0 = number }
                    return number
                }))
        let final = try await flow.run(started)
        try expect(final.status == .approved && final.token != nil, "final: \(final)")
        return
            "approved \(final.id) with the caller \(caller.withLock { $0 } ?? "-") (pattern \(call.callerPattern), \(call.timeoutSeconds) s)"
    }

    /// Vonage silent authentication: the app opens the URL (over mobile data on a phone), its redirects end in
    /// a code, and the flow checks it.
    func vonageSilentAuth() async throws -> String {
        let started = try await backend.start(
            StartRequest(to: "+14155550124", channel: .silentAuth, fallbackChannels: [.sms], provider: "vonage"))
        guard case .openURL(let opening) = started.nextAction, opening.cellularOnly else {
            throw DemoFailure("next action: \(String(describing: started.nextAction))")
        }
        let flow = try appFlow(
            for: started,
            handlers: .init(
                enterCode: { _ in throw DemoFailure("asked for a code: silent auth should have ended it") },
                openURL: { opening in
                    // On a phone: a request bound to the cellular interface. Here: the sandbox's network check.
                    let (body, _) = try await URLSession.shared.data(from: opening.url)
                    return body
                }))
        let final = try await flow.run(started)
        try expect(final.status == .approved && final.token != nil, "final: \(final)")
        return "approved \(final.id) by the code at the end of the redirects"
    }

    /// IDaaS: a slider before the SMS. A wrong position first (a fresh slider, nothing sent), then the
    /// position solved from the PNGs, then the SMS code.
    func idaasSlider() async throws -> String {
        let to = "+8613800138000"
        let before = try await messageCount(to: to)
        let context = ClientContext(
            ip: "203.0.113.7", userAgent: "verify-demo (iPhone; CPU iPhone OS 17_4 like Mac OS X)",
            deviceID: "verify-demo-device-1", platform: .ios)
        let started = try await backend.start(
            StartRequest(to: to, locales: ["zh-CN"], provider: "idaas", clientContext: context))
        try expect(started.sends == 0, "nothing may be sent before the slider: \(started)")
        let answers = Mutex<[(x: Int, refused: Bool)]>([])
        let flow = try appFlow(
            for: started,
            handlers: .init(
                enterCode: { _ in
                    try await expect(messageCount(to: to) == before + 1, "one SMS after the slider")
                    return .code(try await nextMessage(to: to, after: before).code ?? "")
                },
                solveChallenge: { prompt in
                    let images = prompt.challenge.pngImages
                    guard prompt.challenge.kind == "slider_captcha", let background = images["background"],
                        let piece = images["piece"], prompt.challenge.answerFields["x"] != nil
                    else {
                        throw DemoFailure("not a slider: \(prompt.challenge.kind) \(prompt.challenge.answerFields)")
                    }
                    let solved = try SliderSolver.solve(background: background, piece: piece)
                    // The first answer is deliberately off by 60 pixels: refused, with a new slider.
                    let x = answers.withLock { $0.isEmpty } ? (solved < 150 ? solved + 60 : solved - 60) : solved
                    answers.withLock {
                        if !$0.isEmpty { $0[$0.count - 1].refused = prompt.previousAnswerRefused }
                        $0.append((x, false))
                    }
                    try await expect(messageCount(to: to) == before, "a wrong slider must send nothing")
                    return ["x": .number(Double(x))]
                }))
        let final = try await flow.run(started)
        let tried = answers.withLock { $0 }
        try expect(final.status == .approved && final.token != nil, "final: \(final)")
        try expect(tried.count == 2 && tried[0].refused, "the slider answers: \(tried)")
        try expect(
            final.providerTokens["id_token"]?.stringValue != nil && final.providerTokens["session_token"] != nil,
            "IDaaS's tokens: \(final.providerTokens.keys.sorted())")
        return
            "approved \(final.id): x=\(tried[0].x) refused, x=\(tried[1].x) solved from the PNGs, IDaaS id_token and session_token"
    }

    /// Firebase: the app's proof (reCAPTCHA / App Attest on a phone; any token in the sandbox) with the start.
    func firebaseSMS() async throws -> String {
        let to = "+447400123456"
        do {
            _ = try await backend.start(StartRequest(to: to, provider: "firebase"))
            throw DemoFailure("a Firebase start without a proof was accepted")
        } catch let error as GatewayAPIError {
            try expect(error.code == .appVerificationRequired && error.httpStatus == 400, "without a proof: \(error)")
        }
        let before = try await messageCount(to: to)
        let started = try await backend.start(
            StartRequest(
                to: to, locales: ["fr-FR"],
                appVerification: AppVerification(kind: .recaptcha, token: "verify-demo-token"),
                provider: "firebase"))
        let flow = try appFlow(
            for: started,
            handlers: .init(enterCode: { _ in .code(try await nextMessage(to: to, after: before).code ?? "") }))
        let final = try await flow.run(started)
        try expect(final.status == .approved && final.token != nil, "final: \(final)")
        try expect(
            final.providerTokens["idToken"]?.stringValue != nil, "Firebase's tokens: \(final.providerTokens.keys)")
        return "approved \(final.id) (no proof: \(ErrorCode.appVerificationRequired)), Firebase idToken"
    }

    /// Twilio Verify Push: the back end fetches an access token, the phone enrols a factor with it, a push
    /// start waits for the phone's answer while the flow polls with backoff.
    func twilioPush(approve: Bool) async throws -> String {
        let identity = "verify-demo-" + UUID().uuidString.prefix(8).lowercased()
        let phone = SimulatedPhone(identity: identity)
        let token = try await backend.factorAccessToken(identity: identity, friendlyName: "verify-demo phone")
        let factor = try await phone.enrol(with: token)
        let before = try await messageCount(to: identity, kind: "push")
        let started = try await backend.start(
            StartRequest(
                to: identity, channel: .push,
                pushPrompt: PushPrompt(
                    message: "Sign in to Example?", details: [(label: "IP", value: "203.0.113.9")],
                    hiddenDetails: ["session": "s-42"])))
        guard case .awaitApproval(let wait) = started.nextAction, wait.message == "Sign in to Example?" else {
            throw DemoFailure("next action: \(String(describing: started.nextAction))")
        }
        let requested = Mutex(0)
        let flow = try appFlow(
            for: started,
            handlers: .init(
                enterCode: { _ in throw DemoFailure("asked for a code for a push") },
                approvalRequested: { _ in requested.withLock { $0 += 1 } }),
            polling: .init(initialInterval: .milliseconds(500), maximumInterval: .seconds(2)))
        // The phone and the app at once: the push arrives, the user taps a moment later, while the flow polls.
        // A phone that fails ends the flow too (its task is cancelled, which cancels the verification).
        let final = try await withThrowingTaskGroup(of: Verification?.self) { group in
            group.addTask {
                let push = try await nextMessage(to: identity, after: before, kind: "push")
                let payload = try JSONDecoder().decode(JSONValue.self, from: Data(push.text.utf8))
                guard let challenge = payload["challenge_sid"]?.stringValue else {
                    throw DemoFailure("push payload: \(push.text)")
                }
                try await Task.sleep(for: .seconds(2))
                try await phone.answer(challengeSID: challenge, approve: approve)
                return nil
            }
            group.addTask { try await flow.run(started) }
            var final: Verification?
            for try await result in group where result != nil { final = result }
            guard let final else { throw DemoFailure("the flow returned nothing") }
            return final
        }
        try expect(requested.withLock { $0 } == 1, "approvalRequested must be called once")
        if approve {
            try expect(final.status == .approved && final.token != nil, "final: \(final)")
        } else {
            try expect(final.status == .denied && final.token == nil, "final: \(final)")
        }
        return "\(final.status.rawValue) \(final.id) on the phone (factor \(factor)), seen by the app's flow"
    }
}
