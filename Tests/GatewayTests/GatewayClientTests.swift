import Foundation
import GatewayClient
import Synchronization
import Testing

@testable import verify_demo

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// GatewayClient (the generated client and its hand-written layer) and its flow driver against a live sandbox
/// gateway over real HTTP, through URLSession as on a phone. This file imports the client only, as an app does.
@Suite("GatewayClient against a live sandbox gateway")
struct GatewayClientTests {
    /// The newest code the sandbox sent to `to` (the user reading the SMS).
    static func code(_ client: VerificationClient, to: String, kind: String? = nil) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let code = try await client.sandboxOutbox(to: to).last(where: { kind == nil || $0.kind == kind })?.code {
                return code
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw DemoFailure("no message to \(to)")
    }

    @Test("start, a wrong code as a typed error, the right code through the flow, the token once, resend refused")
    func codeFlow() async throws {
        try await withClientTestGateway { base, key in
            let client = VerificationClient(baseURL: base, credential: .apiKey(key))
            let to = "+14155550100"
            let started = try await client.start(StartRequest(to: to, channel: .sms, locales: ["es-ES", "en-US"]))
            #expect(started.status == .pending && started.provider == "twilio" && started.sends == 1)
            #expect(started.contentLanguage == "es" && started.nextAction == nil && started.token == nil)

            let wrong = await #expect(throws: GatewayAPIError.self) {
                try await client.check(started.id, code: "000000")
            }
            #expect(wrong?.code == .incorrectCode && wrong?.httpStatus == 422 && wrong?.errorClass == .verification)
            #expect(wrong?.attemptsRemaining == 4 && wrong?.retryable == false)
            #expect(wrong?.requestID?.hasPrefix("req_") == true && wrong?.vendor == nil)

            let prompts = Mutex<[Int]>([])
            let flow = VerificationFlow(
                client: client,
                handlers: .init(enterCode: { prompt in
                    prompts.withLock { $0.append(prompt.verification.attemptsRemaining) }
                    return .code(try await Self.code(client, to: to))
                }))
            let final = try await flow.run(try await client.status(started.id))
            #expect(final.status == .approved && final.token?.hasPrefix("eyJ") == true)
            #expect(prompts.withLock { $0 } == [4])
            let read = try await client.status(final.id)
            #expect(read.status == .approved && read.token == nil, "the token is answered once")
            let resend = await #expect(throws: GatewayAPIError.self) { try await client.resend(final.id) }
            #expect(resend?.code == .alreadyApproved && resend?.httpStatus == 409)
        }
    }

    @Test("refusals are typed: a wrong key, a bad number, an unknown verification; the flow returns final states")
    func refusals() async throws {
        try await withClientTestGateway { base, key in
            let stranger = VerificationClient(baseURL: base, credential: .apiKey("sk_not_a_key_of_this_gateway"))
            let unauthorized = await #expect(throws: GatewayAPIError.self) {
                try await stranger.start(StartRequest(to: "+14155550100"))
            }
            #expect(unauthorized?.code == .unauthorized && unauthorized?.httpStatus == 401)
            #expect(unauthorized?.errorClass == .caller)

            let client = VerificationClient(baseURL: base, credential: .apiKey(key))
            let invalid = await #expect(throws: GatewayAPIError.self) {
                try await client.start(StartRequest(to: "+1 not a number"))
            }
            #expect(invalid?.code == .invalidPhoneNumber || invalid?.code == .invalidRequest)
            #expect(invalid?.httpStatus == 400)
            let missing = await #expect(throws: GatewayAPIError.self) {
                try await client.status("vf_0123456789abcdef0123456789abcdef")
            }
            #expect(missing?.code == .notFound && missing?.httpStatus == 404)

            // Five wrong codes: the flow returns the final state instead of throwing it.
            let started = try await client.start(StartRequest(to: "+14155550105"))
            let flow = VerificationFlow(client: client, handlers: .init(enterCode: { _ in .code("000000") }))
            let final = try await flow.run(started)
            #expect(final.status == .maxAttemptsReached && final.token == nil)

            // The user cancels at the prompt.
            let other = try await client.start(StartRequest(to: "+14155550106"))
            let canceled = try await VerificationFlow(client: client, handlers: .init(enterCode: { _ in .cancel }))
                .run(other)
            #expect(canceled.status == .canceled)
        }
    }

    @Test("two clients check the right code at once: exactly one approval carries the token, the other is typed")
    func concurrentChecks() async throws {
        try await withClientTestGateway { base, key in
            let client = VerificationClient(baseURL: base, credential: .apiKey(key))
            for round in 0..<5 {
                let to = "+1415555012\(round)"
                let started = try await client.start(StartRequest(to: to))
                let code = try await Self.code(client, to: to)
                let answers = try await withThrowingTaskGroup(of: Result<Verification, GatewayAPIError>.self) { group in
                    for _ in 0..<2 {
                        group.addTask {
                            do { return .success(try await client.check(started.id, code: code)) } catch let error
                                as GatewayAPIError
                            { return .failure(error) }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let approvals = answers.compactMap { try? $0.get() }
                let refusals = answers.compactMap { if case .failure(let error) = $0 { error } else { nil } }
                #expect(approvals.count == 1 && approvals.first?.status == .approved && approvals.first?.token != nil)
                #expect(refusals.map(\.code) == [.alreadyApproved] && refusals.first?.httpStatus == 409)
            }
        }
    }

    @Test("IDaaS: the flow shows the slider, a wrong answer comes back with a fresh one, the solved one sends the SMS")
    func sliderFlow() async throws {
        try await withClientTestGateway { base, key in
            let client = VerificationClient(baseURL: base, credential: .apiKey(key))
            let to = "+8613800138000"
            let started = try await client.start(StartRequest(to: to, locales: ["zh-CN"], provider: "idaas"))
            guard case .solveChallenge(let first) = started.nextAction else {
                Issue.record("no challenge: \(started)")
                return
            }
            #expect(first.kind == "slider_captcha" && Set(first.pngImages.keys) == ["background", "piece"])
            #expect(first.answerFields["x"] != nil && started.sends == 0)
            let prompts = Mutex<[Bool]>([])
            let flow = VerificationFlow(
                client: client,
                handlers: .init(
                    enterCode: { _ in .code(try await Self.code(client, to: to)) },
                    solveChallenge: { prompt in
                        let images = prompt.challenge.pngImages
                        let x = try SliderSolver.solve(
                            background: try #require(images["background"]), piece: try #require(images["piece"]))
                        let isFirst = prompts.withLock {
                            $0.append(prompt.previousAnswerRefused)
                            return $0.count == 1
                        }
                        return ["x": .number(Double(isFirst ? (x < 150 ? x + 60 : x - 60) : x))]
                    }))
            let final = try await flow.run(started)
            #expect(final.status == .approved && final.token != nil && final.sends == 1)
            #expect(prompts.withLock { $0 } == [false, true])
            #expect(final.providerTokens["session_token"]?.stringValue != nil)
        }
    }

    @Test("Sinch: a flash call intercepted by the app; seamless finished by the vendor while the flow polls")
    func sinchFlows() async throws {
        try await withClientTestGateway { base, key in
            let client = VerificationClient(baseURL: base, credential: .apiKey(key))
            let flash = try await client.start(StartRequest(to: "+46701234568", channel: .flashcall, provider: "sinch"))
            guard case .interceptCall(let call) = flash.nextAction else {
                Issue.record("no intercept_call: \(flash)")
                return
            }
            #expect(call.timeoutSeconds > 0 && !call.callerPattern.isEmpty)
            let approvedCall = try await VerificationFlow(
                client: client,
                handlers: .init(
                    enterCode: { _ in throw DemoFailure("asked for a code") },
                    interceptCall: { _ in try await Self.code(client, to: "+46701234568", kind: "flash_call") })
            ).run(flash)
            #expect(approvedCall.status == .approved && approvedCall.token != nil)

            let seamless = try await client.start(
                StartRequest(to: "+46701234569", channel: .silentAuth, provider: "sinch"))
            let opened = Mutex<[URLOpening]>([])
            let approved = try await VerificationFlow(
                client: client,
                handlers: .init(
                    enterCode: { _ in throw DemoFailure("asked for a code") },
                    openURL: { opening in
                        opened.withLock { $0.append(opening) }
                        return try await URLSession.shared.data(from: opening.url).0
                    }),
                polling: .init(initialInterval: .milliseconds(200))
            ).run(seamless)
            #expect(approved.status == .approved && approved.token != nil)
            #expect(opened.withLock { $0.map(\.cellularOnly) } == [true])
        }
    }

    @Test("Verify Push: the flow waits while the phone approves, and a cancelled wait cancels the verification")
    func pushFlows() async throws {
        try await withClientTestGateway { base, key in
            let client = VerificationClient(baseURL: base, credential: .apiKey(key))
            let identity = "client-test-" + UUID().uuidString.prefix(8).lowercased()
            let phone = SimulatedPhone(identity: identity)
            try await phone.enrol(with: try await client.factorAccessToken(identity: identity))

            let started = try await client.start(
                StartRequest(to: identity, channel: .push, pushPrompt: PushPrompt(message: "Sign in?")))
            guard case .awaitApproval(let wait) = started.nextAction else {
                Issue.record("no await_approval: \(started)")
                return
            }
            #expect(wait.message == "Sign in?")
            let requested = Mutex(0)
            let flow = VerificationFlow(
                client: client,
                handlers: .init(
                    enterCode: { _ in throw DemoFailure("asked for a code") },
                    approvalRequested: { _ in requested.withLock { $0 += 1 } }),
                polling: .init(initialInterval: .milliseconds(200), maximumInterval: .seconds(1)))
            let approved = try await withThrowingTaskGroup(of: Verification?.self) { group in
                group.addTask {
                    // The phone: the push lands, the user approves half a second later, while the flow polls.
                    let deadline = ContinuousClock.now + .seconds(60)
                    var push: SandboxMessage?
                    while push == nil, ContinuousClock.now < deadline {
                        push = try await client.sandboxOutbox(to: identity).last { $0.kind == "push" }
                        if push == nil { try await Task.sleep(for: .milliseconds(50)) }
                    }
                    let payload = try JSONDecoder().decode(
                        JSONValue.self, from: Data(try #require(push).text.utf8))
                    try await Task.sleep(for: .milliseconds(500))
                    try await phone.answer(
                        challengeSID: try #require(payload["challenge_sid"]?.stringValue), approve: true)
                    return nil
                }
                group.addTask { try await flow.run(started) }
                var final: Verification?
                for try await result in group where result != nil { final = result }
                return try #require(final)
            }
            #expect(approved.status == .approved && approved.token != nil)
            #expect(requested.withLock { $0 } == 1)

            // Nobody answers this one; the app gives up (its task is cancelled) and the verification is canceled.
            let unanswered = try await client.start(StartRequest(to: identity, channel: .push))
            let waiting = Mutex(false)
            let task = Task {
                try await VerificationFlow(
                    client: client,
                    handlers: .init(
                        enterCode: { _ in throw DemoFailure("asked for a code") },
                        approvalRequested: { _ in waiting.withLock { $0 = true } }),
                    polling: .init(initialInterval: .milliseconds(200), maximumInterval: .seconds(1))
                ).run(unanswered)
            }
            let deadline = ContinuousClock.now + .seconds(60)
            while !waiting.withLock({ $0 }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(try await client.status(unanswered.id).status == .canceled)
        }
    }

    @Test(
        "with a client secret the app runs its steps; a start or another verification is refused; an ended one reads nothing"
    )
    func clientSecret() async throws {
        try await withClientTestGateway { base, key in
            let backend = VerificationClient(baseURL: base, credential: .apiKey(key))
            let started = try await backend.start(StartRequest(to: "+14155550130"))
            let secret = try #require(started.clientSecret)
            #expect(secret.hasPrefix("vcs_"))
            let app = VerificationClient(baseURL: base, credential: .clientSecret(secret))
            let refusedStart = await #expect(throws: GatewayAPIError.self) {
                try await app.start(StartRequest(to: "+14155550131"))
            }
            #expect(refusedStart?.code == .forbidden && refusedStart?.httpStatus == 403)
            let other = try await backend.start(StartRequest(to: "+14155550132"))
            let refusedOther = await #expect(throws: GatewayAPIError.self) { try await app.status(other.id) }
            #expect(refusedOther?.code == .forbidden)
            let approved = try await VerificationFlow(
                client: app,
                handlers: .init(enterCode: { _ in .code(try await Self.code(backend, to: "+14155550130")) })
            ).run(try await app.status(started.id))
            #expect(approved.status == .approved && approved.token != nil)
            let ended = await #expect(throws: GatewayAPIError.self) { try await app.status(started.id) }
            #expect(ended?.code == .unauthorized && ended?.httpStatus == 401)

            // Sinch's seamless is finished by the vendor's callback: the app's polls stop reading once it has
            // ended, and the flow asks the back end for the outcome.
            let seamless = try await backend.start(
                StartRequest(to: "+46701234570", channel: .silentAuth, provider: "sinch"))
            let asked = Mutex<[String]>([])
            let final = try await VerificationFlow(
                client: VerificationClient(
                    baseURL: base, credential: .clientSecret(try #require(seamless.clientSecret))),
                handlers: .init(
                    enterCode: { _ in throw DemoFailure("asked for a code") },
                    openURL: { opening in
                        let body = try await URLSession.shared.data(from: opening.url).0
                        // Until the vendor's callback has landed (the back end sees it), so the app's first poll
                        // comes after the end.
                        let deadline = ContinuousClock.now + .seconds(60)
                        while try await backend.status(seamless.id).status == .pending, ContinuousClock.now < deadline {
                            try await Task.sleep(for: .milliseconds(50))
                        }
                        return body
                    },
                    outcome: { id in
                        asked.withLock { $0.append(id) }
                        return try await backend.status(id)
                    }),
                polling: .init(initialInterval: .milliseconds(200))
            ).run(seamless)
            #expect(final.status == .approved)
            #expect(asked.withLock { $0 } == [seamless.id])
        }
    }

    /// A JSON call to the sandbox's Firebase Auth emulator, as the app's own Firebase SDK would make it.
    static func firebase(_ base: URL, _ method: String, _ body: [String: Any], owner: Bool = false) async throws
        -> [String: Any]
    {
        let path = "sandbox/firebase/identitytoolkit.googleapis.com/v1/\(method)"
        var components = try #require(URLComponents(url: base.appending(path: path), resolvingAgainstBaseURL: false))
        if !owner { components.queryItems = [URLQueryItem(name: "key", value: clientTestFirebaseKey)] }
        var request = URLRequest(url: try #require(components.url))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if owner { request.setValue("Bearer owner", forHTTPHeaderField: "Authorization") }
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: data, as: UTF8.self))")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("multi_factor through the client: enroll a phone factor with the ID token, then sign in with it")
    func multiFactor() async throws {
        try await withClientTestGateway { base, key in
            let client = VerificationClient(baseURL: base, credential: .apiKey(key))
            let (email, password, to) = ("carol@example.com", "correct horse battery", "+447400123481")
            _ = try await Self.firebase(
                base, "accounts:signUp", ["email": email, "password": password, "emailVerified": true], owner: true)
            let signIn = ["email": email, "password": password, "returnSecureToken": true] as [String: Any]
            let idToken = try #require(try await Self.firebase(base, "accounts:signInWithPassword", signIn)["idToken"])
            let proof = AppVerification(kind: .recaptcha, token: "sandbox-recaptcha-token")

            let enroll = try await client.start(
                StartRequest(
                    to: to, appVerification: proof, provider: "firebase",
                    multiFactor: .enroll(idToken: try #require(idToken as? String), displayName: "Work phone")))
            #expect(enroll.provider == "firebase" && enroll.status == .pending && enroll.sends == 1)
            let enrolled = try await client.check(enroll.id, code: try await Self.code(client, to: to))
            #expect(enrolled.status == .approved && Set(enrolled.providerTokens.keys) == ["idToken", "refreshToken"])

            // The first factor now answers a pending credential and the factor's enrollment id.
            let first = try await Self.firebase(base, "accounts:signInWithPassword", signIn)
            let credential = try #require(first["mfaPendingCredential"] as? String)
            let factor = try #require((first["mfaInfo"] as? [[String: Any]])?.first?["mfaEnrollmentId"] as? String)
            let second = try await client.start(
                StartRequest(
                    to: to, appVerification: proof, provider: "firebase",
                    multiFactor: .signIn(pendingCredential: credential, enrollmentID: factor)))
            #expect(second.provider == "firebase" && second.id != enroll.id)
            let signedIn = try await client.check(second.id, code: try await Self.code(client, to: to))
            #expect(signedIn.status == .approved && Set(signedIn.providerTokens.keys) == ["idToken", "refreshToken"])

            // A step the gateway refuses is typed: a sign-in whose enrollment id is not the user's factor.
            let refused = await #expect(throws: GatewayAPIError.self) {
                let again = try await Self.firebase(base, "accounts:signInWithPassword", signIn)
                _ = try await client.start(
                    StartRequest(
                        to: to, appVerification: proof, provider: "firebase",
                        multiFactor: .signIn(
                            pendingCredential: try #require(again["mfaPendingCredential"] as? String),
                            enrollmentID: "not-the-factor")))
            }
            #expect(refused?.code == .notEnrolled && refused?.vendor?.code == "MFA_ENROLLMENT_NOT_FOUND")
        }
    }

    @Test("the demo's inflater reads fixed and dynamic Huffman blocks, not only the sandbox's stored ones")
    func inflater() throws {
        let text = Data(
            (String(repeating: "The quick brown fox jumps over the lazy dog. 0123456789 ", count: 40)
                + String((0..<500).map { Character(UnicodeScalar(UInt8(33 + ($0 * 7) % 90))) })).utf8)
        let dynamic =
            "eNrtzFUWglAUQNGpXLsVLOzuDuwEAcV6CqLC6HUW+nG/z9qHPYhw1+TdCXiFvK4gkTcctctNBfIUFXh885kzdBDI3g8UHQyFI1EmFgcWHTp06NChQ4fuR87kDETTpeZgtt1fNbOLYjLl1nDOHcjT4qZj2UqbXfDy7WX1BOO5ame03B3vb5s3lMjXuuOVcFJ0uy+cLNR7k7V4Vg2HP5IqNvrTjXR54Plfzx+KanQq"
        let fixed =
            "eAELyUhVKCzNTM5WSCrKL89TSMuvUMgqzS0oVsgvSy1SKAFK5yRWVSqk5KfrKRgYGhmbmJqZW1gqhIzqG9U3qm9U36i+UX2j+kb1DZA+RQ19M1sX76DIhPS8UiVNA3M7V5/gqMSM/DJlLUMLezffkOikzIJyFW0jSwd3v9CY5KzCClUdYytHD/+w2JTsoko1XRNrJ8+A8LjUnOIqdT1TG2evwIj4tNySUZMHq8kAimp0Kg=="
        for stream in [dynamic, fixed] {
            let inflated = try Inflater.zlib([UInt8](try #require(Data(base64Encoded: stream))))
            #expect(Data(inflated) == text)
        }
        #expect(throws: SliderSolver.Failure.self) { try Inflater.zlib([0x78, 0x9C, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) }
    }
}
