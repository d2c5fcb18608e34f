import Foundation
import GatewayCore
import GatewayKitCrypto
import GatewayTestSupport
import Testing

/// A resend without `provider` of an own-code verification goes through the next messaging provider of its
/// route that has not failed it, with the same code, and back through its own when that one fails first.
@Suite("Resends move to the next messaging provider of the route")
struct NextProviderResendTests {
    static func providers(_ ids: [String]) throws -> (providers: [OwnCodeProvider], senders: [String: RecordingSender])
    {
        var senders: [String: RecordingSender] = [:]
        var providers: [OwnCodeProvider] = []
        for id in ids {
            let sender = RecordingSender()
            senders[id] = sender
            providers.append(try OwnCodeProviderTests.provider(id, sender: sender))
        }
        return (providers, senders)
    }

    static let route = Route(name: "sms", channels: [.sms], target: .providers(["a", "b", "c"]))

    @Test("the default route's next provider sends the same code; the first message's code still approves")
    func moves() async throws {
        let (providers, senders) = try Self.providers(["a", "b"])
        let h = try ServiceHarness(providers)
        let record = try await h.service.start(try .sms())
        #expect(record.providerID == "a" && record.route == "default")
        let moved = try await h.service.resend(id: record.id)
        #expect(moved.providerID == "b" && moved.sends == 2)
        let code = try #require(senders["a"]).code()
        #expect(try #require(senders["b"]).code() == code)
        let resent = try #require(try await h.events(record.id, .resent).last)
        #expect(resent.detail["provider"] == "b" && resent.detail["previous_provider"] == "a")
        #expect(try await h.check(record.id, code).record.status == .approved)
    }

    @Test("each resend goes on around the route, passing over a provider a receipt said did not deliver")
    func passesOverUndelivered() async throws {
        let (providers, _) = try Self.providers(["a", "b", "c"])
        let h = try ServiceHarness(
            providers, table: RoutingTable(defaultOrder: [], rules: [Self.route]),
            policy: VerificationPolicy(maxSends: 10))
        let record = try await h.service.start(try .sms())
        var path = [record.providerID]
        let first = try await h.service.resend(id: record.id)
        path.append(first.providerID)
        // b's message did not arrive: b is passed over from now on.
        try await h.store.append(
            VerificationEvent(
                verificationID: record.id, kind: .delivery, at: h.clock.now,
                detail: ["provider": "b", "message_id": "msg-1", "status": "undelivered"]))
        for _ in 0..<3 { path.append(try await h.service.resend(id: record.id).providerID) }
        #expect(path == ["a", "b", "c", "a", "c"])
    }

    @Test("a provider the start failed over from is passed over; with nothing left the resend stays")
    func passesOverStartFailures() async throws {
        let (providers, senders) = try Self.providers(["a", "b"])
        try #require(senders["a"]).fail(with: GatewayError(.providerUnavailable, "down"))
        let h = try ServiceHarness(providers)
        let record = try await h.service.start(try .sms())
        #expect(record.providerID == "b" && record.failovers.first?.hasPrefix("a:") == true)
        try #require(senders["a"]).fail(with: nil)
        let resent = try await h.service.resend(id: record.id)
        #expect(resent.providerID == "b" && resent.sends == 2)
        #expect(try #require(senders["a"]).messages.isEmpty)
    }

    @Test("the next provider failing before it sends hands the resend back to the verification's own")
    func fallsBack() async throws {
        let (providers, senders) = try Self.providers(["a", "b"])
        let h = try ServiceHarness(providers)
        let record = try await h.service.start(try .sms())
        try #require(senders["b"]).fail(with: GatewayError(.providerUnavailable, "down"))
        let resent = try await h.service.resend(id: record.id)
        #expect(resent.providerID == "a" && resent.sends == 2)
        #expect(try #require(senders["a"]).messages.count == 2)
        let calls = try await h.events(record.id, .providerCall).filter { $0.detail["operation"] == "resend" }
        #expect(
            calls.map { "\($0.detail["provider"] ?? "-") \($0.detail["outcome"] ?? "-")" } == [
                "b provider_unavailable", "a accepted",
            ])
        // A refusal that may have sent is not retried elsewhere: the user could get two messages.
        var maybeSent = GatewayError(.providerUnavailable, "timed out")
        maybeSent.sendMayHaveHappened = true
        try #require(senders["b"]).fail(with: maybeSent)
        await expectGatewayError(.providerUnavailable) { _ = try await h.service.resend(id: record.id) }
        #expect(try #require(senders["a"]).messages.count == 2)
    }

    @Test("a forced provider, another key or a country not served keep the verification put")
    func staysPut() async throws {
        let otherKey = HMACOwnCodeKey(secret: Array("another secret, of another gateway, 32+ bytes".utf8))!
        let own = RecordingSender()
        let h = try ServiceHarness([
            try OwnCodeProviderTests.provider("a", sender: own),
            try OwnCodeProviderTests.provider("foreign", sender: RecordingSender(), key: otherKey),
            try OwnCodeProviderTests.provider(
                "gb_only", sender: RecordingSender(),
                senders: try SenderTable(fallback: nil, byCountry: ["GB": .alphanumeric("Acme")])),
            ScriptedProvider(id: "verify"),
        ])
        let routed = try await h.service.start(try .sms())
        #expect(try await h.service.resend(id: routed.id).providerID == "a")
        let forced = try await h.service.start(try .sms("+16505553435", forced: "a"))
        #expect(forced.route == "forced")
        #expect(try await h.service.resend(id: forced.id).providerID == "a")
        #expect(own.messages.count == 4)
    }

    @Test("a Verify vendor's verification is resent by its vendor, whatever the route holds")
    func verifyVendorsStay() async throws {
        let (providers, senders) = try Self.providers(["b"])
        let verify = ScriptedProvider(id: "verify")
        let h = try ServiceHarness([verify] + providers)
        let record = try await h.service.start(try .sms())
        #expect(record.providerID == "verify")
        #expect(try await h.service.resend(id: record.id).providerID == "verify")
        #expect(try #require(senders["b"]).messages.isEmpty)
    }

    @Test("routes hand out their fixed lists; experiments, forced starts and unknown routes none")
    func routeLists() {
        let policy = AdaptivePolicy(providers: ["x", "y"])
        let table = RoutingTable(
            routes: [.sms: ["s1", "s2"]], defaultOrder: ["d1", "d2"],
            rules: [
                Route(name: "list", target: .providers(["a", "b"]), fallbacks: ["b", "c"]),
                Route(name: "ab", target: .experiment("test")),
                Route(name: "bandit", target: .adaptive(policy), fallbacks: ["z"]),
            ])
        #expect(table.providerIDs(ofRoute: "list", channel: .sms) == ["a", "b", "c"])
        #expect(table.providerIDs(ofRoute: "bandit", channel: .sms) == ["x", "y", "z"])
        #expect(table.providerIDs(ofRoute: "ab", channel: .sms) == nil)
        #expect(table.providerIDs(ofRoute: "channel:sms", channel: .sms) == ["s1", "s2"])
        #expect(table.providerIDs(ofRoute: "channel:voice", channel: .sms) == nil)
        #expect(table.providerIDs(ofRoute: "default", channel: .sms) == ["d1", "d2"])
        #expect(table.providerIDs(ofRoute: "forced", channel: .sms) == nil)
        #expect(table.providerIDs(ofRoute: "twilio:VA00", channel: .sms) == nil)
    }
}
