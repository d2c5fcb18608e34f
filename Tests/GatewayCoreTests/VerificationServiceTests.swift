import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// A service over scripted providers, an in-memory store and a manual clock; it logs to ``logs``.
struct ServiceHarness {
    let clock = ManualClock()
    let logs = CapturedLogs()
    let store: any VerificationStore
    let service: VerificationService

    init(
        _ providers: [any VerificationProvider], routes: [Channel: [String]] = [:], table: RoutingTable? = nil,
        policy: VerificationPolicy = VerificationPolicy(), breakers: CircuitBreakers.Settings = .init(),
        store: any VerificationStore = InMemoryVerificationStore(), leaseOwners: (any LeaseOwners)? = nil
    ) throws {
        self.store = store
        service = VerificationService(
            registry: try makeRegistry(providers),
            routing: table ?? RoutingTable(routes: routes, defaultOrder: providers.map(\.id)),
            store: store, clock: clock, policy: policy,
            breakers: CircuitBreakers(settings: breakers, clock: clock), logger: logs.logger(label: "gateway"),
            leaseOwners: leaseOwners)
    }

    func stored(_ id: String) async throws -> VerificationRecord {
        try #require(try await store.record(id: id))
    }

    func events(_ id: String, _ kind: VerificationEvent.Kind) async throws -> [VerificationEvent] {
        try await store.events(verificationID: id).filter { $0.kind == kind }
    }

    func check(_ id: String, _ code: String) async throws(GatewayError) -> CheckOutcome {
        try await service.check(CheckVerification(verificationID: id, code: code))
    }
}

extension StartVerification {
    static func sms(_ to: String = "+16505553434", forced: String? = nil) throws(GatewayError) -> StartVerification {
        StartVerification(destination: .phone(try PhoneNumber(parsing: to)), channel: .sms, forcedProvider: forced)
    }

    static func push(_ identity: String = "user-1234") -> StartVerification {
        StartVerification(destination: .identity(identity), channel: .push)
    }
}

extension ProviderCheckResult {
    static let wrongCode = ProviderCheckResult(status: .pending)
    static let approved = ProviderCheckResult(status: .approved)
}

/// Runs `body` in a new task and hands back its outcome as a `Result`, so a test can hold it in flight.
func inFlight<Value: Sendable>(
    _ body: @escaping @Sendable () async throws(GatewayError) -> Value
) -> Task<Result<Value, GatewayError>, Never> {
    Task {
        do throws(GatewayError) { return .success(try await body()) } catch { return .failure(error) }
    }
}

@Suite("VerificationService")
struct VerificationServiceTests {
    // MARK: - start

    @Suite("start")
    struct Start {
        @Test("start persists a pending record with the provider, its reference and a 600 s expiry")
        func persistsPendingRecord() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptStart(.succeed(ProviderStartResult(reference: "VE123", state: ["session": "s1"])))
            let h = try ServiceHarness([provider])
            let request = StartVerification(
                destination: .phone(try PhoneNumber(parsing: "+16505553434")), channel: .sms,
                locales: ["es-ES", "en-US"], clientReference: "order-42", metadata: ["plan": "pro"])

            let record = try await h.service.start(request, apiKeyID: "key-1")

            #expect(VerificationService.isWellFormedID(record.id))
            #expect(record.status == .pending)
            #expect(record.providerID == "alpha")
            #expect(record.providerReference == "VE123")
            #expect(record.providerState == ["session": "s1"])
            #expect(record.destination == request.destination)
            #expect(record.channel == .sms)
            #expect(record.attempts == 0)
            #expect(record.maxAttempts == 5)
            #expect(record.sends == 1)
            #expect(record.createdAt == h.clock.now)
            #expect(record.expiresAt == h.clock.now.addingTimeInterval(600))
            #expect(record.locales == ["es-ES", "en-US"])
            #expect(record.clientReference == "order-42")
            #expect(record.metadata == ["plan": "pro"])
            #expect(record.apiKeyID == "key-1")
            #expect(try await h.stored(record.id) == record)
            let sent = try #require(provider.calls(.start).first)
            #expect(sent.destination == request.destination)
            #expect(sent.startRequest?.locales == ["es-ES", "en-US"])
        }

        @Test("the provider's own expiry wins over the default validity")
        func providerExpiry() async throws {
            let provider = ScriptedProvider(id: "alpha")
            let h = try ServiceHarness([provider])
            let vendorExpiry = h.clock.now.addingTimeInterval(120)
            provider.scriptStart(.succeed(ProviderStartResult(reference: "VE1", expiresAt: vendorExpiry)))
            let record = try await h.service.start(try .sms())
            #expect(record.expiresAt == vendorExpiry)
        }

        @Test("the policy sets the default validity and the attempt limit")
        func policyLimits() async throws {
            let h = try ServiceHarness(
                [ScriptedProvider(id: "alpha")], policy: VerificationPolicy(codeValidity: 300, maxAttempts: 3))
            let record = try await h.service.start(try .sms())
            #expect(record.expiresAt == h.clock.now.addingTimeInterval(300))
            #expect(record.maxAttempts == 3)
            #expect(record.attemptsRemaining == 3)
        }

        @Test("the channel and content language the vendor reports are kept")
        func vendorChoices() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptStart(
                .succeed(ProviderStartResult(reference: "VE1", contentLanguage: "es", channel: .whatsapp)))
            let h = try ServiceHarness([provider])
            let record = try await h.service.start(try .sms())
            #expect(record.channel == .whatsapp)
            #expect(record.contentLanguage == "es")
        }

        @Test("start logs a started event and the provider call")
        func startEvents() async throws {
            let h = try ServiceHarness([ScriptedProvider(id: "alpha")])
            let record = try await h.service.start(try .sms())
            let events = try await h.service.events(id: record.id)
            try #require(events.map(\.kind) == [.started, .providerCall])
            #expect(events[0].detail["provider"] == "alpha")
            #expect(events[0].detail["channel"] == "sms")
            #expect(events[0].detail["skipped"] == nil)
            #expect(events[1].detail["provider"] == "alpha")
            #expect(events[1].detail["operation"] == "start")
            #expect(events[1].detail["outcome"] == "accepted")
            #expect(events[1].detail["latency_ms"].flatMap(Int.init) != nil)
            #expect(events.allSatisfy { $0.verificationID == record.id && $0.at == h.clock.now })
            #expect(
                events.allSatisfy { !$0.detail.values.contains { $0.contains("6505553434") } },
                "events never carry the phone number")
        }

        @Test("every start gets a fresh, well-formed id")
        func freshIDs() async throws {
            let h = try ServiceHarness([ScriptedProvider(id: "alpha")])
            var ids: Set<String> = []
            for _ in 0..<20 { ids.insert(try await h.service.start(try .sms()).id) }
            #expect(ids.count == 20)
            #expect(ids.allSatisfy(VerificationService.isWellFormedID))
        }

        @Test("a successful start calls exactly one provider exactly once")
        func oneProviderCall() async throws {
            let alpha = ScriptedProvider(id: "alpha")
            let beta = ScriptedProvider(id: "beta")
            let h = try ServiceHarness([alpha, beta])
            for _ in 0..<3 { _ = try await h.service.start(try .sms()) }
            #expect(alpha.callCount(.start) == 3)
            #expect(beta.callCount(.start) == 0)
            #expect(alpha.calls.count == 3, "start makes no other call")
        }

        @Test(
            "start fails over to the next provider only on provider_transient and provider_permanent errors",
            arguments: GatewayError.Code.allCases)
        func failoverByClass(_ code: GatewayError.Code) async throws {
            let alpha = ScriptedProvider(id: "alpha")
            let beta = ScriptedProvider(id: "beta")
            alpha.scriptStart(.fail(GatewayError(code, "scripted failure")))
            let h = try ServiceHarness([alpha, beta])
            let shouldFailOver = code.errorClass == .providerTransient || code.errorClass == .providerPermanent

            let result: Result<VerificationRecord, GatewayError>
            do throws(GatewayError) {
                result = .success(try await h.service.start(try .sms()))
            } catch {
                result = .failure(error)
            }

            #expect(alpha.callCount(.start) == 1)
            #expect(beta.callCount(.start) == (shouldFailOver ? 1 : 0))
            switch result {
            case .success(let record):
                #expect(shouldFailOver, "`\(code.rawValue)` must not be failed over")
                #expect(record.providerID == "beta")
                let calls = try await h.events(record.id, .providerCall)
                #expect(calls.map { $0.detail["provider"] } == ["alpha", "beta"])
                #expect(calls.map { $0.detail["outcome"] } == [code.rawValue, "accepted"])
            case .failure(let error):
                #expect(!shouldFailOver, "`\(code.rawValue)` must be failed over")
                #expect(error.code == code, "the first provider's error reaches the caller unchanged")
            }
        }

        @Test(
            "an error raised after the vendor may have sent is never failed over",
            arguments: GatewayError.Code.allCases.filter {
                $0.errorClass == .providerTransient || $0.errorClass == .providerPermanent
            })
        func noFailoverAfterPossibleSend(_ code: GatewayError.Code) async throws {
            let alpha = ScriptedProvider(id: "alpha")
            let beta = ScriptedProvider(id: "beta")
            alpha.scriptStart(.fail(GatewayError(code, "timed out after sending", sendMayHaveHappened: true)))
            let h = try ServiceHarness([alpha, beta])
            let error = await expectAsyncGatewayError(code) { try await h.service.start(try .sms()) }
            #expect(error?.sendMayHaveHappened == true)
            #expect(beta.callCount(.start) == 0, "a second vendor would mean a second SMS")
        }

        @Test("when every provider fails over, each is tried once and the last error is thrown")
        func allProvidersFail() async throws {
            let alpha = ScriptedProvider(id: "alpha")
            let beta = ScriptedProvider(id: "beta")
            alpha.scriptStart(.fail(GatewayError(.providerUnavailable, "down")))
            beta.scriptStart(.fail(GatewayError(.providerAuthFailed, "bad key")))
            let h = try ServiceHarness([alpha, beta])
            await expectAsyncGatewayError(.providerAuthFailed) { try await h.service.start(try .sms()) }
            #expect(alpha.callCount(.start) == 1)
            #expect(beta.callCount(.start) == 1)
        }

        @Test("no further provider is tried once the start deadline has passed")
        func startDeadline() async throws {
            let alpha = ScriptedProvider(id: "alpha")
            let beta = ScriptedProvider(id: "beta")
            alpha.scriptStart(
                .run { () async throws(GatewayError) -> ProviderStartResult in
                    try? await Task.sleep(for: .milliseconds(100))
                    throw GatewayError(.providerTimeout, "slow and failed")
                })
            let h = try ServiceHarness([alpha, beta], policy: VerificationPolicy(startDeadline: .milliseconds(20)))
            await expectAsyncGatewayError(.providerTimeout) { try await h.service.start(try .sms()) }
            #expect(beta.callCount(.start) == 0)
        }

        @Test("providers skipped by routing are named in the started event")
        func skippedProvidersLogged() async throws {
            let mailer = ScriptedProvider(id: "mailer", channels: [.email])
            let alpha = ScriptedProvider(id: "alpha", channels: [.sms])
            let h = try ServiceHarness([mailer, alpha], routes: [.sms: ["mailer", "alpha"]])
            let record = try await h.service.start(try .sms())
            #expect(record.providerID == "alpha")
            let started = try #require(try await h.events(record.id, .started).first)
            #expect(started.detail["skipped"] == "mailer:channel_not_supported")
            #expect(mailer.calls.isEmpty)
        }

        @Test("a provider that needs app verification refuses a start without a proof before it is called")
        func appVerificationRequired() async throws {
            let firebase = ScriptedProvider(
                id: "firebase",
                capabilities: ProviderCapabilities(
                    channels: [.sms], appVerificationKinds: [.recaptcha, .playIntegrity], requiresAppVerification: true)
            )
            let h = try ServiceHarness([firebase])

            let missing = await expectAsyncGatewayError(.appVerificationRequired) {
                try await h.service.start(try .sms())
            }
            #expect(missing?.message.contains("play_integrity, recaptcha") == true)

            var wrongKind = try StartVerification.sms()
            wrongKind.appVerification = AppVerificationProof(kind: .iosReceipt, token: "receipt", secret: "s")
            await expectAsyncGatewayError(.appVerificationRequired) { try await h.service.start(wrongKind) }
            #expect(firebase.callCount(.start) == 0)

            var proven = try StartVerification.sms()
            proven.appVerification = AppVerificationProof(kind: .recaptcha, token: "token")
            let record = try await h.service.start(proven)
            #expect(record.providerID == "firebase")
            #expect(firebase.calls(.start).first?.startRequest?.appVerification?.token == "token")
        }

        @Test("without a proof, a provider that needs one is skipped and the next candidate sends")
        func appVerificationSkipped() async throws {
            let firebase = ScriptedProvider(
                id: "firebase",
                capabilities: ProviderCapabilities(
                    channels: [.sms], appVerificationKinds: [.recaptcha], requiresAppVerification: true))
            let alpha = ScriptedProvider(id: "alpha", channels: [.sms])
            let h = try ServiceHarness([firebase, alpha], routes: [.sms: ["firebase", "alpha"]])
            let record = try await h.service.start(try .sms())
            #expect(record.providerID == "alpha")
            #expect(firebase.callCount(.start) == 0)
            let started = try #require(try await h.events(record.id, .started).first)
            #expect(started.detail["skipped"] == "firebase:app_verification_missing")
        }

        @Test("when the only other candidate failed, its failure is the answer, not the missing proof")
        func appVerificationSkippedAfterFailure() async throws {
            let alpha = ScriptedProvider(id: "alpha", channels: [.sms])
            alpha.scriptStart(.fail(GatewayError(.providerUnavailable, "down")))
            let firebase = ScriptedProvider(
                id: "firebase",
                capabilities: ProviderCapabilities(
                    channels: [.sms], appVerificationKinds: [.recaptcha], requiresAppVerification: true))
            let h = try ServiceHarness([alpha, firebase], routes: [.sms: ["alpha", "firebase"]])
            await expectAsyncGatewayError(.providerUnavailable) { try await h.service.start(try .sms()) }
            #expect(firebase.callCount(.start) == 0)
        }

        @Test("an SMS to a fixed line is unsupported_destination and calls no provider; voice goes out")
        func smsToFixedLine() async throws {
            let alpha = ScriptedProvider(id: "alpha", channels: [.sms, .voice])
            let h = try ServiceHarness([alpha])
            await expectAsyncGatewayError(.unsupportedDestination) {
                try await h.service.start(try .sms("+442079460958"))
            }
            #expect(alpha.calls.isEmpty)
            var voice = try StartVerification.sms("+442079460958")
            voice.channel = .voice
            let record = try await h.service.start(voice)
            #expect(record.channel == .voice)
            // A mobile and a NANP number (fixed line or mobile) may get an SMS.
            _ = try await h.service.start(try .sms("+447400123456"))
            _ = try await h.service.start(try .sms("+16505553434"))
            #expect(alpha.callCount(.start) == 3)
        }

        @Test("a channel no provider can send is unsupported_channel and calls no provider")
        func unsupportedChannel() async throws {
            let alpha = ScriptedProvider(id: "alpha", channels: [.sms])
            let h = try ServiceHarness([alpha])
            let request = StartVerification(destination: .email("ana@example.com"), channel: .email)
            await expectAsyncGatewayError(.unsupportedChannel) { try await h.service.start(request) }
            #expect(alpha.calls.isEmpty)
        }

        @Test("a forced provider bypasses routing; an unknown one is invalid_request")
        func forcedProvider() async throws {
            let alpha = ScriptedProvider(id: "alpha")
            let beta = ScriptedProvider(id: "beta")
            let h = try ServiceHarness([alpha, beta])
            let record = try await h.service.start(try .sms(forced: "beta"))
            #expect(record.providerID == "beta")
            #expect(alpha.calls.isEmpty)
            await expectAsyncGatewayError(.invalidRequest) { try await h.service.start(try .sms(forced: "ghost")) }
            #expect(alpha.calls.isEmpty)
            #expect(beta.callCount(.start) == 1)
        }
    }

    // MARK: - check

    @Suite("check")
    struct Check {
        @Test("state the vendor rotates on a wrong code is kept for the next check")
        func wrongCodeRotatesState() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptStart(.succeed(ProviderStartResult(reference: "r", state: ["token": "1"])))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            provider.scriptCheck(.succeed(ProviderCheckResult(status: .pending, state: ["token": "2"])))
            await expectAsyncGatewayError(.incorrectCode) { try await h.check(id, "000000") }
            #expect(try await h.stored(id).providerState == ["token": "2"])
            provider.scriptCheck(.succeed(.approved))
            _ = try await h.check(id, "123456")
            #expect(provider.calls(.check).last?.state == ["token": "2"])
        }

        @Test("a correct code approves the record and returns the vendor's tokens")
        func approves() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptStart(.succeed(ProviderStartResult(reference: "VE123", state: ["session": "s1"])))
            provider.scriptCheck(
                .succeed(ProviderCheckResult(status: .approved, tokens: ["id_token": "tok"], state: ["session": "s2"])))
            let h = try ServiceHarness([provider])
            let started = try await h.service.start(try .sms())

            let outcome = try await h.check(started.id, "123456")

            #expect(outcome.record.status == .approved)
            #expect(outcome.providerTokens == ["id_token": "tok"])
            #expect(outcome.record.attempts == 1)
            #expect(outcome.record.providerState == ["session": "s2"])
            #expect(try await h.stored(started.id).status == .approved)
            let call = try #require(provider.calls(.check).first)
            #expect(call.code == "123456")
            #expect(call.reference == "VE123")
            #expect(call.state == ["session": "s1"])
            let checked = try await h.events(started.id, .checked)
            #expect(checked.map { $0.detail["outcome"] } == ["approved"])
            #expect(checked.map { $0.detail["attempt"] } == ["1"])
            #expect(try await h.events(started.id, .statusChanged).map { $0.detail["status"] } == ["approved"])
        }

        @Test("wrong codes leave 4, 3, 2, 1 attempts, the fifth is max_attempts_reached, and later checks are refused")
        func wrongCodesCountDown() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.setFallbackCheck(.succeed(.wrongCode))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id

            var remaining: [Int?] = []
            for _ in 1...4 {
                let error = await expectAsyncGatewayError(.incorrectCode) { try await h.check(id, "000000") }
                remaining.append(error?.attemptsRemaining)
            }
            #expect(remaining == [4, 3, 2, 1])

            let fifth = await expectAsyncGatewayError(.maxAttemptsReached) { try await h.check(id, "000000") }
            #expect(fifth?.attemptsRemaining == 0)
            let record = try await h.service.get(id: id)
            #expect(record.status == .maxAttemptsReached)
            #expect(record.attempts == 5)

            provider.setFallbackCheck(.succeed(.approved))
            await expectAsyncGatewayError(.maxAttemptsReached) { try await h.check(id, "123456") }
            #expect(provider.callCount(.check) == 5, "a settled verification never reaches the vendor again")
        }

        @Test("the vendor's own lower count of attempts left is what the caller sees")
        func vendorCountWins() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(
                .succeed(ProviderCheckResult(status: .pending, attemptsRemaining: 2)),
                .succeed(ProviderCheckResult(status: .pending, attemptsRemaining: 0)))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let first = await expectAsyncGatewayError(.incorrectCode) { try await h.check(id, "000000") }
            #expect(first?.attemptsRemaining == 2)
            let second = await expectAsyncGatewayError(.maxAttemptsReached) { try await h.check(id, "000000") }
            #expect(second?.attemptsRemaining == 0)
            #expect(try await h.stored(id).status == .maxAttemptsReached)
        }

        @Test("a vendor max_attempts_reached error settles the record")
        func vendorMaxAttempts() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(
                .fail(
                    GatewayError(
                        .maxAttemptsReached, "vendor says too many",
                        vendor: .init(providerID: "alpha", code: "60202", httpStatus: 429))))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let error = await expectAsyncGatewayError(.maxAttemptsReached) { try await h.check(id, "000000") }
            #expect(error?.attemptsRemaining == 0)
            #expect(error?.vendor?.code == "60202", "the vendor detail is kept")
            #expect(try await h.service.get(id: id).status == .maxAttemptsReached)
            await expectAsyncGatewayError(.maxAttemptsReached) { try await h.check(id, "123456") }
            #expect(provider.callCount(.check) == 1)
        }

        @Test(
            "a vendor that no longer knows the verification expires it",
            arguments: [GatewayError.Code.notFound, .expired])
        func vendorForgot(_ code: GatewayError.Code) async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(.fail(GatewayError(code, "vendor: no such verification")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(.expired) { try await h.check(id, "123456") }
            #expect(try await h.service.get(id: id).status == .expired)
            await expectAsyncGatewayError(.expired) { try await h.check(id, "123456") }
            #expect(provider.callCount(.check) == 1)
        }

        @Test(
            "a vendor's already_approved or canceled error moves the record to that state",
            arguments: [
                (GatewayError.Code.alreadyApproved, VerificationStatus.approved), (.canceled, .canceled),
            ])
        func vendorStateErrors(_ code: GatewayError.Code, _ status: VerificationStatus) async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(.fail(GatewayError(code, "vendor state")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(code) { try await h.check(id, "123456") }
            #expect(try await h.stored(id).status == status)
            await expectAsyncGatewayError(code) { try await h.check(id, "123456") }
            #expect(provider.callCount(.check) == 1, "the settled state answers later checks without the vendor")
        }

        @Test("a vendor lockout ends the verification as denied (account_locked); the vendor is not called again")
        func vendorLockout() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(.fail(GatewayError(.accountLocked, "vendor: locked")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let error = await expectAsyncGatewayError(.accountLocked) { try await h.check(id, "123456") }
            #expect(error?.isRetryable == false)
            let record = try await h.stored(id)
            #expect(record.status == .denied)
            #expect(record.statusReason == VerificationRecord.accountLockedReason)
            for _ in 0..<3 { await expectAsyncGatewayError(.accountLocked) { try await h.check(id, "123456") } }
            await expectAsyncGatewayError(.accountLocked) { try await h.service.resend(id: id) }
            #expect(provider.callCount(.check) == 1)
        }

        @Test("a wrong code the vendor throws keeps its attempt, and the last one ends the verification")
        func thrownWrongCode() async throws {
            let provider = ScriptedProvider(id: "alpha")
            for _ in 0..<5 { provider.scriptCheck(.fail(GatewayError(.incorrectCode, "vendor: wrong code"))) }
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            for left in [4, 3, 2, 1] {
                let error = await expectAsyncGatewayError(.incorrectCode) { try await h.check(id, "000000") }
                #expect(error?.attemptsRemaining == left)
            }
            await expectAsyncGatewayError(.maxAttemptsReached) { try await h.check(id, "000000") }
            #expect(try await h.stored(id).status == .maxAttemptsReached)
            await expectAsyncGatewayError(.maxAttemptsReached) { try await h.check(id, "000000") }
            #expect(provider.callCount(.check) == 5)
        }

        @Test(
            "a vendor failure that reached no verdict gives the attempt back",
            arguments: [GatewayError.Code.providerTimeout, .providerUnavailable, .providerError, .internal])
        func noVerdictRefunds(_ code: GatewayError.Code) async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(.fail(GatewayError(code, "no verdict")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(code) { try await h.check(id, "123456") }
            let record = try await h.stored(id)
            #expect(record.status == .pending)
            #expect(record.attempts == 0)
        }

        @Test("a vendor that reports a final status settles the record with it")
        func vendorFinalStatus() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(.succeed(ProviderCheckResult(status: .denied)))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(.denied) { try await h.check(id, "123456") }
            #expect(try await h.stored(id).status == .denied)
        }

        @Test("a verification expires when the clock passes its expiry, and a check is then refused")
        func expiresWithTheClock() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.setFallbackCheck(.succeed(.approved))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id

            h.clock.advance(by: 599)
            #expect(try await h.service.get(id: id).status == .pending)
            h.clock.advance(by: 1)
            #expect(try await h.service.get(id: id).status == .expired)
            #expect(try await h.stored(id).status == .expired, "the expiry is written back")
            await expectAsyncGatewayError(.expired) { try await h.check(id, "123456") }
            #expect(provider.callCount(.check) == 0)
            #expect(try await h.events(id, .statusChanged).map { $0.detail["status"] } == ["expired"])
        }

        @Test("a check is refused as expired even without a prior get")
        func checkAfterExpiry() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.setFallbackCheck(.succeed(.approved))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            h.clock.advance(by: 3600)
            await expectAsyncGatewayError(.expired) { try await h.check(id, "123456") }
            #expect(provider.callCount(.check) == 0)
        }

        @Test("a check after approval is already_approved and does not reach the vendor")
        func checkAfterApproval() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.setFallbackCheck(.succeed(.approved))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            _ = try await h.check(id, "123456")
            await expectAsyncGatewayError(.alreadyApproved) { try await h.check(id, "123456") }
            #expect(provider.callCount(.check) == 1)
        }

        @Test("polling a push approval with refresh costs no attempt, and a check is refused for it")
        func pushPollIsFree() async throws {
            let provider = ScriptedProvider(
                id: "twilio", capabilities: ProviderCapabilities(channels: [.push], completesWithoutCode: [.push]))
            provider.setFallbackStatus(.succeed(VerificationChange(status: .pending)))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(.push()).id
            for _ in 0..<10 {
                let outcome = try await h.service.read(id: id, refresh: true)
                #expect(outcome.record.status == .pending)
                #expect(outcome.record.attempts == 0)
                #expect(!outcome.carriesToken)
            }
            await expectAsyncGatewayError(.invalidState) { try await h.check(id, "123456") }
            #expect(try await h.stored(id).attempts == 0)
            provider.setFallbackStatus(.succeed(VerificationChange(status: .approved, tokens: ["device": "ok"])))
            let approved = try await h.service.read(id: id, refresh: true)
            #expect(approved.record.status == .approved)
            #expect(approved.carriesToken, "the first read after the approval carries the token")
            #expect(approved.providerTokens == ["device": "ok"])
            let again = try await h.service.read(id: id, refresh: true)
            #expect(again.record.status == .approved && !again.carriesToken, "and only the first")
            #expect(provider.callCount(.check) == 0)
            #expect(provider.callCount(.status) == 11, "a final verification is not asked about again")
        }

        @Test("a check of a canceled verification is refused without reaching the vendor")
        func checkAfterCancel() async throws {
            let provider = ScriptedProvider(id: "alpha")
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            _ = try await h.service.cancel(id: id)
            await expectAsyncGatewayError(.canceled) { try await h.check(id, "123456") }
            #expect(provider.callCount(.check) == 0)
        }
    }

    // MARK: - resend

    @Suite("resend")
    struct Resend {
        @Test("resend goes to the provider that started the verification and counts the send")
        func resendCounts() async throws {
            let alpha = ScriptedProvider(id: "alpha")
            let beta = ScriptedProvider(id: "beta")
            alpha.scriptStart(.succeed(ProviderStartResult(reference: "VE1")))
            let h = try ServiceHarness([alpha, beta])
            let id = try await h.service.start(try .sms()).id
            let record = try await h.service.resend(id: id)
            #expect(record.sends == 2)
            #expect(record.providerReference == "VE1", "no new reference was given, the old one stays")
            #expect(try await h.stored(id) == record)
            let call = try #require(alpha.calls(.resend).first)
            #expect(call.reference == "VE1")
            #expect(call.requestedChannel == nil)
            #expect(beta.calls.isEmpty)
            #expect(try await h.events(id, .resent).map { $0.detail["sends"] } == ["2"])
        }

        @Test("resend adopts the new reference, state, expiry and language the provider returns")
        func resendAdoptsVendorState() async throws {
            let provider = ScriptedProvider(id: "sinch")
            provider.scriptStart(.succeed(ProviderStartResult(reference: "old", state: ["s": "1"])))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let newExpiry = h.clock.now.addingTimeInterval(300)
            provider.scriptResend(
                .succeed(
                    ProviderStartResult(
                        reference: "new", state: ["s": "2"], expiresAt: newExpiry, contentLanguage: "fr")))
            let record = try await h.service.resend(id: id)
            #expect(record.providerReference == "new")
            #expect(record.providerState == ["s": "2"])
            #expect(record.expiresAt == newExpiry)
            #expect(record.contentLanguage == "fr")
            provider.scriptCheck(.succeed(.approved))
            _ = try await h.check(id, "123456")
            #expect(provider.calls(.check).first?.reference == "new", "later calls use the new reference")
        }

        @Test("a resend the vendor answered without sending (code still valid) is not counted as a send")
        func resendThatSentNothing() async throws {
            let provider = ScriptedProvider(id: "firebase")
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            provider.scriptResend(.succeed(ProviderStartResult(reference: "same", sentNothing: true)))
            let record = try await h.service.resend(id: id)
            #expect(record.sends == 1)
            #expect(try await h.events(id, .resent).map { $0.detail["sent"] } == ["false"])
            #expect(try await h.service.resend(id: id).sends == 2)
        }

        @Test("sends stop at the policy's maximum with max_sends_reached")
        func maxSends() async throws {
            let provider = ScriptedProvider(id: "alpha")
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            for expected in 2...5 {
                #expect(try await h.service.resend(id: id).sends == expected)
            }
            await expectAsyncGatewayError(.maxSendsReached) { try await h.service.resend(id: id) }
            #expect(provider.callCount(.resend) == 4)
            #expect(try await h.stored(id).sends == 5)
        }

        @Test("a channel change is refused when the provider cannot change channel on resend")
        func channelChangeRefused() async throws {
            let provider = ScriptedProvider(
                id: "alpha",
                capabilities: ProviderCapabilities(channels: [.sms, .voice], resendCanChangeChannel: false))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(.unsupportedChannel) {
                try await h.service.resend(id: id, request: ResendRequest(channel: .voice))
            }
            #expect(provider.callCount(.resend) == 0)
            #expect(try await h.stored(id).channel == .sms)
            #expect(try await h.stored(id).sends == 1)
            #expect(
                try await h.service.resend(id: id, request: ResendRequest(channel: .sms)).sends == 2,
                "naming the same channel is fine")
        }

        @Test("a channel change goes through when the provider can change channel")
        func channelChangeAllowed() async throws {
            let provider = ScriptedProvider(
                id: "alpha", capabilities: ProviderCapabilities(channels: [.sms, .voice], resendCanChangeChannel: true))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let record = try await h.service.resend(id: id, request: ResendRequest(channel: .voice))
            #expect(record.channel == .voice)
            #expect(provider.calls(.resend).first?.requestedChannel == .voice)
        }

        @Test(
            "a channel change to a channel the provider lacks, or to another kind of destination, is refused",
            arguments: [Channel.whatsapp, .email, .push])
        func channelChangeToUnservedChannel(_ channel: Channel) async throws {
            let provider = ScriptedProvider(
                id: "alpha",
                capabilities: ProviderCapabilities(
                    channels: [.sms, .voice, .email, .push], resendCanChangeChannel: true))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(.unsupportedChannel) {
                try await h.service.resend(id: id, request: ResendRequest(channel: channel))
            }
            #expect(provider.callCount(.resend) == 0)
        }

        @Test("a provider that cannot resend is never asked to")
        func resendUnsupported() async throws {
            let provider = ScriptedProvider(
                id: "alpha", capabilities: ProviderCapabilities(channels: [.sms], withheld: [.resend]))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(.invalidRequest) { try await h.service.resend(id: id) }
            #expect(provider.callCount(.resend) == 0)
        }

        @Test(
            "a vendor that no longer knows the verification expires it on resend",
            arguments: [GatewayError.Code.notFound, .expired])
        func resendVendorForgot(_ code: GatewayError.Code) async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptResend(.fail(GatewayError(code, "gone")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(code) { try await h.service.resend(id: id) }
            #expect(try await h.stored(id).status == .expired)
            #expect(try await h.stored(id).sends == 1)
        }

        @Test("a failed resend does not count as a send")
        func failedResendNotCounted() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptResend(.fail(GatewayError(.providerUnavailable, "down")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(.providerUnavailable) { try await h.service.resend(id: id) }
            let record = try await h.stored(id)
            #expect(record.sends == 1)
            #expect(record.status == .pending)
        }

        @Test("resend of an approved verification is already_approved")
        func resendAfterApproval() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(.succeed(.approved))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            _ = try await h.check(id, "123456")
            await expectAsyncGatewayError(.alreadyApproved) { try await h.service.resend(id: id) }
            #expect(provider.callCount(.resend) == 0)
        }
    }

    // MARK: - cancel

    @Suite("cancel")
    struct Cancel {
        @Test("cancel tells the vendor and marks the record canceled")
        func cancels() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptStart(.succeed(ProviderStartResult(reference: "VE1")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let record = try await h.service.cancel(id: id)
            #expect(record.status == .canceled)
            #expect(try await h.stored(id).status == .canceled)
            #expect(provider.calls(.cancel).map(\.reference) == ["VE1"])
            #expect(try await h.events(id, .canceled).map { $0.detail["status"] } == ["canceled"])
        }

        @Test("canceling twice returns the canceled record and calls the vendor once")
        func cancelTwice() async throws {
            let provider = ScriptedProvider(id: "alpha")
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let first = try await h.service.cancel(id: id)
            let second = try await h.service.cancel(id: id)
            #expect(second.status == .canceled)
            #expect(second == first)
            #expect(provider.callCount(.cancel) == 1)
        }

        @Test("cancel after approval is already_approved")
        func cancelAfterApproval() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(.succeed(.approved))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            _ = try await h.check(id, "123456")
            await expectAsyncGatewayError(.alreadyApproved) { try await h.service.cancel(id: id) }
            #expect(provider.callCount(.cancel) == 0)
            #expect(try await h.stored(id).status == .approved)
        }

        @Test(
            "a vendor that already forgot the verification still lets it be canceled",
            arguments: [GatewayError.Code.notFound, .expired])
        func cancelVendorForgot(_ code: GatewayError.Code) async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCancel(.fail(GatewayError(code, "gone")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            #expect(try await h.service.cancel(id: id).status == .canceled)
        }

        @Test("a vendor failure on cancel reaches the caller and leaves the verification pending")
        func cancelVendorFailure() async throws {
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCancel(.fail(GatewayError(.providerUnavailable, "down")))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            await expectAsyncGatewayError(.providerUnavailable) { try await h.service.cancel(id: id) }
            #expect(try await h.stored(id).status == .pending)
        }

        @Test("a provider without cancel is not called, and the verification is still canceled")
        func cancelUnsupported() async throws {
            let provider = ScriptedProvider(
                id: "alpha", capabilities: ProviderCapabilities(channels: [.sms], withheld: [.cancel]))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            #expect(try await h.service.cancel(id: id).status == .canceled)
            #expect(provider.callCount(.cancel) == 0)
        }
    }

    // MARK: - ids

    @Suite("ids")
    struct IDs {
        static let hex32 = "0123456789abcdef0123456789abcdef"
        static let hex31 = String(hex32.dropLast())
        static let malformed: [String] = [
            "", "vf_", "vf", "abc", "vf_" + hex32.uppercased(), "vf_" + hex31, "vf_" + hex32 + "0",
            "VF_" + hex32, "xx_" + hex32, "vf_" + String(repeating: "g", count: 32), "../../etc/passwd",
            "vf_" + hex31 + "%", "vf_" + hex31 + " ", "vf_" + hex31 + "\u{0}", "vf_0123456789abcdef' OR '1'='1",
            "vf_" + hex31 + "é",
        ]

        @Test("a malformed id is not_found without reaching the store", arguments: malformed)
        func malformedIDs(_ id: String) async throws {
            let store = SpyVerificationStore()
            let provider = ScriptedProvider(id: "alpha")
            let h = try ServiceHarness([provider], store: store)
            await expectAsyncGatewayError(.notFound) { try await h.service.get(id: id) }
            await expectAsyncGatewayError(.notFound) { try await h.check(id, "123456") }
            await expectAsyncGatewayError(.notFound) { try await h.service.resend(id: id) }
            await expectAsyncGatewayError(.notFound) { try await h.service.cancel(id: id) }
            #expect(store.reads == 0)
            #expect(provider.calls.isEmpty)
        }

        @Test("a well-formed id that is not stored is not_found")
        func unknownID() async throws {
            let store = SpyVerificationStore()
            let h = try ServiceHarness([ScriptedProvider(id: "alpha")], store: store)
            let id = "vf_" + Self.hex32
            #expect(VerificationService.isWellFormedID(id))
            await expectAsyncGatewayError(.notFound) { try await h.service.get(id: id) }
            await expectAsyncGatewayError(.notFound) { try await h.check(id, "123456") }
            #expect(store.reads == 2)
        }

        @Test("new ids are vf_ and 32 lowercase hex digits")
        func newIDShape() {
            let ids = (0..<100).map { _ in VerificationService.newID() }
            #expect(Set(ids).count == 100)
            for id in ids {
                #expect(id.count == 35)
                #expect(id.hasPrefix("vf_"))
                #expect(id.dropFirst(3).allSatisfy { $0.isHexDigit && !$0.isUppercase })
                #expect(VerificationService.isWellFormedID(id))
            }
        }

        @Test("ids sort by when they were made (milliseconds), and differ within one millisecond")
        func timeOrderedIDs() {
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            let ids = (0..<50).map { Hex.timeOrdered(now: start.addingTimeInterval(Double($0) * 0.002)) }
            #expect(ids == ids.sorted())
            #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy { $0.isHexDigit && !$0.isUppercase } })
            #expect(ids[0].hasPrefix(String(1_800_000_000_000, radix: 16).leftPadded(to: 12)))
            let same = (0..<100).map { _ in Hex.timeOrdered(now: start) }
            #expect(Set(same).count == 100)
            #expect(Set(same.map { $0.prefix(12) }).count == 1)
        }
    }

    // MARK: - concurrency

    @Suite("concurrency")
    struct Concurrency {
        @Test("only a check's lease (and a failed call's event) is written provisionally; the settle is answered")
        func leaseIsTheOnlyProvisionalWrite() async throws {
            let store = SpyVerificationStore()
            let provider = ScriptedProvider(id: "alpha")
            provider.scriptCheck(
                .succeed(.wrongCode), .fail(GatewayError(.providerUnavailable, "down")), .succeed(.approved))
            let h = try ServiceHarness([provider], store: store)
            let id = try await h.service.start(try .sms()).id
            #expect(store.provisional.isEmpty)
            await expectAsyncGatewayError(.incorrectCode) { try await h.check(id, "000000") }
            #expect(store.provisional == ["lease"])
            #expect(try await h.stored(id).checkLeaseUntil == nil)
            await expectAsyncGatewayError(.providerUnavailable) { try await h.check(id, "000000") }
            #expect(store.provisional == ["lease", "lease", "events"])
            let released = try await h.stored(id)
            #expect(released.checkLeaseUntil == nil && released.attempts == 1)
            _ = try await h.check(id, "123456")
            #expect(store.provisional == ["lease", "lease", "events", "lease"])
            let approved = try await h.stored(id)
            #expect(approved.status == .approved && approved.checkLeaseUntil == nil && approved.attempts == 2)
        }

        @Test("20 parallel wrong-code checks never make more than 5 vendor calls or count more than 5 attempts")
        func parallelWrongCodes() async throws {
            let store = SpyVerificationStore()
            let provider = ScriptedProvider(id: "alpha")
            provider.setFallbackCheck(
                .run {
                    await Task.yield()
                    return .wrongCode
                })
            // A lease of ten minutes: the waiters' bound is the lease, and under a loaded machine 20 serialized
            // checks may take longer than the default 30 s; a waiter giving up is not what this test is about.
            let h = try ServiceHarness([provider], policy: VerificationPolicy(checkLease: 600), store: store)
            let id = try await h.service.start(try .sms()).id
            let service = h.service

            let errors = await withTaskGroup(of: GatewayError?.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        do throws(GatewayError) {
                            _ = try await service.check(
                                CheckVerification(verificationID: id, code: "00000\(index % 10)"))
                            return nil
                        } catch {
                            return error
                        }
                    }
                }
                var errors: [GatewayError?] = []
                for await error in group { errors.append(error) }
                return errors
            }

            #expect(provider.callCount(.check) <= 5)
            #expect(store.highestAttempts <= 5)
            let record = try await h.stored(id)
            #expect(record.attempts <= 5)
            #expect(record.status == .maxAttemptsReached)
            let codes = errors.map { $0?.code }
            #expect(codes.allSatisfy { $0 == .incorrectCode || $0 == .maxAttemptsReached }, "\(codes)")
            let told = errors.compactMap { $0?.code == .incorrectCode ? $0?.attemptsRemaining : nil }
            #expect(Set(told).count == told.count, "no two callers are told the same count of attempts left: \(told)")
            #expect(told.allSatisfy { (1...4).contains($0) })
        }

        @Test("an approval of the last allowed attempt is not lost to a check that arrives meanwhile")
        func lastAttemptApprovalSurvivesConcurrentCheck() async throws {
            let provider = ScriptedProvider(id: "alpha")
            let gate = ScriptedGate()
            provider.scriptCheck(
                .succeed(.wrongCode), .succeed(.wrongCode), .succeed(.wrongCode), .succeed(.wrongCode),
                .run {
                    await gate.wait()
                    return .approved
                })
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            for _ in 1...4 {
                await expectAsyncGatewayError(.incorrectCode) { try await h.check(id, "000000") }
            }
            let service = h.service
            let fifth = inFlight { () throws(GatewayError) in
                try await service.check(CheckVerification(verificationID: id, code: "123456"))
            }
            #expect(await provider.waitForCalls(.check, count: 5))

            // A sixth check while the fifth holds the last attempt waits for its answer (the attempt could
            // come back), and then hears the truth: approved, not max_attempts_reached on a pending record.
            let sixth = inFlight { () throws(GatewayError) in
                try await service.check(CheckVerification(verificationID: id, code: "999999"))
            }
            try await Task.sleep(for: .milliseconds(50))
            gate.open()
            let outcome = try await fifth.value.get()
            #expect(outcome.record.status == .approved, "the vendor approved the fifth code")
            if case .failure(let error) = await sixth.value {
                #expect(error.code == .alreadyApproved)
            } else {
                Issue.record("the sixth check must not approve")
            }
            #expect(try await h.stored(id).status == .approved)
            #expect(provider.callCount(.check) == 5)
        }

        @Test("a cancel that arrives while a check is at the vendor waits for it, and then hears already_approved")
        func checkSuccessMeansApproved() async throws {
            let provider = ScriptedProvider(id: "alpha")
            let gate = ScriptedGate()
            provider.scriptCheck(
                .run {
                    await gate.wait()
                    return .approved
                })
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let service = h.service
            let check = inFlight { () throws(GatewayError) in
                try await service.check(CheckVerification(verificationID: id, code: "123456"))
            }
            #expect(await provider.waitForCalls(.check, count: 1))
            let cancel = inFlight { () throws(GatewayError) in try await service.cancel(id: id) }
            try await Task.sleep(for: .milliseconds(20))
            #expect(provider.callCount(.cancel) == 0, "the cancel waits for the check")
            gate.open()
            #expect(try await check.value.get().record.status == .approved)
            let result = await cancel.value
            expectGatewayError(.alreadyApproved) { () throws(GatewayError) in try result.get() }
            #expect(provider.callCount(.cancel) == 0)
            #expect(try await h.stored(id).status == .approved)
        }

        @Test("a check that arrives while a cancel is at the vendor waits for it, and then hears canceled")
        func cancelLosingToApproval() async throws {
            let provider = ScriptedProvider(id: "alpha")
            let gate = ScriptedGate()
            provider.scriptCancel(.run { await gate.wait() })
            provider.scriptCheck(.succeed(.approved))
            let h = try ServiceHarness([provider])
            let id = try await h.service.start(try .sms()).id
            let service = h.service
            let cancel = inFlight { () throws(GatewayError) in try await service.cancel(id: id) }
            #expect(await provider.waitForCalls(.cancel, count: 1))
            let check = inFlight { () throws(GatewayError) in
                try await service.check(CheckVerification(verificationID: id, code: "123456"))
            }
            try await Task.sleep(for: .milliseconds(20))
            gate.open()
            #expect(try await cancel.value.get().status == .canceled)
            let result = await check.value
            expectGatewayError(.canceled) { () throws(GatewayError) in try result.get() }
            #expect(provider.callCount(.check) == 0)
            #expect(try await h.stored(id).status == .canceled)
        }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        String(repeating: "0", count: max(0, length - count)) + self
    }
}
