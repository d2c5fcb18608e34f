import Foundation
import GatewayCore
import GatewayTestSupport
import Synchronization
import Testing

/// A stand-in for a CAMARA provider: a SIM-swap signal whose answers the test sets, and a silent step that
/// completes without a code, whose result arrives as a callback `?state=<reference>&ok=<0|1>`.
final class FakeNetworkSignals: SimSwapSignalProvider, CallbackReceivingProvider {
    let id: String
    let capabilities = ProviderCapabilities(channels: [.silentAuth], completesWithoutCode: [.silentAuth])
    private let answer = Mutex<Result<Bool, GatewayError>>(.success(false))
    private let counts = Mutex((signals: 0, starts: 0))

    init(id: String = "signals") { self.id = id }

    func answer(_ result: Result<Bool, GatewayError>) { answer.withLock { $0 = result } }
    var signalCalls: Int { counts.withLock { $0.signals } }

    func simSwapped(_ number: PhoneNumber, withinHours hours: Int) async throws(GatewayError) -> Bool {
        counts.withLock { $0.signals += 1 }
        return try answer.withLock { $0 }.get()
    }

    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        let n = counts.withLock { counts in
            counts.starts += 1
            return counts.starts
        }
        return ProviderStartResult(
            reference: "silent-\(n)", channel: .silentAuth,
            nextAction: .openURL(
                NextAction.URLOpening(url: "https://operator.example/authorize?n=\(n)", cellularOnly: true)))
    }

    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        throw GatewayError(.invalidState, "no code")
    }

    func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
    {
        let query = FormEncoding.decode(callback.query ?? "")
        let state = query["state"] ?? ""
        let change =
            query["ok"] == "1"
            ? VerificationChange(status: .approved) : VerificationChange(status: .failed, reason: "number_mismatch")
        return CallbackReply(updates: [ProviderUpdate(target: .reference(state), change: change)])
    }

    static func callback(_ reference: String, ok: Bool) -> VendorCallback {
        let query = "state=\(reference)&ok=\(ok ? 1 : 0)"
        return VendorCallback(
            method: .get, url: URL(string: "https://gw.example/callbacks/signals?" + query)!, subpath: "/",
            query: query, headerFields: [:], body: Data())
    }
}

@Suite("Risk step: SIM swap before any vendor")
struct RiskStepTests {
    let signals = FakeNetworkSignals()
    let sms = ScriptedProvider(id: "sms-a", channels: [.sms])

    func harness(
        _ action: RiskPolicy.OnRecentSwap = .refuse, unavailable: RiskPolicy.OnUnavailable = .allow,
        cacheFor: TimeInterval = 300
    ) throws -> ServiceHarness {
        var policy = VerificationPolicy()
        policy.risk = RiskPolicy(
            simSwap: RiskPolicy.SimSwap(providerID: "signals", maxAgeHours: 72, onRecentSwap: action),
            onSignalUnavailable: unavailable, cacheFor: cacheFor)
        return try ServiceHarness([sms, signals], routes: [.sms: ["sms-a"]], policy: policy)
    }

    @Test("refuse: 403 recent_sim_swap, nothing sent, a blocked verification kept with the signal on its timeline")
    func refuse() async throws {
        signals.answer(.success(true))
        let h = try harness()
        let error = await expectAsyncGatewayError(.recentSimSwap) {
            try await h.service.start(try .sms("+447400123456"))
        }
        #expect(error?.httpStatus == 403 && error?.errorClass == .blocked)
        #expect(sms.callCount(.start) == 0)
        let store = try #require(h.store as? InMemoryVerificationStore)
        let refused = try #require(
            try await store.events(after: 0, limit: 100).first { $0.event.kind == .statusChanged })
        let record = try await h.stored(refused.event.verificationID)
        #expect(record.status == .blocked && record.statusReason == "recent_sim_swap" && record.sends == 0)
        let calls = try await h.events(record.id, .providerCall)
        #expect(calls.map { $0.detail["operation"] } == ["sim_swap"])
        #expect(calls.first?.detail["outcome"] == "swapped" && calls.first?.detail["max_age_hours"] == "72")
    }

    @Test("step_up: the verification starts, marked sim_swap: recent; the signal call comes before the start's")
    func stepUp() async throws {
        signals.answer(.success(true))
        let h = try harness(.stepUp)
        let record = try await h.service.start(try .sms("+447400123457"))
        #expect(record.risk == ["sim_swap": "recent"])
        #expect(try await h.stored(record.id).risk == ["sim_swap": "recent"])
        let calls = try await h.events(record.id, .providerCall)
        #expect(calls.map { $0.detail["operation"] } == ["sim_swap", "start"])
        #expect(sms.callCount(.start) == 1)
    }

    @Test("flag: starts unmarked; the answer is on the timeline only. No recent change: no mark either")
    func flagAndClean() async throws {
        signals.answer(.success(true))
        let flagged = try await harness(.flag).service.start(try .sms("+447400123458"))
        #expect(flagged.risk.isEmpty)
        signals.answer(.success(false))
        let h = try harness(.stepUp)
        let clean = try await h.service.start(try .sms("+447400123459"))
        #expect(clean.risk.isEmpty)
        #expect(try await h.events(clean.id, .providerCall).first?.detail["outcome"] == "not_swapped")
    }

    @Test(
        "A signal that cannot be had: allow starts and says so; refuse answers 502 provider_unavailable and sends nothing"
    )
    func unavailable() async throws {
        signals.answer(.failure(GatewayError(.providerUnavailable, "down")))
        let allowing = try harness(.refuse, unavailable: .allow)
        let record = try await allowing.service.start(try .sms("+447400123460"))
        let event = try #require(try await allowing.events(record.id, .providerCall).first)
        #expect(event.detail["outcome"] == "provider_unavailable" && event.detail["unavailable"] == "allow")
        let starts = sms.callCount(.start)
        let refusing = try harness(.refuse, unavailable: .refuse)
        let error = await expectAsyncGatewayError(.providerUnavailable) {
            try await refusing.service.start(try .sms("+447400123461"))
        }
        #expect(error?.isRetryable == true)
        #expect(sms.callCount(.start) == starts)
    }

    @Test("An answer is reused for the same number within cache_for; 0 asks every time")
    func cache() async throws {
        let h = try harness(.stepUp)
        let first = try await h.service.start(try .sms("+447400123462"))
        let second = try await h.service.start(try .sms("+447400123462"))
        #expect(signals.signalCalls == 1)
        #expect(try await h.events(first.id, .providerCall).first?.detail["cached"] == nil)
        #expect(try await h.events(second.id, .providerCall).first?.detail["cached"] == "true")
        h.clock.advance(by: 301)
        _ = try await h.service.start(try .sms("+447400123462"))
        #expect(signals.signalCalls == 2)
        let uncached = try harness(.stepUp, cacheFor: 0)
        _ = try await uncached.service.start(try .sms("+447400123463"))
        _ = try await uncached.service.start(try .sms("+447400123463"))
        #expect(signals.signalCalls == 4)
    }

    @Test("A route's own risk step applies to its requests only")
    func perRoute() async throws {
        signals.answer(.success(true))
        let risky = RiskPolicy(simSwap: RiskPolicy.SimSwap(providerID: "signals", onRecentSwap: .refuse))
        let table = RoutingTable(
            defaultOrder: ["sms-a"],
            rules: [
                Route(name: "uk", channels: [.sms], countries: ["GB"], target: .providers(["sms-a"]), risk: risky)
            ])
        let h = try ServiceHarness([sms, signals], table: table)
        _ = await expectAsyncGatewayError(.recentSimSwap) { try await h.service.start(try .sms("+447400123464")) }
        let us = try await h.service.start(try .sms("+16505553434"))
        #expect(us.risk.isEmpty && signals.signalCalls == 1)
    }

    @Test("A step naming a provider that gives no signal is a configuration problem")
    func problems() throws {
        let registry = try makeRegistry([sms, signals])
        #expect(RiskPolicy(simSwap: .init(providerID: "signals")).problems("risk:", registry: registry).isEmpty)
        #expect(RiskPolicy(simSwap: .init(providerID: "sms-a")).problems("risk:", registry: registry).count == 1)
        #expect(RiskPolicy(simSwap: .init(providerID: "nope")).problems("risk:", registry: registry).count == 1)
    }
}

@Suite("Silent first, code as fallback")
struct SilentFallbackTests {
    let signals = FakeNetworkSignals()
    let sms = ScriptedProvider(id: "sms-a", channels: [.sms])

    func harness(timeout: TimeInterval = 60) throws -> ServiceHarness {
        var policy = VerificationPolicy()
        policy.silentAuthTimeout = timeout
        return try ServiceHarness(
            [signals, sms], routes: [.silentAuth: ["signals"], .sms: ["sms-a"]], policy: policy)
    }

    func silentStart(_ h: ServiceHarness, _ to: String) async throws -> VerificationRecord {
        try await h.service.start(
            StartVerification(
                destination: .phone(try PhoneNumber(parsing: to)), channel: .silentAuth, fallbackChannels: [.sms]))
    }

    @Test("Routing takes a silent provider that cannot send the fallback channel; a match approves with no code")
    func matchApproves() async throws {
        let h = try harness()
        let started = try await silentStart(h, "+447400223301")
        #expect(started.providerID == "signals" && started.fallbackChannels == [.sms])
        _ = try await h.service.handleCallback(
            providerID: "signals", FakeNetworkSignals.callback(try #require(started.providerReference), ok: true))
        #expect(try await h.stored(started.id).status == .approved)
        #expect(sms.callCount(.start) == 0)
        // The deadline of a step that ended does nothing.
        h.clock.advance(by: 61)
        await h.service.runDueDeliveryDeadlines()
        #expect(sms.callCount(.start) == 0)
    }

    @Test("A failed silent step moves to the code channel through its route, and the code approves")
    func failureFallsBack() async throws {
        sms.setFallbackCheck(.succeed(.approved))
        let h = try harness()
        let started = try await silentStart(h, "+447400223302")
        _ = try await h.service.handleCallback(
            providerID: "signals", FakeNetworkSignals.callback(try #require(started.providerReference), ok: false))
        let moved = try await h.stored(started.id)
        #expect(moved.status == .pending && moved.providerID == "sms-a" && moved.channel == .sms)
        #expect(moved.fallbackChannels.isEmpty && moved.nextAction == nil && moved.sends == 2)
        let resent = try #require(try await h.events(started.id, .resent).first)
        #expect(resent.detail["previous_provider"] == "signals" && resent.detail["previous_channel"] == "silent_auth")
        #expect(resent.detail["silent_auth"] == "number_mismatch")
        #expect(sms.calls(.start).first?.channel == .sms)
        let outcome = try await h.check(started.id, "123456")
        #expect(outcome.record.status == .approved)
    }

    @Test("A silent step still open at its deadline falls back the same way")
    func timeoutFallsBack() async throws {
        let h = try harness(timeout: 30)
        let started = try await silentStart(h, "+447400223303")
        h.clock.advance(by: 10)
        #expect(await h.service.runDueDeliveryDeadlines() == 0)
        h.clock.advance(by: 21)
        #expect(await h.service.runDueDeliveryDeadlines() == 1)
        let moved = try await h.stored(started.id)
        #expect(moved.providerID == "sms-a" && moved.channel == .sms)
        #expect(try await h.events(started.id, .resent).first?.detail["silent_auth"] == "timeout")
        // A late answer from the operator finds the verification gone from its step: nothing changes.
        _ = try await h.service.handleCallback(
            providerID: "signals", FakeNetworkSignals.callback(try #require(started.providerReference), ok: true))
        #expect(try await h.stored(started.id).status == .pending)
    }

    @Test("A failed step and its deadline at once send one code, not two", arguments: 0..<20)
    func raceSendsOnce(_ round: Int) async throws {
        let h = try harness(timeout: 30)
        let started = try await silentStart(h, "+4474002234\(String(format: "%02d", round))")
        h.clock.advance(by: 31)
        let reference = try #require(started.providerReference)
        async let callback: Void = {
            _ = try? await h.service.handleCallback(
                providerID: "signals", FakeNetworkSignals.callback(reference, ok: false))
        }()
        async let deadline = h.service.runDueDeliveryDeadlines()
        _ = await (callback, deadline)
        let starts = sms.calls(.start).filter { $0.destination == started.destination }
        #expect(starts.count == 1)
        let record = try await h.stored(started.id)
        #expect(record.channel == .sms && record.sends == 2)
        #expect(try await h.events(started.id, .resent).count == 1)
    }

    @Test("A resend during the silent step is its fallback, now; one naming another channel is refused")
    func resendFallsBack() async throws {
        let h = try harness()
        let started = try await silentStart(h, "+447400223306")
        _ = await expectAsyncGatewayError(.invalidRequest) {
            try await h.service.resend(id: started.id, request: ResendRequest(channel: .voice))
        }
        #expect(sms.callCount(.start) == 0)
        let moved = try await h.service.resend(id: started.id)
        #expect(moved.providerID == "sms-a" && moved.channel == .sms && moved.sends == 2)
        #expect(try await h.events(started.id, .resent).first?.detail["silent_auth"] == "resend")
        // The step's failure arriving after it finds the step over: still one code.
        _ = try await h.service.handleCallback(
            providerID: "signals", FakeNetworkSignals.callback(try #require(started.providerReference), ok: false))
        #expect(sms.calls(.start).filter { $0.destination == started.destination }.count == 1)
    }

    @Test("A resend and the step's failure at once send one code", arguments: 0..<10)
    func resendRacesTheCallback(_ round: Int) async throws {
        let h = try harness()
        let started = try await silentStart(h, "+4474002235\(String(format: "%02d", round))")
        let reference = try #require(started.providerReference)
        async let resent = try? await h.service.resend(id: started.id)
        async let callback: Void = {
            _ = try? await h.service.handleCallback(
                providerID: "signals", FakeNetworkSignals.callback(reference, ok: false))
        }()
        _ = await (resent, callback)
        #expect(sms.calls(.start).filter { $0.destination == started.destination }.count == 1)
        #expect(try await h.stored(started.id).channel == .sms)
    }

    @Test("A silent step at a vendor that can resend over the fallback channel (Sinch) falls back at that vendor")
    func fallsBackAtTheSameVendor() async throws {
        let seamless = ScriptedProvider(
            id: "seamless",
            capabilities: ProviderCapabilities(
                channels: [.silentAuth, .sms], resendCanChangeChannel: true, completesWithoutCode: [.silentAuth]))
        seamless.setCallbackHandler { callback, _ in
            let reference = FormEncoding.decode(callback.query ?? "")["state"] ?? ""
            return CallbackReply(updates: [
                ProviderUpdate(
                    target: .reference(reference), change: VerificationChange(status: .failed, reason: "FAIL"))
            ])
        }
        let h = try ServiceHarness([seamless, sms], routes: [.silentAuth: ["seamless"], .sms: ["sms-a"]])
        let started = try await silentStart(h, "+447400223307")
        _ = try await h.service.handleCallback(
            providerID: "seamless", FakeNetworkSignals.callback(try #require(started.providerReference), ok: false))
        let moved = try await h.stored(started.id)
        #expect(moved.providerID == "seamless" && moved.channel == .sms && moved.status == .pending)
        #expect(seamless.calls(.resend).first?.requestedChannel == .sms)
        #expect(sms.callCount(.start) == 0)
        let resent = try #require(try await h.events(started.id, .resent).first)
        #expect(resent.detail["previous_provider"] == nil && resent.detail["silent_auth"] == "FAIL")
    }

    @Test("With no provider able to send the code, the verification fails")
    func noFallbackProvider() async throws {
        sms.setFallbackStart(.fail(GatewayError(.providerAuthFailed, "bad key")))
        let h = try harness()
        let started = try await silentStart(h, "+447400223304")
        _ = try await h.service.handleCallback(
            providerID: "signals", FakeNetworkSignals.callback(try #require(started.providerReference), ok: false))
        let record = try await h.stored(started.id)
        #expect(record.status == .failed && record.statusReason == "silent_fallback_failed")
    }

    @Test("Without fallback channels a failed silent step ends the verification")
    func noFallbackChannels() async throws {
        let h = try harness()
        let started = try await h.service.start(
            StartVerification(destination: .phone(try PhoneNumber(parsing: "+447400223305")), channel: .silentAuth))
        _ = try await h.service.handleCallback(
            providerID: "signals", FakeNetworkSignals.callback(try #require(started.providerReference), ok: false))
        #expect(try await h.stored(started.id).status == .failed)
        #expect(sms.callCount(.start) == 0)
    }
}
