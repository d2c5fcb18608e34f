import Crypto
import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayTelnyx

@Suite("Telnyx provider")
struct TelnyxProviderTests {
    static let phone = "+14155550100"

    static func request(_ channel: Channel = .sms) throws -> StartVerification {
        StartVerification(destination: .phone(try PhoneNumber(parsing: phone)), channel: channel)
    }

    static func stored(_ request: StartVerification, _ result: ProviderStartResult) -> ProviderVerification {
        ProviderVerification(
            destination: request.destination, channel: result.channel ?? request.channel, reference: result.reference,
            state: result.state)
    }

    @Test("a start posts Telnyx's body with the bearer key to its channel's path")
    func wireFormat() async throws {
        let harness = try TelnyxHarness(settings: ["timeout_secs": "120"])
        for (channel, type) in [
            (Channel.sms, "sms"), (.voice, "call"), (.flashcall, "flashcall"), (.whatsapp, "whatsapp"),
        ] {
            _ = try await harness.provider.start(try Self.request(channel))
            let sent = try #require(harness.recorder.requests.last)
            #expect(sent.method == .post && sent.url.path == "/sandbox/telnyx/v2/verifications/\(type)")
            #expect(sent.headerFields[.authorization] == "Bearer " + TelnyxSandbox.apiKey)
            let body = try SnakeCaseJSON.decoder.decode(TelnyxWire.Trigger.self, from: sent.body)
            #expect(body.phoneNumber == Self.phone && body.verifyProfileId == TelnyxSandbox.verifyProfileID)
            #expect(body.timeoutSecs == 120)
            #expect(harness.outbox.last(to: Self.phone)?.channel == channel.rawValue)
        }
    }

    @Test("a channel's own profile is named instead of the default one")
    func channelProfile() async throws {
        let other = "0f0f0f0f-0000-4000-8000-000000000001"
        let harness = try TelnyxHarness(settings: ["whatsapp_profile_id": other])
        // The sandbox knows one profile: Telnyx's answer for another is 10017, a configuration fault.
        let error = await expectGatewayError(.providerRejected) {
            try await harness.provider.start(try Self.request(.whatsapp))
        }
        #expect(error?.vendor?.code == "10017")
        let body = try #require(harness.recorder.requests.last?.body)
        #expect(String(decoding: body, as: UTF8.self).contains(other))
    }

    @Test("by phone number, the check's path carries the + as is and the body names the profile")
    func byPhoneNumber() async throws {
        let harness = try TelnyxHarness(settings: ["verify_by": "phone_number"])
        let request = try Self.request()
        let verification = Self.stored(request, try await harness.provider.start(request))
        let code = try #require(harness.outbox.last(to: Self.phone)?.code)
        #expect(try await harness.provider.check(verification, code: code).status == .approved)
        let sent = try #require(harness.recorder.requests.last)
        #expect(sent.url.absoluteString.hasSuffix("/v2/verifications/by_phone_number/+14155550100/actions/verify"))
        #expect(String(decoding: sent.body, as: UTF8.self).contains(TelnyxSandbox.verifyProfileID))
    }

    @Test("a flash call's code is the caller ID's digits, checked as any code")
    func flashCall() async throws {
        let harness = try TelnyxHarness()
        let request = try Self.request(.flashcall)
        let verification = Self.stored(request, try await harness.provider.start(request))
        let message = try #require(harness.outbox.last(to: Self.phone))
        #expect(
            message.kind == .flashCall && message.code?.count == 11 && message.text.contains("+" + (message.code ?? ""))
        )
        #expect(try await harness.provider.check(verification, code: try #require(message.code)).status == .approved)
    }

    @Test("a check after the timeout is expired, not merely not found")
    func expiredCheck() async throws {
        let harness = try TelnyxHarness()
        let request = try Self.request()
        let verification = Self.stored(request, try await harness.provider.start(request))
        harness.clock.advance(by: 301)
        await expectGatewayError(.expired) {
            try await harness.provider.check(
                verification, code: try #require(harness.outbox.last(to: Self.phone)?.code))
        }
        #expect(try await harness.provider.status(verification).status == .expired)
    }

    @Test("a resend is a new verification with a new id and code")
    func resend() async throws {
        let harness = try TelnyxHarness()
        let request = try Self.request()
        let first = try await harness.provider.start(request)
        let again = try await harness.provider.resend(
            Self.stored(request, first), request: ResendRequest(channel: .voice))
        #expect(again.reference != first.reference && again.channel == .voice)
        #expect(harness.outbox.last(to: Self.phone)?.kind == .voice)
    }

    @Test("webhooks: a signature by another key, or a timestamp over 300 s away, is refused")
    func signatures() async throws {
        let harness = try TelnyxHarness()
        let request = try Self.request()
        let verification = Self.stored(request, try await harness.provider.start(request))
        await harness.emulator.deliverPending()
        let sent = try #require(harness.callbacks.vendorCallbacks.first)
        let lookup = VerificationLookup { _ in verification }
        _ = try await harness.provider.handleCallback(sent, lookup: lookup)

        func signed(by key: Curve25519.Signing.PrivateKey, at date: Date) -> VendorCallback {
            var callback = sent
            let (signature, timestamp) = TelnyxEmulator.sign(sent.body, key: key, now: date)
            callback.headerFields[TelnyxWire.signatureHeader] = signature
            callback.headerFields[TelnyxWire.timestampHeader] = timestamp
            return callback
        }
        let now = harness.clock.now
        _ = try await harness.provider.handleCallback(
            signed(by: TelnyxEmulator.signingKey, at: now.addingTimeInterval(-299)), lookup: lookup)
        await expectGatewayError(.unauthorized) {
            try await harness.provider.handleCallback(
                signed(by: Curve25519.Signing.PrivateKey(), at: now), lookup: lookup)
        }
        await expectGatewayError(.unauthorized) {
            try await harness.provider.handleCallback(
                signed(by: TelnyxEmulator.signingKey, at: now.addingTimeInterval(-301)), lookup: lookup)
        }
        await expectGatewayError(.unauthorized) {
            try await harness.provider.handleCallback(
                signed(by: TelnyxEmulator.signingKey, at: now.addingTimeInterval(301)), lookup: lookup)
        }
    }

    @Test("settings: every problem at once")
    func settings() {
        let problems = TelnyxPlugin.plugin.problems(
            in: ["verify_profile_id": "nope", "public_key": "AAAA", "timeout_secs": "5", "verify_by": "name"],
            providerID: "telnyx")
        #expect(problems.count == 5, "\(problems)")
        #expect(problems.contains("provider telnyx: missing setting `api_key`"))
    }
}
