import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayTwilio

/// A start whose gateway instance died during the call, asked after by its number: Twilio keeps one pending
/// verification per `To`, and its Verification resource takes the `To` in the SID's place
/// (docs/architecture.md §9.2).
@Suite("Twilio lookup of a dead start by its To")
struct TwilioLookupTests {
    static func lookup(_ harness: TwilioHarness, channel: Channel = .sms, to phone: String = TwilioHarness.phone)
        throws -> StartLookup
    {
        StartLookup(
            verificationID: "vf_0123456789abcdef", destination: .phone(try PhoneNumber(parsing: phone)),
            channel: channel, callBegunAt: harness.clock.now)
    }

    @Test("the number's pending verification is found by GET …/Verifications/{To}, and its code approves it")
    func found() async throws {
        let harness = try TwilioHarness()
        let request = try TwilioHarness.smsStart()
        let started = try await harness.provider.start(request)
        let code = try #require(harness.outbox.last(to: TwilioHarness.phone)?.code)
        let answer = try await harness.provider.lookUpStart(try Self.lookup(harness))
        let result = try #require(answer.foundStart, "expected found, got \(answer)")
        let sent = try #require(harness.recorder.requests.last)
        #expect(sent.method == .get)
        #expect(
            sent.url.path(percentEncoded: true)
                == TwilioHarness.mount + "/v2/Services/" + TwilioSandbox.serviceSID + "/Verifications/%2B14155550100")
        #expect(result.reference == started.reference)
        #expect(result.status == .pending && result.channel == .sms)
        #expect(result.expiresAt == started.expiresAt)
        #expect(harness.outbox.all.filter { $0.to == TwilioHarness.phone }.count == 1)
        let check = try await harness.provider.check(TwilioHarness.stored(request, result), code: code)
        #expect(check.status == .approved)
    }

    @Test(
        "no pending verification for the number: 'not yet' within the request timeout of the dead call, then 'not found'"
    )
    func notFoundOnceSettled() async throws {
        let harness = try TwilioHarness(timeout: .seconds(10))
        let lookup = try Self.lookup(harness)
        #expect(try await harness.provider.lookUpStart(lookup) == .notYet)
        harness.clock.advance(by: 10)
        #expect(try await harness.provider.lookUpStart(lookup) == .notFound)
        // An approved verification is gone (Twilio deletes it), a canceled one is not pending: none either way.
        let (verification, code) = try await harness.startSMS()
        _ = try await harness.provider.check(verification, code: code)
        #expect(try await harness.provider.lookUpStart(lookup) == .notFound)
        let (canceled, _) = try await harness.startSMS()
        try await harness.provider.cancel(canceled)
        #expect(try await harness.provider.lookUpStart(lookup) == .notFound)
    }

    @Test("the emulator updates a verification by its To too, as Twilio's samples do")
    func updateByTo() async throws {
        let harness = try TwilioHarness()
        _ = try await harness.startSMS()
        let url = try #require(
            URL(
                string: TwilioHarness.baseURL + "/v2/Services/" + TwilioSandbox.serviceSID
                    + "/Verifications/%2B14155550100"))
        var headers = HTTPFields()
        headers[.authorization] = TwilioEmulator.sandboxAuthorization
        headers[.contentType] = "application/x-www-form-urlencoded"
        let response = try await harness.recorder.send(
            TransportRequest(method: .post, url: url, headerFields: headers, body: Data("Status=canceled".utf8)),
            timeout: .seconds(5))
        #expect(response.status == .ok)
        let body = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
        #expect(body["status"] as? String == "canceled")
        #expect(body["to"] as? String == TwilioHarness.phone)
    }

    @Test("a push challenge is not a Verification: unknown, without a call")
    func push() async throws {
        let harness = try TwilioHarness()
        #expect(try await harness.provider.lookUpStart(try Self.lookup(harness, channel: .push)) == .unknown)
        #expect(harness.recorder.requests.isEmpty)
    }
}
