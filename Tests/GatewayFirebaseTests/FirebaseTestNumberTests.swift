import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayFirebase

@Suite("Firebase test numbers")
struct FirebaseTestNumberTests {
    @Test("a test number needs no proof; any other number does")
    func noProofNeeded() throws {
        let h = try FirebaseHarness()
        #expect(
            h.provider.requiresAppVerification(for: try FirebaseHarness.sms(FirebaseHarness.testNumber, proof: nil))
                == false)
        #expect(h.provider.requiresAppVerification(for: try FirebaseHarness.sms(proof: nil)))
        #expect(h.provider.capabilities.requiresAppVerification)
    }

    @Test("a test number starts without a proof or an SMS, and Firebase signs it in with its fixed code")
    func signsInWithoutSMS() async throws {
        let h = try FirebaseHarness()
        let started = try await h.start(FirebaseHarness.testNumber, proof: nil, locales: ["fr-FR"])
        #expect(started.sentNothing)
        #expect(started.state["test_number"] == "true")
        #expect(started.state["session_info"] != nil)
        #expect(started.reference?.hasPrefix("sha256:") == true)
        #expect(started.contentLanguage == "fr")
        let send = try #require(h.transport.requests.first)
        #expect(send.url.path().hasSuffix(":sendVerificationCode"))
        let body = try #require(try JSONSerialization.jsonObject(with: send.body) as? [String: Any])
        #expect(Set(body.keys) == ["phoneNumber"], "no proof goes with a test number")
        let verification = try FirebaseHarness.verification(started, to: FirebaseHarness.testNumber)

        #expect(try await h.provider.check(verification, code: "654321").status == .pending)
        let resent = try await h.provider.resend(verification, request: ResendRequest())
        #expect(resent.sentNothing)
        #expect(resent.state == started.state)
        let approved = try await h.provider.check(verification, code: FirebaseHarness.testCode)
        #expect(approved.status == .approved)
        #expect(approved.tokens["idToken"] != nil, "Firebase signs a test number in like any other")
        #expect(approved.tokens["localId"] != nil)
        #expect(h.outbox.all.isEmpty)
    }

    @Test("a test number started with a proof sends Firebase none")
    func proofIgnored() async throws {
        let h = try FirebaseHarness()
        _ = try await h.start(FirebaseHarness.testNumber, proof: .recaptcha)
        let send = try #require(h.transport.requests.first)
        let body = try #require(try JSONSerialization.jsonObject(with: send.body) as? [String: Any])
        #expect(body["recaptchaToken"] == nil)
        #expect(h.outbox.all.isEmpty)
    }

    @Test("test numbers come from the provider's own setting, in any spelling of the number")
    func configuredNumbers() async throws {
        let h = try FirebaseHarness(
            settings: ["test_numbers": " +1 (650) 555-0199 = 999111 , +447700900123=222333"],
            emulatorTestNumbers: ["+16505550199": "999111", "+447700900123": "222333"])
        let uk = try await h.start("+447700900123", proof: nil)
        #expect(uk.sentNothing)
        let check = try await h.provider.check(FirebaseHarness.verification(uk, to: "+447700900123"), code: "222333")
        #expect(check.status == .approved)
        let us = try await h.start("+16505550199", proof: nil)
        #expect(us.sentNothing)
        // The sandbox number is no longer configured: it needs a proof like any other.
        #expect(
            h.provider.requiresAppVerification(for: try FirebaseHarness.sms(FirebaseHarness.testNumber, proof: nil)))
        #expect(h.outbox.all.isEmpty)
    }

    @Test("a test number the project does not list is refused by Firebase, as a missing proof")
    func unlistedAtFirebase() async throws {
        let h = try FirebaseHarness(emulatorTestNumbers: [:])
        await expectGatewayError(.appVerificationRequired) { try await h.start(FirebaseHarness.testNumber, proof: nil) }
        #expect(h.outbox.all.isEmpty)
    }

    @Test("a test-number verification stored without a session compares the configured code, or expires once removed")
    func storedWithoutSession() async throws {
        let state = try ProviderState(
            FirebaseVerificationState(sessionInfo: nil, sentAt: Date(timeIntervalSince1970: 0), testNumber: true))
        let stored = ProviderVerification(
            destination: .phone(try PhoneNumber(parsing: FirebaseHarness.testNumber)), channel: .sms, reference: nil,
            state: state)
        let configured = try FirebaseHarness()
        #expect(try await configured.provider.check(stored, code: "654321").status == .pending)
        #expect(try await configured.provider.check(stored, code: FirebaseHarness.testCode).status == .approved)
        let removed = try FirebaseHarness(settings: ["test_numbers": "+16505550111=111111"])
        await expectGatewayError(.expired) { try await removed.provider.check(stored, code: FirebaseHarness.testCode) }
        #expect(configured.transport.requests.isEmpty && removed.transport.requests.isEmpty)
    }

    @Test("through the engine, a test number starts without a proof while another number is refused")
    func engineSkipsProofForTestNumbers() async throws {
        let clock = ManualClock()
        let emulator = FirebaseEmulator(context: EmulatorContext(clock: clock, logger: CapturedLogs().logger()))
        let transport = RecordingTransport(InProcessTransport(emulator: emulator, pathPrefix: FirebaseHarness.mount))
        let service = try Self.service(transport, clock: clock)

        let record = try await service.start(try FirebaseHarness.sms(FirebaseHarness.testNumber, proof: nil))
        #expect(record.sends == 0, "a test number receives nothing")
        let outcome = try await service.check(
            CheckVerification(verificationID: record.id, code: FirebaseHarness.testCode))
        #expect(outcome.record.status == .approved)
        #expect(outcome.providerTokens["idToken"] != nil)
        #expect(transport.requests.count == 2)

        await expectGatewayError(.appVerificationRequired) {
            try await service.start(try FirebaseHarness.sms(proof: nil))
        }
        #expect(transport.requests.count == 2, "the engine refuses a start without a proof before calling")
    }

    @Test("through the engine, a full sign-in reaches the emulator and returns Firebase's tokens")
    func engineHappyPath() async throws {
        let clock = ManualClock()
        let outbox = SandboxOutbox()
        let emulator = FirebaseEmulator(
            context: EmulatorContext(clock: clock, outbox: outbox, logger: CapturedLogs().logger()))
        let store = InMemoryVerificationStore()
        let service = try Self.service(
            InProcessTransport(emulator: emulator, pathPrefix: FirebaseHarness.mount), clock: clock, store: store)

        let record = try await service.start(try FirebaseHarness.sms(locales: ["de-DE"]))
        #expect(record.contentLanguage == "de")
        #expect(record.providerState["session_info"] != nil)
        let code = try #require(outbox.last(to: FirebaseHarness.number)?.code)
        let outcome = try await service.check(CheckVerification(verificationID: record.id, code: code))
        #expect(outcome.record.status == .approved)
        #expect(outcome.providerTokens["idToken"] != nil)
        let stored = try #require(try await store.record(id: record.id))
        #expect(stored.providerState["session_info"] == nil, "the spent session is not kept")
    }

    /// The engine with one provider, Firebase's sandbox settings over `transport`.
    static func service(
        _ transport: any HTTPTransport, clock: ManualClock,
        store: InMemoryVerificationStore = InMemoryVerificationStore()
    ) throws -> VerificationService {
        let logger = CapturedLogs().logger()
        let settings = FirebasePlugin.plugin.sandboxSettings(
            try #require(URL(string: "http://gateway.test/sandbox/firebase")))
        let registry = try ProviderRegistry(
            plugins: [FirebasePlugin.plugin],
            configurations: [ProviderConfiguration(id: "firebase", plugin: "firebase", settings: settings)],
            context: { configuration in
                ProviderContext(
                    providerID: configuration.id, settings: configuration.settings, transport: transport, clock: clock,
                    logger: logger)
            })
        return VerificationService(
            registry: registry, routing: RoutingTable(defaultOrder: ["firebase"]), store: store, clock: clock,
            logger: logger)
    }
}
