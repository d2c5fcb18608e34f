import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayTwilio

@Suite("Twilio provider failures")
struct TwilioProviderFailureTests {
    @Test("a wrong auth token is provider_auth_failed with Twilio's 20003 kept beside it")
    func authFailure() async throws {
        let harness = try TwilioHarness(authToken: "not-the-sandbox-token")
        let error = await expectGatewayError(.providerAuthFailed) {
            try await harness.provider.start(try TwilioHarness.smsStart())
        }
        #expect(error?.vendor == GatewayError.VendorDetail(providerID: "twilio", code: "20003", httpStatus: 401))
        #expect(error?.errorClass == .providerPermanent)
        #expect(harness.outbox.all.isEmpty)
    }

    @Test("an emulated outage is provider_unavailable with 20500, or 20503 for a 503", arguments: [500, 503])
    func serverError(status: Int) async throws {
        let harness = try TwilioHarness()
        harness.emulator.faults.set(FaultSwitch.Faults(serverErrorStatus: status))
        let error = await expectGatewayError(.providerUnavailable) {
            try await harness.provider.start(try TwilioHarness.smsStart())
        }
        #expect(error?.vendor?.code == (status == 503 ? "20503" : "20500"))
        #expect(error?.vendor?.httpStatus == status)
        #expect(error?.sendMayHaveHappened == false)
    }

    @Test("a 2xx body that is not Twilio's JSON is provider_error, and a start may have sent")
    func malformedStart() async throws {
        let harness = try TwilioHarness()
        harness.emulator.faults.set(FaultSwitch.Faults(malformedBody: true))
        let error = await expectGatewayError(.providerError) {
            try await harness.provider.start(try TwilioHarness.smsStart())
        }
        #expect(error?.errorClass == .providerTransient)
        #expect(error?.sendMayHaveHappened == true)
        #expect(error?.vendor?.httpStatus == 200)
    }

    @Test("a malformed answer to a check is provider_error without a possible send")
    func malformedCheck() async throws {
        let harness = try TwilioHarness()
        let (verification, code) = try await harness.startSMS()
        harness.emulator.faults.set(FaultSwitch.Faults(malformedBody: true, remaining: 1))
        let error = await expectGatewayError(.providerError) {
            try await harness.provider.check(verification, code: code)
        }
        #expect(error?.sendMayHaveHappened == false)
    }

    @Test("a 2xx JSON answer without a verification SID is provider_error")
    func missingSID() async throws {
        let provider = try TwilioHarness.provider(
            over: StubTransport.answer(status: 201, body: #"{"status":"pending"}"#))
        let error = await expectGatewayError(.providerError) { try await provider.start(try TwilioHarness.smsStart()) }
        #expect(error?.sendMayHaveHappened == true)
    }

    @Test("a refused connection is provider_unavailable, and nothing was sent")
    func connectFailed() async throws {
        let provider = try TwilioHarness.provider(over: StubTransport.failing(.connectFailed("refused")))
        let error = await expectGatewayError(.providerUnavailable) {
            try await provider.start(try TwilioHarness.smsStart())
        }
        #expect(error?.sendMayHaveHappened == false)
    }

    @Test("a 429 without a Twilio code is provider_rate_limited with Retry-After")
    func rateLimitedWithoutCode() async throws {
        var headers = HTTPFields()
        headers[.retryAfter] = "30"
        let provider = try TwilioHarness.provider(
            over: StubTransport.answer(status: 429, body: "Too Many Requests", headers: headers))
        let error = await expectGatewayError(.providerRateLimited) {
            try await provider.start(try TwilioHarness.smsStart())
        }
        #expect(error?.retryAfter == 30)
        #expect(error?.vendor == GatewayError.VendorDetail(providerID: "twilio", code: nil, httpStatus: 429))
    }

    @Test("a 5xx without a Twilio envelope is provider_unavailable")
    func serverErrorWithoutCode() async throws {
        let provider = try TwilioHarness.provider(
            over: StubTransport.answer(status: 502, body: "<html>bad gateway</html>"))
        await expectGatewayError(.providerUnavailable) { try await provider.start(try TwilioHarness.smsStart()) }
    }

    @Test("the error message never repeats Twilio's message text, which can carry the number")
    func noVendorText() async throws {
        let body = #"{"code":60410,"message":"Blocked +14155550100 by rule QX-7","more_info":"x","status":403}"#
        let provider = try TwilioHarness.provider(over: StubTransport.answer(status: 403, body: body))
        let error = await expectGatewayError(.destinationBlocked) {
            try await provider.start(try TwilioHarness.smsStart())
        }
        #expect(error?.vendor?.code == "60410")
        #expect(error?.message.contains("4155550100") == false)
        #expect(error?.message.contains("QX-7") == false)
    }

    @Test("an empty code is invalid_request and Twilio is not called")
    func missingCode() async throws {
        let harness = try TwilioHarness()
        let (verification, _) = try await harness.startSMS()
        let before = harness.recorder.requests.count
        let error = await expectGatewayError(.invalidRequest) {
            try await harness.provider.check(verification, code: "")
        }
        #expect(error?.message.contains("4 to 10") == true)
        #expect(harness.recorder.requests.count == before)
    }

    @Test(
        "an obviously malformed code is invalid_request without a call to Twilio",
        arguments: [
            "", "123", "12345678901", "12 34", "1234-5", "١٢٣٤٥٦", "code!",
        ])
    func malformedCode(code: String) async throws {
        let harness = try TwilioHarness()
        let (verification, _) = try await harness.startSMS()
        let before = harness.recorder.requests.count
        await expectGatewayError(.invalidRequest) { try await harness.provider.check(verification, code: code) }
        #expect(harness.recorder.requests.count == before)
    }

    @Test(
        "channels Twilio does not offer are unsupported_channel without a call",
        arguments: [
            Channel.flashcall, .silentAuth,
        ])
    func unsupportedChannel(channel: Channel) async throws {
        let harness = try TwilioHarness()
        let destination: Destination =
            channel == .push ? .identity("user-0001-abcd") : .phone(try PhoneNumber(parsing: TwilioHarness.phone))
        await expectGatewayError(.unsupportedChannel) {
            try await harness.provider.start(StartVerification(destination: destination, channel: channel))
        }
        #expect(harness.recorder.requests.isEmpty)
    }

    @Test("a verification without a Twilio reference never reaches a URL")
    func missingReference() async throws {
        let harness = try TwilioHarness()
        let verification = ProviderVerification(
            destination: .phone(try PhoneNumber(parsing: TwilioHarness.phone)), channel: .sms, reference: "../VE1",
            state: [:])
        await expectGatewayError(.internal) { try await harness.provider.status(verification) }
        #expect(harness.recorder.requests.isEmpty)
    }
}
