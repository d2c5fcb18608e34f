import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// `CustomCode` on the Twilio front door: taken by a service whose route sends only the gateway's own codes,
/// sent as the caller chose it, checked as any own code; refused (60204) where a vendor makes the code.
@Suite("CustomCode on the Twilio front door")
struct TwilioCompatCustomCodeTests {
    static let ownService = "VA000000000000000000000000000000c1"
    static let mixedService = "VA000000000000000000000000000000c2"
    static let config = """
        sandbox: true
        api_keys:
          - {name: backend, key_env: FRONT_KEY, scopes: [verify]}
        twilio_compat:
          account_sid: \(TwilioCompatTests.account)
          services:
            - {sid: \(ownService), providers: [twilio_messaging], fallbacks: [vonage_sms]}
            - {sid: \(mixedService), providers: [twilio_messaging], fallbacks: [sinch]}
        """

    func form(_ pairs: [(String, String)]) -> String { FormEncoding.encode(pairs) }

    @Test("an own-code service says custom_code_enabled, sends the caller's code, and approves it")
    func sendsAndApproves() async throws {
        try await TwilioCompatTests.run(config: Self.config) { client, runtime in
            let own = try await client.twilio(.get, TwilioCompatTests.path(Self.ownService))
            #expect(own.body["custom_code_enabled"] as? Bool == true)
            let mixed = try await client.twilio(.get, TwilioCompatTests.path(Self.mixedService))
            #expect(mixed.body["custom_code_enabled"] as? Bool == false)

            let to = "+14155550161"
            let created = try await client.twilio(
                .post, TwilioCompatTests.path(Self.ownService, "/Verifications"),
                form: form([("To", to), ("Channel", "sms"), ("CustomCode", "48213")]))
            #expect(created.status == .created)
            let sid = try #require(created.body["sid"] as? String)
            let message = try #require(runtime.sandbox?.outbox.last(to: to))
            #expect(message.provider == "twilio_messaging" && message.code == "48213")
            let id = "vf_" + sid.dropFirst(2)
            let stored = try #require(try await runtime.service.store.record(id: id))
            let state = String(decoding: try JSONEncoder().encode(stored.providerState), as: UTF8.self)
            #expect(!state.contains("48213"), "the store keeps the caller's code sealed, not as it is")

            let check = TwilioCompatTests.path(Self.ownService, "/VerificationCheck")
            let miss = try await client.twilio(
                .post, check, form: form([("VerificationSid", sid), ("Code", "482130")]))
            #expect(miss.status == .ok && miss.body["status"] as? String == "pending")
            let hit = try await client.twilio(.post, check, form: form([("VerificationSid", sid), ("Code", "48213")]))
            #expect(hit.status == .ok && hit.body["status"] as? String == "approved")

            // Letters and digits of the alphanumeric alphabet go too, typed in either case.
            let letters = try await client.twilio(
                .post, TwilioCompatTests.path(Self.ownService, "/Verifications"),
                form: form([("To", "+14155550162"), ("Channel", "sms"), ("CustomCode", "ab7k")]))
            #expect(letters.status == .created)
            #expect(runtime.sandbox?.outbox.last(to: "+14155550162")?.text.contains(" AB7K.") == true)
        }
    }

    @Test("a service whose route reaches a Verify vendor refuses CustomCode (60204); a malformed one is 60200")
    func refusals() async throws {
        try await TwilioCompatTests.run(config: Self.config) { client, runtime in
            for (service, pairs, code) in [
                (Self.mixedService, [("CustomCode", "4821")], 60204),
                (Self.ownService, [("CustomCode", "482")], 60200),
                (Self.ownService, [("CustomCode", "48213648213")], 60200),
                (Self.ownService, [("CustomCode", "O123")], 60200),
                (Self.ownService, [("CustomCode", "12 34")], 60200),
            ] as [(String, [(String, String)], Int)] {
                let answer = try await client.twilio(
                    .post, TwilioCompatTests.path(service, "/Verifications"),
                    form: form([("To", "+14155550163"), ("Channel", "sms")] + pairs))
                #expect(answer.status == .badRequest && answer.body["code"] as? Int == code, "\(service) \(pairs)")
                #expect((answer.body["message"] as? String)?.contains("CustomCode") == true)
            }
            #expect(runtime.sandbox?.outbox.last(to: "+14155550163") == nil, "no refused request sent anything")
        }
    }
}
