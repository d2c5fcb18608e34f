import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Synchronization
import Testing

/// The paths of core contracts v2 (docs/architecture.md "Contracts v2"), each driven by a scripted provider.
@Suite("Contracts v2")
struct ContractsV2Tests {
    static let slider = NextAction.Challenge(kind: "slider_captcha", data: ["background": "png-1", "piece": "png-2"])
    static let freshSlider = NextAction.Challenge(kind: "slider_captcha", data: ["background": "png-3"])

    static func challenger() -> ScriptedProvider {
        let provider = ScriptedProvider(id: "captcha")
        provider.scriptPrepare(.succeed(ProviderChallenge(challenge: slider, state: ["captcha": "c1"])))
        return provider
    }

    // MARK: challenges

    @Suite("a challenge before the send")
    struct Challenges {
        @Test("a start that gets a challenge sends nothing: pending, no sends, solve_challenge, no start call")
        func challengeFirst() async throws {
            let provider = ContractsV2Tests.challenger()
            let h = try ServiceHarness([provider])
            let record = try await h.service.start(try .sms())
            #expect(record.status == .pending)
            #expect(record.sends == 0)
            #expect(record.nextAction == .solveChallenge(ContractsV2Tests.slider))
            #expect(record.providerState == ["captcha": "c1"])
            #expect(provider.callCount(.start) == 0)
            #expect(provider.calls(.prepare).first?.verificationID == record.id, "the plugin learns the gateway id")
            await expectAsyncGatewayError(.invalidState) { try await h.check(record.id, "123456") }
            await expectAsyncGatewayError(.invalidState) { try await h.service.resend(id: record.id) }
            #expect(provider.callCount(.check) == 0)
        }

        @Test("a wrong answer brings a fresh challenge and sends nothing; the right one sends the code")
        func wrongThenRight() async throws {
            let provider = ContractsV2Tests.challenger()
            provider.scriptChallenge(
                .succeed(
                    ProviderStartResult(
                        reference: nil, state: ["captcha": "c2"], sentNothing: true,
                        nextAction: .solveChallenge(ContractsV2Tests.freshSlider))),
                .succeed(ProviderStartResult(reference: "sms-1", state: ["token": "t"], contentLanguage: "zh")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id

            let error = await expectAsyncGatewayError(.appVerificationFailed) {
                try await h.service.submitChallenge(id: id, answer: ChallengeAnswer(answer: ["x": 10]))
            }
            #expect(error?.nextAction == .solveChallenge(ContractsV2Tests.freshSlider))
            var stored = try await h.stored(id)
            #expect(stored.sends == 0)
            #expect(stored.nextAction == .solveChallenge(ContractsV2Tests.freshSlider))
            #expect(stored.providerState == ["captcha": "c2"])

            let solved = try await h.service.submitChallenge(
                id: id,
                answer: ChallengeAnswer(answer: ["x": 142], clientContext: ClientContext(ipAddress: "203.0.113.9")))
            #expect(solved.sends == 1)
            #expect(solved.nextAction == nil)
            #expect(solved.providerReference == "sms-1")
            #expect(solved.contentLanguage == "zh")
            #expect(solved.challengeAttempts == 2)
            let calls = provider.calls(.challenge)
            #expect(calls.map(\.answer) == [["x": 10], ["x": 142]])
            #expect(calls.last?.state == ["captcha": "c2"], "the answer is checked against the fresh challenge")
            #expect(calls.last?.clientContext.ipAddress == "203.0.113.9")
            stored = try await h.stored(id)
            #expect(try await h.events(id, .challenge).count == 2)
            await expectAsyncGatewayError(.invalidState) {
                try await h.service.submitChallenge(id: id, answer: ChallengeAnswer(answer: ["x": 1]))
            }
        }

        @Test("two answers at once reach the vendor once: the other is told there is no challenge to answer")
        func doubleAnswer() async throws {
            let provider = ContractsV2Tests.challenger()
            let gate = ScriptedGate()
            provider.scriptChallenge(
                .run { () async throws(GatewayError) -> ProviderStartResult in
                    await gate.wait()
                    return ProviderStartResult(reference: "sms-1")
                })
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let first = inFlight { () async throws(GatewayError) -> VerificationRecord in
                try await h.service.submitChallenge(id: id, answer: ChallengeAnswer(answer: [:]))
            }
            #expect(await provider.waitForCalls(.challenge, count: 1))
            await expectAsyncGatewayError(.invalidState) {
                try await h.service.submitChallenge(id: id, answer: ChallengeAnswer(answer: [:]))
            }
            gate.open()
            let record = try await first.value.get()
            #expect(record.sends == 1)
            #expect(provider.callCount(.challenge) == 1)
        }

        @Test("a vendor failure on the answer keeps the challenge open for another try")
        func vendorFailureKeepsChallenge() async throws {
            let provider = ContractsV2Tests.challenger()
            provider.scriptChallenge(.fail(GatewayError(.providerUnavailable, "down")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(.providerUnavailable) {
                try await h.service.submitChallenge(id: id, answer: ChallengeAnswer(answer: [:]))
            }
            #expect(try await h.stored(id).nextAction == .solveChallenge(ContractsV2Tests.slider))
            #expect(try await h.stored(id).sends == 0)
        }

        @Test("answers are bounded: past the policy's limit the verification ends")
        func boundedAnswers() async throws {
            let provider = ContractsV2Tests.challenger()
            let fresh = ProviderStartResult(
                reference: nil, sentNothing: true, nextAction: .solveChallenge(ContractsV2Tests.freshSlider))
            provider.scriptChallenge(.succeed(fresh), .succeed(fresh))
            let h = try ServiceHarness([provider], policy: VerificationPolicy(maxChallengeAttempts: 2))
            let id = try await h.service.start(try .sms()).id
            for _ in 0..<2 {
                await expectAsyncGatewayError(.appVerificationFailed) {
                    try await h.service.submitChallenge(id: id, answer: ChallengeAnswer(answer: [:]))
                }
            }
            await expectAsyncGatewayError(.maxAttemptsReached) {
                try await h.service.submitChallenge(id: id, answer: ChallengeAnswer(answer: [:]))
            }
            #expect(try await h.stored(id).status == .maxAttemptsReached)
            #expect(provider.callCount(.challenge) == 2)
        }
    }

    // MARK: callbacks

    @Suite("vendor callbacks")
    struct Callbacks {
        static let url = URL(string: "https://gw.example/callbacks/alpha/events")!

        /// A plugin's callback reading: a shared-secret header stands in for the vendor's signature.
        static func signedProvider() -> ScriptedProvider {
            let provider = ScriptedProvider(
                id: "alpha", capabilities: ProviderCapabilities(channels: [.sms, .voice]))
            provider.setCallbackHandler { callback, lookup throws(GatewayError) in
                guard callback.headerFields[HTTPField.Name("X-Signature")!] == "good" else {
                    throw GatewayError(.unauthorized, "The callback's signature does not verify.")
                }
                let reference = String(decoding: callback.body, as: UTF8.self)
                guard let verification = try await lookup(.reference(reference)) else {
                    return CallbackReply(updates: [], response: TransportResponse(status: .ok))
                }
                return CallbackReply(
                    updates: [
                        ProviderUpdate(
                            target: .verificationID(verification.id),
                            change: VerificationChange(
                                status: .approved, tokens: ["session": "s-1"], reason: "SUCCESSFUL"))
                    ],
                    response: TransportResponse(status: .ok, body: Data(#"{"action":"allow"}"#.utf8)))
            }
            return provider
        }

        static func callback(signature: String, body: String) -> VendorCallback {
            var headers = HTTPFields()
            headers[HTTPField.Name("X-Signature")!] = signature
            return VendorCallback(
                method: .post, url: url, subpath: "/events", query: nil, headerFields: headers, body: Data(body.utf8))
        }

        @Test("a signed callback approves, and the next read carries the gateway's token once")
        func approves() async throws {
            let h = try ServiceHarness([Self.signedProvider()])
            let record = try await h.service.start(try .sms())
            let reply = try await h.service.handleCallback(
                providerID: "alpha", Self.callback(signature: "good", body: "alpha-ref-1"))
            #expect(reply.response.body == Data(#"{"action":"allow"}"#.utf8))
            let stored = try await h.stored(record.id)
            #expect(stored.status == .approved)
            #expect(stored.tokenPending)
            #expect(stored.statusReason == "SUCCESSFUL")
            #expect(try await h.events(record.id, .providerUpdate).first?.detail["source"] == "callback")

            // Many readers at once: exactly one gets the token.
            let reads = try await withThrowingTaskGroup(of: CheckOutcome.self) { group in
                for _ in 0..<8 { group.addTask { try await h.service.read(id: record.id) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let carriers = reads.filter(\.carriesToken)
            #expect(carriers.count == 1)
            #expect(carriers.first?.providerTokens == ["session": "s-1"])
            #expect(try await h.stored(record.id).pendingTokens.isEmpty, "vendor tokens are not kept once handed out")
            await expectAsyncGatewayError(.alreadyApproved) { try await h.check(record.id, "123456") }
        }

        @Test(
            "a callback that approves while a check is at the vendor: the check answers already_approved, the token waits for a read"
        )
        func callbackDuringCheck() async throws {
            let provider = Self.signedProvider()
            let gate = ScriptedGate()
            provider.scriptCheck(
                .run { () async throws(GatewayError) -> ProviderCheckResult in
                    await gate.wait()
                    return .wrongCode
                })
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let check = inFlight { () async throws(GatewayError) -> CheckOutcome in try await h.check(id, "000000") }
            #expect(await provider.waitForCalls(.check, count: 1))
            _ = try await h.service.handleCallback(
                providerID: "alpha", Self.callback(signature: "good", body: "alpha-ref-1"))
            gate.open()
            guard case .failure(let error) = await check.value else {
                Issue.record("the wrong code cannot succeed")
                return
            }
            #expect(error.code == .alreadyApproved, "the verification was approved meanwhile")
            let stored = try await h.stored(id)
            #expect(stored.status == .approved && stored.checkLeaseUntil == nil)
            #expect(try await h.service.read(id: id).carriesToken)
        }

        @Test("a callback with a bad signature is unauthorized and changes nothing")
        func badSignature() async throws {
            let h = try ServiceHarness([Self.signedProvider()])
            let record = try await h.service.start(try .sms())
            await expectAsyncGatewayError(.unauthorized) {
                try await h.service.handleCallback(
                    providerID: "alpha", Self.callback(signature: "forged", body: "alpha-ref-1"))
            }
            #expect(try await h.stored(record.id) == record)
            #expect(try await h.events(record.id, .providerUpdate).isEmpty)
        }

        @Test("a callback for an unknown verification is answered and changes nothing")
        func unknownReference() async throws {
            let h = try ServiceHarness([Self.signedProvider()])
            let record = try await h.service.start(try .sms())
            let reply = try await h.service.handleCallback(
                providerID: "alpha", Self.callback(signature: "good", body: "someone-else"))
            #expect(reply.response.status == .ok)
            #expect(try await h.stored(record.id) == record)
        }

        @Test("a callback naming another provider's verification changes nothing")
        func otherProvidersVerification() async throws {
            let beta = ScriptedProvider(id: "beta")
            let alpha = Self.signedProvider()
            let h = try ServiceHarness([beta, alpha], table: RoutingTable(defaultOrder: ["beta", "alpha"]))
            let record = try await h.service.start(try .sms())
            #expect(record.providerID == "beta")
            _ = try await h.service.handleCallback(
                providerID: "alpha", Self.callback(signature: "good", body: try #require(record.providerReference)))
            #expect(try await h.stored(record.id).status == .pending)
        }

        @Test("a provider that takes no callbacks, or an unknown provider, is not_found")
        func noCallbacks() async throws {
            let h = try ServiceHarness([ScriptedProvider(id: "plain")])
            await expectAsyncGatewayError(.notFound) {
                try await h.service.handleCallback(providerID: "plain", Self.callback(signature: "good", body: ""))
            }
            await expectAsyncGatewayError(.notFound) {
                try await h.service.handleCallback(providerID: "nobody", Self.callback(signature: "good", body: ""))
            }
        }

        @Test("an approval by callback is never undone by a later expiry or denial, by callback or by check")
        func approvalStays() async throws {
            let provider = Self.signedProvider()
            provider.setFallbackCheck(.fail(GatewayError(.notFound, "gone")))
            let h = try ServiceHarness([provider])
            let record = try await h.service.start(try .sms())
            _ = try await h.service.handleCallback(
                providerID: "alpha", Self.callback(signature: "good", body: "alpha-ref-1"))
            _ = try await h.service.apply(VerificationChange(status: .expired), to: record.id, source: "callback")
            _ = try await h.service.apply(VerificationChange(status: .denied), to: record.id, source: "refresh")
            #expect(try await h.stored(record.id).status == .approved)
        }
    }

    // MARK: refresh

    @Suite("status refresh")
    struct Refresh {
        @Test("a refresh finds the vendor moved to voice: the record's channel follows, and no attempt is spent")
        func movedToVoice() async throws {
            let provider = ScriptedProvider(
                id: "alpha",
                capabilities: ProviderCapabilities(
                    channels: [.sms, .voice], resendCanChangeChannel: true, nativeWorkflows: true))
            provider.scriptStatus(.succeed(VerificationChange(status: .pending, channel: .voice)))
            let h = try ServiceHarness([provider])
            var request = try StartVerification.sms()
            request.fallbackChannels = [.voice]
            let started = try await h.service.start(request)
            #expect(started.fallbackChannels == [.voice])
            let refreshed = try await h.service.read(id: started.id, refresh: true)
            #expect(refreshed.record.channel == .voice)
            #expect(refreshed.record.fallbackChannels.isEmpty, "the channel the vendor moved to is used up")
            #expect(refreshed.record.attempts == 0)
            #expect(refreshed.record.status == .pending)
            let update = try #require(try await h.events(started.id, .providerUpdate).first)
            #expect(update.detail["source"] == "refresh")
            #expect(update.detail["channel"] == "voice")
        }

        @Test("a refresh of a verification the vendor forgot expires it; a final one is not asked about")
        func vendorForgot() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptStatus(.fail(GatewayError(.notFound, "gone")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            #expect(try await h.service.read(id: id, refresh: true).record.status == .expired)
            _ = try await h.service.read(id: id, refresh: true)
            #expect(provider.callCount(.status) == 1)
        }

        @Test("a provider without a status call answers a refresh from the store")
        func noStatusCall() async throws {
            let provider = ScriptedProvider(
                id: "alpha", capabilities: ProviderCapabilities(channels: [.sms], withheld: [.status]))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            #expect(try await h.service.read(id: id, refresh: true).record.status == .pending)
            #expect(provider.callCount(.status) == 0)
        }

        @Test("a refresh can bring a next action: the vendor asks the app to open a URL over cellular data")
        func nextActionFromRefresh() async throws {
            let provider = ScriptedProvider(
                id: "alpha",
                capabilities: ProviderCapabilities(channels: [.silentAuth], completesWithoutCode: [.silentAuth]))
            let action = NextAction.openURL(NextAction.URLOpening(url: "https://sna.example/x", cellularOnly: true))
            provider.scriptStatus(.succeed(VerificationChange(nextAction: .set(action))))
            let h = try ServiceHarness([provider])
            let start = StartVerification(
                destination: .phone(try PhoneNumber(parsing: "+447400123456")), channel: .silentAuth)
            let id = try await h.service.start(start).id
            #expect(try await h.service.read(id: id, refresh: true).record.nextAction == action)
            await expectAsyncGatewayError(.invalidState) { try await h.check(id, "0000") }
        }
    }

    // MARK: richer requests

    @Suite("fallback channels, vendor limits and served regions")
    struct Requests {
        @Test("without native workflows, each resend that names no channel takes the next fallback channel")
        func fallbackOnResend() async throws {
            let provider = ScriptedProvider(
                id: "alpha",
                capabilities: ProviderCapabilities(channels: [.sms, .voice, .whatsapp], resendCanChangeChannel: true))
            let h = try ServiceHarness([provider])
            var request = try StartVerification.sms()
            request.fallbackChannels = [.whatsapp, .voice]
            request.clientContext = ClientContext(ipAddress: "198.51.100.7", userAgent: "App/1.0", deviceID: "dev-1")
            let id = try await h.service.start(request).id
            #expect(provider.calls(.start).first?.clientContext.deviceID == "dev-1")
            #expect(provider.calls(.start).first?.startRequest?.fallbackChannels == [.whatsapp, .voice])

            let first = try await h.service.resend(id: id)
            #expect(first.channel == .whatsapp)
            #expect(first.fallbackChannels == [.voice])
            let second = try await h.service.resend(id: id)
            #expect(second.channel == .voice)
            #expect(second.fallbackChannels.isEmpty)
            let third = try await h.service.resend(id: id)
            #expect(third.channel == .voice, "with none left, a resend stays on the channel")
            #expect(provider.calls(.resend).map(\.requestedChannel) == [.whatsapp, .voice, nil])
        }

        @Test("a provider with native workflows is given them at start and picks the channel itself on resend")
        func nativeWorkflows() async throws {
            let provider = ScriptedProvider(
                id: "alpha",
                capabilities: ProviderCapabilities(channels: [.sms, .voice], nativeWorkflows: true))
            provider.scriptResend(.succeed(ProviderStartResult(reference: nil, channel: .voice)))
            let h = try ServiceHarness([provider])
            var request = try StartVerification.sms()
            request.fallbackChannels = [.voice]
            let id = try await h.service.start(request).id
            let resent = try await h.service.resend(id: id)
            #expect(provider.calls(.resend).first?.requestedChannel == nil)
            #expect(resent.channel == .voice, "the vendor's choice of channel updates the record")
        }

        @Test("a provider that cannot run the fallback channels is passed over")
        func fallbackNotSupported() async throws {
            let smsOnly = ScriptedProvider(id: "alpha", channels: [.sms])
            let both = ScriptedProvider(
                id: "beta", capabilities: ProviderCapabilities(channels: [.sms, .voice], resendCanChangeChannel: true))
            let h = try ServiceHarness([smsOnly, both])
            var request = try StartVerification.sms()
            request.fallbackChannels = [.voice]
            #expect(try await h.service.start(request).providerID == "beta")
            let alone = try ServiceHarness([ScriptedProvider(id: "alpha", channels: [.sms])])
            await expectAsyncGatewayError(.unsupportedChannel) { try await alone.service.start(request) }
        }

        @Test("the vendor's own check limit lowers the gateway's")
        func vendorAttemptLimit() async throws {
            let provider = ScriptedProvider(
                id: "alpha", capabilities: ProviderCapabilities(channels: [.sms], vendorMaxAttempts: 3))
            provider.setFallbackCheck(.succeed(.wrongCode))
            let h = try ServiceHarness([provider])
            let record = try await h.service.start(try .sms())
            #expect(record.maxAttempts == 3)
            for _ in 0..<2 { await expectAsyncGatewayError(.incorrectCode) { try await h.check(record.id, "111111") } }
            await expectAsyncGatewayError(.maxAttemptsReached) { try await h.check(record.id, "111111") }
        }

        @Test("a provider serving an allow-list of regions is passed over elsewhere")
        func servedRegions() async throws {
            let ukOnly = ScriptedProvider(
                id: "alpha", capabilities: ProviderCapabilities(channels: [.sms], servedRegions: ["GB"]))
            let anywhere = ScriptedProvider(id: "beta", channels: [.sms])
            let h = try ServiceHarness([ukOnly, anywhere])
            #expect(try await h.service.start(try .sms("+447400123456")).providerID == "alpha")
            #expect(try await h.service.start(try .sms("+16505553434")).providerID == "beta")
            let dry = try await h.service.dryRun(try .sms("+16505553434"))
            #expect(dry.skipped.contains { $0.providerID == "alpha" && $0.reason == "country_not_served" })
        }

        @Test("a destination no provider serves is unsupported_destination (400, final), not a retryable 503")
        func noProviderServesTheCountry() async throws {
            let ukOnly = ScriptedProvider(
                id: "alpha", capabilities: ProviderCapabilities(channels: [.sms], servedRegions: ["GB"]))
            let h = try ServiceHarness([ukOnly])
            let error = await expectAsyncGatewayError(.unsupportedDestination) {
                try await h.service.start(try .sms("+16505553434"))
            }
            #expect(error?.httpStatus == 400 && error?.isRetryable == false)
            #expect(ukOnly.callCount(.start) == 0)
        }
    }

    // MARK: settling checks

    @Suite("checks settled one at a time")
    struct Settling {
        @Test("a blocked answer during a check settles the verification as blocked", arguments: [true, false])
        func blockedDuringCheck(_ thrown: Bool) async throws {
            let provider = ScriptedProvider(id: "alpha")
            if thrown {
                provider.scriptCheck(.fail(GatewayError(.destinationBlocked, "fraud")))
            } else {
                provider.scriptCheck(.succeed(ProviderCheckResult(status: .blocked)))
            }
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let error = await expectAsyncGatewayError(.destinationBlocked) { try await h.check(id, "123456") }
            #expect(error?.isRetryable == false)
            #expect(try await h.stored(id).status == .blocked)
            await expectAsyncGatewayError(.destinationBlocked) { try await h.check(id, "123456") }
            #expect(provider.callCount(.check) == 1)
        }

        @Test("a double-submitted right code approves once; the other answer is already_approved", arguments: 0..<20)
        func doubleSubmit(_ round: Int) async throws {
            let provider = ScriptedProvider(id: "alpha")
            // The vendor approves the first call and answers the second "already used".
            provider.scriptCheck(.succeed(.approved))
            provider.setFallbackCheck(.fail(GatewayError(.notFound, "already used")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let results = await withTaskGroup(of: Result<CheckOutcome, GatewayError>.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        do throws(GatewayError) { return .success(try await h.check(id, "123456")) } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let approvals = results.filter { (try? $0.get())?.record.status == .approved }
            let errors = results.compactMap { result -> GatewayError.Code? in
                if case .failure(let error) = result { return error.code }
                return nil
            }
            #expect(approvals.count == 1)
            #expect(errors == [.alreadyApproved])
            #expect(try await h.stored(id).status == .approved)
            #expect(try await h.stored(id).checkLeaseUntil == nil)
        }

        @Test("twenty concurrent right codes: one approval, nineteen already_approved, one vendor check")
        func manySubmits() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(.succeed(.approved))
            provider.setFallbackCheck(.fail(GatewayError(.notFound, "already used")))
            let h = try ServiceHarness([provider], policy: VerificationPolicy(maxAttempts: 20))
            let id = try await h.service.start(try .sms()).id
            let codes = await withTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        do throws(GatewayError) { return try await h.check(id, "123456").record.status.rawValue } catch
                        {
                            return error.code.rawValue
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(codes.filter { $0 == "approved" }.count == 1)
            #expect(codes.filter { $0 == "already_approved" }.count == 19)
            #expect(provider.callCount(.check) == 1)
        }

        @Test("a resend that arrives while a check is at the vendor waits, and then hears already_approved")
        func resendWaitsForCheck() async throws {
            let provider = ScriptedProvider(id: "alpha")
            let gate = ScriptedGate()
            provider.scriptCheck(
                .run { () async throws(GatewayError) -> ProviderCheckResult in
                    await gate.wait()
                    return .approved
                })
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let check = inFlight { () async throws(GatewayError) -> CheckOutcome in try await h.check(id, "123456") }
            #expect(await provider.waitForCalls(.check, count: 1))
            let resend = inFlight { () async throws(GatewayError) -> VerificationRecord in
                try await h.service.resend(id: id)
            }
            try await Task.sleep(for: .milliseconds(20))
            #expect(provider.callCount(.resend) == 0)
            gate.open()
            #expect(try await check.value.get().record.status == .approved)
            guard case .failure(let error) = await resend.value else {
                Issue.record("a resend of an approved verification must fail")
                return
            }
            #expect(error.code == .alreadyApproved)
            #expect(provider.callCount(.resend) == 0)
        }

        @Test("a check that waits for another and finds a wrong code spends its own attempt")
        func waitingCheckStillChecks() async throws {
            let provider = ScriptedProvider(id: "alpha")
            let gate = ScriptedGate()
            provider.scriptCheck(
                .run { () async throws(GatewayError) -> ProviderCheckResult in
                    await gate.wait()
                    return .wrongCode
                }, .succeed(.approved))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let first = inFlight { () async throws(GatewayError) -> CheckOutcome in try await h.check(id, "000000") }
            #expect(await provider.waitForCalls(.check, count: 1))
            let second = inFlight { () async throws(GatewayError) -> CheckOutcome in try await h.check(id, "123456") }
            try await Task.sleep(for: .milliseconds(20))
            #expect(provider.callCount(.check) == 1, "the second check waits for the first")
            gate.open()
            guard case .failure(let error) = await first.value else {
                Issue.record("the wrong code should fail")
                return
            }
            #expect(error.code == .incorrectCode)
            #expect(try await second.value.get().record.status == .approved)
            #expect(try await h.stored(id).attempts == 2)
        }

        @Test("a lease left by a crashed instance lapses, and the verification can be checked again")
        func staleLease() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.setFallbackCheck(.succeed(.approved))
            let h = try ServiceHarness([provider])
            var record = try await h.service.start(try .sms())
            record.checkLeaseUntil = h.clock.now.addingTimeInterval(30)
            record.version += 1
            #expect(try await h.store.update(record))
            h.clock.advance(by: 31)
            #expect(try await h.check(record.id, "123456").record.status == .approved)
        }
    }

    // MARK: sandbox

    @Test("an emulator's callback sender posts to the gateway's callback route; without one it fails")
    func callbackSender() async throws {
        let received = RecordingCallbacks()
        let sender = CallbackSender(baseURL: URL(string: "http://127.0.0.1:8080/callbacks/alpha"), transport: received)
        let url = try #require(sender.url("/status"))
        #expect(url.absoluteString == "http://127.0.0.1:8080/callbacks/alpha/status")
        let response = try await sender.send(TransportRequest(method: .post, url: url, body: Data("{}".utf8)))
        #expect(response.status == .ok)
        #expect(received.urls == [url])
        await #expect(throws: TransportError.self) {
            try await CallbackSender.none.send(TransportRequest(method: .post, url: url))
        }
    }

    @Test("an emulator told a public callback URL signs for it and delivers to the gateway's own address")
    func callbackSenderBehindAProxy() async throws {
        let received = RecordingCallbacks()
        let sender = CallbackSender(
            baseURL: URL(string: "https://verify.example.com/gw/callbacks/alpha"),
            deliveredTo: URL(string: "http://127.0.0.1:8080/callbacks/alpha"), transport: received)
        let url = try #require(sender.url("/status"))
        #expect(url.absoluteString == "https://verify.example.com/gw/callbacks/alpha/status")
        _ = try await sender.send(TransportRequest(method: .post, url: url, body: Data("{}".utf8)))
        let query = try #require(URL(string: url.absoluteString + "?event=done"))
        _ = try await sender.send(TransportRequest(method: .post, url: query))
        #expect(
            received.urls.map(\.absoluteString) == [
                "http://127.0.0.1:8080/callbacks/alpha/status",
                "http://127.0.0.1:8080/callbacks/alpha/status?event=done",
            ])
    }

    @Test("outbox messages have a kind, and a push has no code")
    func outboxKinds() {
        let outbox = SandboxOutbox()
        outbox.record(
            SandboxOutbox.Message(
                provider: "p", channel: "flashcall", to: "+15550100", code: "+46701234567", text: "call", sentAt: Date()
            ))
        outbox.record(
            SandboxOutbox.Message(
                provider: "p", kind: .push, channel: "apn", to: "user-1", code: nil, text: "Approve?", sentAt: Date()))
        #expect(outbox.all.map(\.kind) == [.flashCall, .push])
        #expect(outbox.all.last?.code == nil)
    }

    @Test(
        "next actions have one JSON form and read back from it",
        arguments: [
            NextAction.solveChallenge(ContractsV2Tests.slider),
            .interceptCall(NextAction.CallInterception(callerPattern: "+4670123****", timeoutSeconds: 20)),
            .openURL(NextAction.URLOpening(url: "https://sna.example", cellularOnly: true)),
            .awaitApproval(
                NextAction.ApprovalPrompt(message: "Log in?", expiresAt: Date(timeIntervalSince1970: 1_800_000_000))),
        ])
    func nextActionJSON(_ action: NextAction) throws {
        let json = action.json
        #expect(json["type"]?.stringValue == action.type)
        #expect(json[action.type]?.objectValue != nil)
        #expect(NextAction(json: json) == action)
        let data = try JSONEncoder().encode(action)
        #expect(try JSONDecoder().decode(NextAction.self, from: data) == action)
    }
}

/// Records the callbacks an emulator sends.
final class RecordingCallbacks: HTTPTransport {
    private let received = Mutex<[URL]>([])

    var urls: [URL] { received.withLock { $0 } }

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        received.withLock { $0.append(request.url) }
        return TransportResponse(status: .ok)
    }
}

@Suite("numbers the numbering plan does not know")
struct UnknownNumberTests {
    static let unknown = "+44740090001"  // possible length for +44, but no GB range matches it

    @Test("an invalid number is refused with invalid_phone_number before any vendor is called")
    func refusedBeforeVendors() async throws {
        let provider = ScriptedProvider(id: "alpha")
        let h = try ServiceHarness([provider])
        let number = try PhoneNumber(parsing: Self.unknown)
        #expect(!number.isValid && number.isPossible)
        #expect(number.policyRegion == "GB")
        await expectAsyncGatewayError(.invalidPhoneNumber) { try await h.service.start(try .sms(Self.unknown)) }
        #expect(provider.callCount(.start) == 0)
        #expect(try await h.service.dryRun(try .sms(Self.unknown)).error?.code == .invalidPhoneNumber)
    }

    @Test("a region the policy allows may still be sent to")
    func allowedRegion() async throws {
        let provider = ScriptedProvider(id: "alpha")
        let h = try ServiceHarness([provider], policy: VerificationPolicy(allowUnknownNumbers: ["GB"]))
        #expect(try await h.service.start(try .sms(Self.unknown)).status == .pending)
        let other = try ServiceHarness([provider], policy: VerificationPolicy(allowUnknownNumbers: ["US"]))
        await expectAsyncGatewayError(.invalidPhoneNumber) { try await other.service.start(try .sms(Self.unknown)) }
    }

    @Test("a provider's own test number and a gateway test number are not refused")
    func testNumbersExempt() async throws {
        let owner = TestNumberOwner(number: Self.unknown)
        let h = try ServiceHarness([owner.provider])
        #expect(try await h.service.start(try .sms(Self.unknown)).status == .pending)
        let gateway = try ServiceHarness(
            [ScriptedProvider(id: "beta")], policy: VerificationPolicy(testNumbers: [Self.unknown: "123456"]))
        #expect(try await gateway.service.start(try .sms(Self.unknown)).isTestNumber)
    }
}

/// A scripted provider that claims one number as its own test number (as Firebase's provider does).
struct TestNumberOwner {
    let provider: ClaimingProvider

    init(number: String) { provider = ClaimingProvider(number: number) }

    final class ClaimingProvider: VerificationProvider {
        let id = "owner"
        let number: String
        let capabilities = ProviderCapabilities(channels: [.sms])

        init(number: String) { self.number = number }

        func isTestNumber(_ request: StartVerification) -> Bool { request.destination.value == number }

        func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
            ProviderStartResult(reference: "fixed", sentNothing: true)
        }

        func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult
        {
            ProviderCheckResult(status: code == "123456" ? .approved : .pending)
        }
    }
}

@Suite("rate limits")
struct RateLimitTests {
    static func harness(_ limits: RateLimits, testNumbers: [String: String] = [:]) throws -> (
        ServiceHarness, ScriptedProvider
    ) {
        let provider = ScriptedProvider(id: "alpha")
        provider.setFallbackCheck(.succeed(.wrongCode))
        var policy = VerificationPolicy(testNumbers: testNumbers)
        policy.rateLimits = limits
        return (try ServiceHarness([provider], policy: policy), provider)
    }

    @Test("starts per destination: the last allowed start passes, the next is rate_limited with Retry-After")
    func perDestination() async throws {
        let (h, provider) = try Self.harness(RateLimits(startsPerDestination: RateLimit(limit: 2, window: 600)))
        _ = try await h.service.start(try .sms("+447400123456"))
        _ = try await h.service.start(try .sms("+447400123456"))
        let error = await expectAsyncGatewayError(.rateLimited) { try await h.service.start(try .sms("+447400123456")) }
        #expect(error?.retryAfter != nil && error!.retryAfter! > 0 && error!.retryAfter! <= 600)
        #expect(error?.httpStatus == 429)
        #expect(provider.callCount(.start) == 2, "the refused start reached no vendor")
        _ = try await h.service.start(try .sms("+447400123457"))
        h.clock.advance(by: 600)
        _ = try await h.service.start(try .sms("+447400123456"))
    }

    @Test("starts per key, per IP, per country and per prefix each count their own key")
    func otherStartLimits() async throws {
        let one = RateLimit(limit: 1, window: 60)
        let (byKey, _) = try Self.harness(RateLimits(startsPerAPIKey: one))
        _ = try await byKey.service.start(try .sms("+447400123456"), apiKeyID: "key_a")
        _ = try await byKey.service.start(try .sms("+447400123457"), apiKeyID: "key_b")
        await expectAsyncGatewayError(.rateLimited) {
            try await byKey.service.start(try .sms("+447400123458"), apiKeyID: "key_a")
        }

        let (byIP, _) = try Self.harness(RateLimits(startsPerIP: one))
        _ = try await byIP.service.start(try .sms("+447400123456"), clientIP: "203.0.113.1")
        _ = try await byIP.service.start(try .sms("+447400123457"), clientIP: "203.0.113.2")
        await expectAsyncGatewayError(.rateLimited) {
            try await byIP.service.start(try .sms("+447400123458"), clientIP: "203.0.113.1")
        }

        let (byCountry, _) = try Self.harness(RateLimits(startsPerCountry: one))
        _ = try await byCountry.service.start(try .sms("+447400123456"))
        _ = try await byCountry.service.start(try .sms("+16505553434"))
        await expectAsyncGatewayError(.rateLimited) { try await byCountry.service.start(try .sms("+447400123457")) }

        let (byPrefix, _) = try Self.harness(RateLimits(startsPerPrefix: one, prefixDigits: 8))
        _ = try await byPrefix.service.start(try .sms("+447400123456"))
        _ = try await byPrefix.service.start(try .sms("+447400223456"))
        await expectAsyncGatewayError(.rateLimited) { try await byPrefix.service.start(try .sms("+447400123499")) }
    }

    @Test("test numbers are exempt")
    func testNumbersExempt() async throws {
        let (h, _) = try Self.harness(
            RateLimits(startsPerDestination: RateLimit(limit: 1, window: 60)), testNumbers: ["+447400123456": "123456"])
        for _ in 0..<5 { _ = try await h.service.start(try .sms("+447400123456")) }
    }

    @Test("checks per key: the last allowed check reaches the vendor, the next does not")
    func checksPerKey() async throws {
        let (h, provider) = try Self.harness(RateLimits(checksPerAPIKey: RateLimit(limit: 2, window: 60)))
        let id = try await h.service.start(try .sms(), apiKeyID: "key_a").id
        for _ in 0..<2 {
            await expectAsyncGatewayError(.incorrectCode) {
                try await h.service.check(CheckVerification(verificationID: id, code: "000000"), apiKeyID: "key_a")
            }
        }
        await expectAsyncGatewayError(.rateLimited) {
            try await h.service.check(CheckVerification(verificationID: id, code: "000000"), apiKeyID: "key_a")
        }
        #expect(provider.callCount(.check) == 2)
        #expect(try await h.stored(id).attempts == 2, "a refused check spends no attempt")
    }
}

@Suite("geo permissions")
struct GeoPermissionTests {
    @Test("a start outside the allowed countries is destination_blocked before any vendor is called")
    func globalAndPerKey() async throws {
        let provider = ScriptedProvider(id: "alpha")
        var policy = VerificationPolicy()
        policy.countries = CountryPermissions(deny: ["US"])
        let h = try ServiceHarness([provider], policy: policy)
        let error = await expectAsyncGatewayError(.destinationBlocked) {
            try await h.service.start(try .sms("+16505553434"))
        }
        #expect(error?.errorClass == .blocked && error?.httpStatus == 403)
        #expect(try await h.service.start(try .sms("+447400123456")).status == .pending)
        // A key limited to GB cannot send to France, though the policy allows it.
        await expectAsyncGatewayError(.destinationBlocked) {
            try await h.service.start(try .sms("+33612345678"), keyCountries: ["GB"])
        }
        #expect(try await h.service.start(try .sms("+447400123457"), keyCountries: ["GB"]).status == .pending)
        var allowOnly = VerificationPolicy()
        allowOnly.countries = CountryPermissions(allow: ["GB"])
        let gbOnly = try ServiceHarness([provider], policy: allowOnly)
        await expectAsyncGatewayError(.destinationBlocked) { try await gbOnly.service.start(try .sms("+33612345678")) }
        #expect(provider.callCount(.start) == 2)
    }
}

@Suite("SMS-pumping guard")
struct PumpingGuardTests {
    static func harness(testNumbers: [String: String] = [:]) throws -> (ServiceHarness, ScriptedProvider) {
        let provider = ScriptedProvider(id: "alpha")
        provider.setFallbackCheck(.succeed(.approved))
        var policy = VerificationPolicy(testNumbers: testNumbers)
        policy.pumpingGuard = PumpingGuard(
            prefixDigits: 6, window: 3600, minStarts: 10, conversionFloor: 0.3, coolDown: 600)
        return (try ServiceHarness([provider], policy: policy), provider)
    }

    @Test("starts to one prefix that never convert are blocked at the threshold; converting traffic is untouched")
    func attackBlocked() async throws {
        let (h, provider) = try Self.harness()
        var normal = 0
        var refusedAt: Int?
        for n in 0..<40 {
            // Normal users on +44 74 01…: each one checks the code.
            let user = try await h.service.start(try .sms(String(format: "+44740100%04d", n)))
            _ = try await h.check(user.id, "123456")
            normal += 1
            // The attack on +44 74 09…: starts only.
            do {
                _ = try await h.service.start(try .sms(String(format: "+44740900%04d", n)))
            } catch {
                #expect(error.code == .destinationBlocked)
                #expect(error.errorClass == .blocked)
                #expect(error.retryAfter.map { (1...600).contains($0) } == true)
                if refusedAt == nil { refusedAt = n + 1 }
            }
        }
        #expect(refusedAt == 10, "the tenth start to the prefix is the one refused")
        #expect(normal == 40, "the converting prefix was never refused")
        let blocks = try await h.service.prefixBlocks()
        #expect(blocks.map(\.prefix) == ["+447409"])
        #expect(blocks.first?.starts == 10 && blocks.first?.approvals == 0)
        // The start that tripped the guard is kept, blocked, with the block in its timeline.
        let tripped = try #require(blocks.first?.verificationID)
        let record = try await h.stored(tripped)
        #expect(record.status == .blocked && record.sends == 0 && record.destination.value == "+447409000009")
        let event = try #require(try await h.events(tripped, .statusChanged).first)
        #expect(event.detail["reason"] == "pumping_guard" && event.detail["prefix"] == "+447409")
        #expect(provider.calls(.start).filter { $0.destination.value.hasPrefix("+447409") }.count == 9)
    }

    @Test("a block ends after the cool-down, or when lifted")
    func coolDownAndLift() async throws {
        let (h, _) = try Self.harness()
        for n in 0..<9 { _ = try await h.service.start(try .sms(String(format: "+44740900%04d", n))) }
        await expectAsyncGatewayError(.destinationBlocked) { try await h.service.start(try .sms("+447409009999")) }
        #expect(try await h.service.liftBlock(prefix: "+447409"))
        #expect(try await h.service.prefixBlocks().isEmpty)
        // Lifted, but the window still shows no conversion: the next start blocks it again.
        await expectAsyncGatewayError(.destinationBlocked) { try await h.service.start(try .sms("+447409009998")) }
        h.clock.advance(by: 601)
        #expect(try await h.service.prefixBlocks().isEmpty, "the cool-down ended")
        #expect(try await h.service.liftBlock(prefix: "+447409") == false)
    }

    @Test("test numbers are exempt, and an approval by callback counts as a conversion")
    func exemptionsAndCallbacks() async throws {
        let (h, _) = try Self.harness(testNumbers: ["+447409000001": "123456"])
        for _ in 0..<20 { _ = try await h.service.start(try .sms("+447409000001")) }
        #expect(try await h.service.prefixBlocks().isEmpty)
        for n in 0..<12 {
            let id = try await h.service.start(try .sms(String(format: "+44740100%04d", n))).id
            _ = try await h.service.apply(VerificationChange(status: .approved), to: id, source: "callback")
        }
        #expect(try await h.service.prefixBlocks().isEmpty)
    }
}
