import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewaySinch

@Suite("Sinch callbacks")
struct SinchCallbackTests {
    static let url = URL(string: SinchHarness.callbackURL)!

    static func callback(_ event: [String: Any], secret: String = SinchSandbox.applicationSecret, at date: Date)
        throws -> VendorCallback
    {
        let body = try JSONSerialization.data(withJSONObject: event)
        let headers = try SinchSigningTests.signedHeaders(
            secret: secret, body: body, resource: "/callbacks/sinch", at: date)
        return VendorCallback(method: .post, url: url, subpath: "/", query: nil, headerFields: headers, body: body)
    }

    static func requestEvent(id: String = "1", reference: String?, to number: String = SinchHarness.phone) -> [String:
        Any]
    {
        var event: [String: Any] = [
            "id": id, "event": "VerificationRequestEvent", "method": "sms",
            "identity": ["type": "number", "endpoint": number],
        ]
        if let reference { event["reference"] = reference }
        return event
    }

    static func action(_ reply: CallbackReply) -> String? { json(reply.response.body)["action"] as? String }

    @Test("the request event of a start in flight is allowed, and the start goes on")
    func allowInFlight() async throws {
        let harness = try SinchHarness()
        let (_, _, message) = try await harness.start()
        #expect(message != nil)
        let delivered = try #require(harness.gateway.deliveries.first)
        #expect(json(delivered.body)["event"] as? String == "VerificationRequestEvent")
        #expect(json(delivered.body)["reference"] as? String == "vf_0123456789abcdef")
        #expect(json(delivered.body)["acceptLanguage"] == nil)
        #expect(delivered.status == .ok)
    }

    @Test("a destination the gateway's policy blocks is denied on the spot; Sinch refuses the start with 40300")
    func denyByPolicy() async throws {
        let harness = try SinchHarness()
        harness.gateway.permits.withLock { $0 = { $0.phoneNumber?.region != "SE" } }
        let error = await expectGatewayError(.destinationBlocked) {
            try await harness.provider.start(try SinchHarness.request())
        }
        #expect(error?.vendor?.code == "40300")
        #expect(harness.outbox.all.isEmpty)
        #expect(
            harness.gateway.deliveries.first.map { json($0.body)["event"] as? String } == "VerificationRequestEvent")
        // Sinch keeps the verification as DENIED / Denied by callback.
        let status = try await harness.provider.perform(
            action: "status_by_reference", input: ["reference": .string("vf_0123456789abcdef")])
        #expect(status["status"] == .string("DENIED") && status["reason"] == .string("Denied by callback"))
        #expect(status["gateway_status"] == .string("denied"))
    }

    @Test("a request event is denied for a verification the gateway did not start, a final one, or another number")
    func denyOthers() async throws {
        let harness = try SinchHarness(settings: ["foreign_request_events": "deny"], callbacks: false)
        let now = harness.clock.now
        let lookupOf = harness.gateway.lookup
        let noReference = try await harness.provider.handleCallback(
            try Self.callback(Self.requestEvent(reference: nil), at: now), lookup: lookupOf)
        #expect(Self.action(noReference) == "deny")
        let foreign = try await harness.provider.handleCallback(
            try Self.callback(Self.requestEvent(reference: "order-42"), at: now), lookup: lookupOf)
        #expect(Self.action(foreign) == "deny")
        let number = try PhoneNumber(parsing: SinchHarness.phone)
        let canceled = ProviderVerification(
            id: "vf_aa", status: .canceled, destination: .phone(number), channel: .sms, reference: "1", state: .empty)
        harness.gateway.register(canceled, as: [.verificationID("vf_aa")])
        let final = try await harness.provider.handleCallback(
            try Self.callback(Self.requestEvent(id: "2", reference: "vf_aa-2"), at: now), lookup: harness.gateway.lookup
        )
        #expect(Self.action(final) == "deny")
        var pending = canceled
        pending.id = "vf_bb"
        pending.status = .pending
        harness.gateway.register(pending, as: [.verificationID("vf_bb")])
        let allowed = try await harness.provider.handleCallback(
            try Self.callback(Self.requestEvent(id: "3", reference: "vf_bb"), at: now), lookup: harness.gateway.lookup)
        #expect(Self.action(allowed) == "allow")
        #expect(allowed.response.headerFields[.contentType] == "application/json")
        let otherNumber = try await harness.provider.handleCallback(
            try Self.callback(Self.requestEvent(id: "3", reference: "vf_bb", to: "+46701234999"), at: now),
            lookup: harness.gateway.lookup)
        #expect(Self.action(otherNumber) == "deny")
    }

    @Test(
        "with foreign_request_events: allow (the sandbox), a verification the gateway did not start is allowed, unless the country is blocked"
    )
    func allowForeign() async throws {
        let harness = try SinchHarness(callbacks: false)
        let now = harness.clock.now
        let foreign = try await harness.provider.handleCallback(
            try Self.callback(Self.requestEvent(reference: "order-42"), at: now), lookup: harness.gateway.lookup)
        #expect(Self.action(foreign) == "allow")
        harness.gateway.permits.withLock { $0 = { _ in false } }
        let blocked = try await harness.provider.handleCallback(
            try Self.callback(Self.requestEvent(reference: nil), at: now), lookup: harness.gateway.lookup)
        #expect(Self.action(blocked) == "deny")
    }

    @Test("a result event with a good signature updates the verification it names by Sinch id")
    func resultEvent() async throws {
        let harness = try SinchHarness(callbacks: false)
        let event: [String: Any] = [
            "id": "1234", "event": "VerificationResultEvent", "method": "sms", "status": "DENIED", "reason": "Fraud",
            "reference": "vf_aa", "identity": ["type": "number", "endpoint": SinchHarness.phone],
        ]
        let reply = try await harness.provider.handleCallback(
            try Self.callback(event, at: harness.clock.now), lookup: harness.gateway.lookup)
        #expect(
            reply.updates == [
                ProviderUpdate(
                    target: .reference("1234"),
                    change: VerificationChange(status: .blocked, nextAction: .clear, reason: "DENIED: Fraud"))
            ])
        #expect(reply.response.status == .ok)
        var wrongCode = event
        wrongCode["status"] = "FAIL"
        wrongCode["reason"] = "Invalid code"
        let pending = try await harness.provider.handleCallback(
            try Self.callback(wrongCode, at: harness.clock.now), lookup: harness.gateway.lookup)
        #expect(pending.updates.first?.change == VerificationChange())
        let delivery: [String: Any] = ["id": "1234", "event": "VerificationSmsDeliveredEvent", "smsResult": "Failed"]
        let failed = try await harness.provider.handleCallback(
            try Self.callback(delivery, at: harness.clock.now), lookup: harness.gateway.lookup)
        #expect(failed.updates.first?.change.status == .failed)
    }

    @Test("a callback with a bad, stale or missing signature is unauthorized and changes nothing")
    func badSignatures() async throws {
        let harness = try SinchHarness(callbacks: false)
        let event: [String: Any] = ["id": "1", "event": "VerificationResultEvent", "status": "SUCCESSFUL"]
        let wrongSecret = try Self.callback(event, secret: "d3Jvbmc=", at: harness.clock.now)
        let stale = try Self.callback(event, at: harness.clock.now.addingTimeInterval(-3600))
        var unsigned = try Self.callback(event, at: harness.clock.now)
        unsigned.headerFields[.authorization] = nil
        var tampered = try Self.callback(event, at: harness.clock.now)
        tampered.body = Data(#"{"id":"1","event":"VerificationResultEvent","status":"DENIED"}"#.utf8)
        for callback in [wrongSecret, stale, unsigned, tampered] {
            await expectGatewayError(.unauthorized) {
                try await harness.provider.handleCallback(callback, lookup: harness.gateway.lookup)
            }
        }
        var moved = try Self.callback(event, at: harness.clock.now)
        moved.url = URL(string: "http://localhost:8080/callbacks/sinch-eu")!
        await expectGatewayError(.unauthorized) {
            try await harness.provider.handleCallback(moved, lookup: harness.gateway.lookup)
        }
        let garbage = try Self.callback(["unrelated": true], at: harness.clock.now)
        await expectGatewayError(.invalidRequest) {
            try await harness.provider.handleCallback(garbage, lookup: harness.gateway.lookup)
        }
    }

    @Test("references map back to gateway ids, resend suffixes included")
    func references() {
        #expect(SinchProvider.gatewayID(fromReference: "vf_0123abcd") == "vf_0123abcd")
        #expect(SinchProvider.gatewayID(fromReference: "vf_0123abcd-3") == "vf_0123abcd")
        #expect(SinchProvider.gatewayID(fromReference: "vf_") == nil)
        #expect(SinchProvider.gatewayID(fromReference: "order-42") == nil)
        #expect(SinchProvider.gatewayID(fromReference: "vf_ab-") == nil)
    }
}
