import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayIDaaS

/// Answers one IDaaS path with an error body the emulator never gives; every other call goes through.
struct RefuseOnce: HTTPTransport {
    let inner: any HTTPTransport
    let path: String
    let code: String
    let status: Int

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        guard request.url.path().hasSuffix(path) else { return try await inner.send(request, timeout: timeout) }
        let body = Data(#"{"error_code":"\#(code)","error_msg":"错误 +8613800138000"}"#.utf8)
        return TransportResponse(status: HTTPResponse.Status(code: status), body: body)
    }
}

/// The SDK table's codes as the provider meets them: what a check, a slider answer and a send do with each.
@Suite("IDaaS provider and the SDK's return codes")
struct IDaaSProviderErrorTests {
    typealias H = IDaaSProviderHarness

    /// A harness whose `path` answers `code` once the code was sent (the send and slider go to the emulator).
    static func refusing(_ path: String, _ code: String, status: Int = 400) throws -> H {
        try H { inner in RefuseOnce(inner: inner, path: path, code: code, status: status) }
    }

    @Test(
        "a wrong code in either family is a pending check, so the gateway counts it",
        arguments: ["SMS.1005", "SMS.1006", "LOGIN.1005"].flatMap { ["IDAAS.SDK." + $0, "SDK." + $0] })
    func wrongCodeIsPending(_ code: String) async throws {
        let h = try Self.refusing(IDaaSWire.smsLoginPath, code)
        let (verification, sent) = try await h.sent()
        #expect(try await h.provider.check(verification, code: sent).status == .pending)
    }

    @Test(
        "a wrong or unreadable slider, or an expired captcha token, answers a fresh slider and sends nothing",
        arguments: [
            (IDaaSWire.captchaVerifyPath, "IDAAS.SDK.SMS.1002"), (IDaaSWire.captchaVerifyPath, "IDAAS.SDK.SMS.1003"),
            (IDaaSWire.captchaVerifyPath, "SDK.SMS.1004"), (IDaaSWire.captchaVerifyPath, "IDAAS.SDK.COMMON.1005"),
            (IDaaSWire.smsSendPath, "IDAAS.SDK.COMMON.1005"),
        ])
    func freshSlider(_ path: String, _ code: String) async throws {
        let h = try Self.refusing(path, code)
        let (verification, challenge) = try await h.prepared()
        let result = try await h.submit(verification, x: try await h.answer(verification))
        #expect(result.sentNothing)
        guard case .solveChallenge(let fresh) = result.nextAction else {
            Issue.record("expected a fresh slider")
            return
        }
        #expect(fresh.background != challenge.background)
        #expect(h.outbox.messages(to: H.number).isEmpty)
    }

    @Test("system busy (COMMON.1008, HTTP 500) on a check is a retryable provider_unavailable, not a caller error")
    func busy() async throws {
        let h = try Self.refusing(IDaaSWire.smsLoginPath, "IDAAS.SDK.COMMON.1008", status: 500)
        let (verification, sent) = try await h.sent()
        let error = await expectGatewayError(.providerUnavailable) {
            try await h.provider.check(verification, code: sent)
        }
        #expect(error?.isRetryable == true)
        #expect(error?.vendor?.httpStatus == 500)
    }

    @Test("a configuration code at the slider is a misconfigured provider: provider_rejected, failed over")
    func configuration() async throws {
        let h = try Self.refusing(IDaaSWire.captchaPath, "IDAAS.SDK.SMS.1001")
        let error = await expectGatewayError(.providerRejected) { try await h.provider.prepare(try H.request()) }
        #expect(error?.errorClass == .providerPermanent)
    }

    @Test("verify_id_token names the SDK's callback code: 106 expired, 107 another client id, 103 forged")
    func callbackCodes() async throws {
        let h = try H()
        let (verification, code) = try await h.sent()
        let token = try #require(try await h.provider.check(verification, code: code).tokens["id_token"])
        var parts = try #require(token.stringValue).split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Data(#"{"aud":"sandbox-idaas-client-0001","exp":9999999999}"#.utf8))
        let forgedToken = JSONValue.string(parts.joined(separator: "."))
        let forged = await expectGatewayError(.invalidToken) {
            try await h.provider.perform(action: "verify_id_token", input: ["id_token": forgedToken])
        }
        #expect(forged?.vendor?.code == "103")
        let other = try H(settings: ["client_id": "another-app"], base: h.base)
        let audience = await expectGatewayError(.invalidToken) {
            try await other.provider.perform(action: "verify_id_token", input: ["id_token": token])
        }
        #expect(audience?.vendor?.code == "107")
        h.clock.advance(by: TimeInterval(IDaaSEmulator.idTokenLifetime + 120))
        let expired = await expectGatewayError(.invalidToken) {
            try await h.provider.perform(action: "verify_id_token", input: ["id_token": token])
        }
        #expect(expired?.vendor?.code == "106")
    }
}
