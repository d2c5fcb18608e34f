import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayTwilio

@Suite("Twilio provider against the emulator")
struct TwilioProviderTests {
    @Test("a started SMS verification is approved with the code the emulator sent")
    func happyPath() async throws {
        let harness = try TwilioHarness()
        let request = try TwilioHarness.smsStart()
        let result = try await harness.provider.start(request)
        let reference = try #require(result.reference)
        #expect(reference.hasPrefix("VE") && reference.count == 34)
        #expect(result.status == .pending)
        #expect(result.channel == .sms)
        #expect(result.expiresAt == harness.clock.now.addingTimeInterval(600))
        let sent = try #require(harness.outbox.last(to: TwilioHarness.phone))
        #expect(sent.provider == "twilio")
        #expect(sent.channel == "sms")
        let code = try #require(sent.code)
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        let check = try await harness.provider.check(TwilioHarness.stored(request, result), code: code)
        #expect(check.status == .approved)
    }

    @Test("a wrong code leaves the verification pending, and the right code still approves it")
    func wrongCodeIsPending() async throws {
        let harness = try TwilioHarness()
        let (verification, code) = try await harness.startSMS()
        let wrong = try await harness.provider.check(verification, code: TwilioHarness.wrong(code))
        #expect(wrong.status == .pending)
        #expect(try await harness.provider.check(verification, code: code).status == .approved)
    }

    @Test("the sixth check is refused with 60202, mapped to max_attempts_reached, and the status follows")
    func tooManyChecks() async throws {
        let harness = try TwilioHarness()
        let (verification, code) = try await harness.startSMS()
        for _ in 0..<5 {
            #expect(try await harness.provider.check(verification, code: TwilioHarness.wrong(code)).status == .pending)
        }
        let error = await expectGatewayError(.maxAttemptsReached) {
            try await harness.provider.check(verification, code: code)
        }
        #expect(error?.vendor?.code == "60202")
        #expect(error?.vendor?.httpStatus == 429)
        #expect(error?.attemptsRemaining == 0)
        #expect(try await harness.provider.status(verification).status == .maxAttemptsReached)
    }

    @Test("the sixth send to one number within the window is refused with 60203 as max_sends_reached")
    func tooManySends() async throws {
        let harness = try TwilioHarness()
        let (verification, _) = try await harness.startSMS()
        for _ in 0..<4 { _ = try await harness.provider.resend(verification, request: ResendRequest()) }
        let error = await expectGatewayError(.maxSendsReached) {
            try await harness.provider.resend(verification, request: ResendRequest())
        }
        #expect(error?.vendor?.code == "60203")
        #expect(error?.errorClass == .verification)
        #expect(harness.outbox.all.count == 5)
    }

    @Test("a resend keeps the reference and delivers the same code again")
    func resendKeepsCode() async throws {
        let harness = try TwilioHarness()
        let (verification, code) = try await harness.startSMS()
        harness.clock.advance(by: 60)
        let resent = try await harness.provider.resend(verification, request: ResendRequest())
        #expect(resent.reference == verification.reference)
        #expect(resent.channel == .sms)
        // The window still runs from the first send.
        #expect(resent.expiresAt == harness.clock.now.addingTimeInterval(540))
        #expect(harness.outbox.all.map(\.code) == [code, code])
        #expect(try await harness.provider.check(verification, code: code).status == .approved)
    }

    @Test("a resend on another channel sends the same code by voice call")
    func resendChangesChannel() async throws {
        let harness = try TwilioHarness()
        let (verification, code) = try await harness.startSMS()
        let resent = try await harness.provider.resend(verification, request: ResendRequest(channel: .voice))
        #expect(resent.reference == verification.reference)
        #expect(resent.channel == .voice)
        let last = try #require(harness.outbox.all.last)
        #expect(last.channel == "call")
        #expect(last.code == code)
        #expect(formFields(try #require(harness.recorder.requests.last).body)["Channel"] == "call")
    }

    @Test("a canceled verification cannot be checked, and its status reads canceled")
    func cancelThenCheck() async throws {
        let harness = try TwilioHarness()
        let (verification, code) = try await harness.startSMS()
        try await harness.provider.cancel(verification)
        #expect(try await harness.provider.status(verification).status == .canceled)
        let error = await expectGatewayError(.notFound) { try await harness.provider.check(verification, code: code) }
        #expect(error?.vendor?.code == "20404")
    }

    @Test("after 600 seconds the code no longer works: Twilio's 20404 becomes not_found")
    func expiry() async throws {
        let harness = try TwilioHarness()
        let (verification, code) = try await harness.startSMS()
        harness.clock.advance(by: 599)
        #expect(try await harness.provider.status(verification).status == .pending)
        harness.clock.advance(by: 2)
        let error = await expectGatewayError(.notFound) { try await harness.provider.check(verification, code: code) }
        #expect(error?.vendor == GatewayError.VendorDetail(providerID: "twilio", code: "20404", httpStatus: 404))
        await expectGatewayError(.notFound) { try await harness.provider.status(verification) }
    }

    @Test("an approved verification is gone: a second check is not_found")
    func approvedIsSoftDeleted() async throws {
        let harness = try TwilioHarness()
        let (verification, code) = try await harness.startSMS()
        #expect(try await harness.provider.check(verification, code: code).status == .approved)
        await expectGatewayError(.notFound) { try await harness.provider.check(verification, code: code) }
    }

    @Test("a start after expiry is a new verification with a new reference")
    func startAfterExpiry() async throws {
        let harness = try TwilioHarness()
        let (first, _) = try await harness.startSMS()
        harness.clock.advance(by: 601)
        let (second, code) = try await harness.startSMS()
        #expect(second.reference != first.reference)
        #expect(try await harness.provider.check(second, code: code).status == .approved)
    }

    @Test("an email verification sends to the address on Twilio's email channel")
    func email() async throws {
        let harness = try TwilioHarness()
        let request = StartVerification(destination: .email("ada@example.com"), channel: .email)
        let result = try await harness.provider.start(request)
        let sent = try #require(harness.outbox.last(to: "ada@example.com"))
        #expect(sent.channel == "email")
        #expect(
            try await harness.provider.check(TwilioHarness.stored(request, result), code: try #require(sent.code))
                .status
                == .approved
        )
    }

    @Test("the provider declares Twilio's capabilities")
    func capabilities() throws {
        let provider = try TwilioHarness().provider
        let capabilities = provider.capabilities
        #expect(capabilities.channels == [.sms, .voice, .whatsapp, .email, .push])
        #expect(capabilities.completesWithoutCode == [.push])
        #expect(capabilities.resendKeepsCode)
        #expect(capabilities.resendCanChangeChannel)
        #expect(provider.operations == [.resend, .cancel, .status, .callbacks])
        #expect(!capabilities.requiresAppVerification)
        #expect(!capabilities.issuesTokens)
    }
}
