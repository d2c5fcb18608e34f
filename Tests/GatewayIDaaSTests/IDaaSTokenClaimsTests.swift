import Foundation
import GatewayCore
import Testing

@testable import GatewayIDaaS

@Suite("IDaaS user information, the SMS language and the area codes at startup")
struct IDaaSTokenClaimsTests {
    typealias H = IDaaSProviderHarness

    @Test("the SDK guide's example ID token payload decodes with its user claims")
    func documentedPayload() throws {
        let payload = #"""
            {"id": "20220729174957176-2C7F-A2C54C293", "exp": 1659407592, "nbf": 1659407172,
             "mobile": "+86-13808603636", "jti": "7iwCYPo8EYcmLAD18x-CAw",
             "iss": "https://sdk2c.idaas-test-alpha.bccastle.com/api/v1/oauth2", "userName": "zhangrui1",
             "sub": "20220729174957176-2C7F-A2C54C293", "aud": "S1ScicdIVR1QUbNs8TBz6BYVd2Zt8Adc",
             "iat": 1659407292, "email": "", "name": "zhangrui1"}
            """#
        let claims = try JSONDecoder().decode(IDaaSWire.IDTokenClaims.self, from: Data(payload.utf8))
        #expect(claims.id == "20220729174957176-2C7F-A2C54C293")
        #expect(claims.mobile == "+86-13808603636")
        #expect(claims.userName == "zhangrui1" && claims.name == "zhangrui1")
        #expect(claims.email == "")
        #expect(claims.aud?.values == ["S1ScicdIVR1QUbNs8TBz6BYVd2Zt8Adc"])
    }

    @Test("verify_id_token returns the user: id, name, user_name, mobile, email")
    func userInOutput() async throws {
        let h = try H()
        let (verification, code) = try await h.sent()
        let token = try #require(try await h.provider.check(verification, code: code).tokens["id_token"])
        let output = try await h.provider.perform(action: "verify_id_token", input: ["id_token": token])
        guard case .object(let user) = output["user"] else {
            Issue.record("no user in \(output)")
            return
        }
        #expect(user["mobile"] == "+86-13800138000")
        #expect(user["id"]?.stringValue?.isEmpty == false)
        #expect(user["user_name"] == user["id"] && user["name"] == user["id"])
        #expect(user["email"] == "")
    }

    @Test("the sent SMS is Chinese whatever X-L says, and the send reports content_language zh")
    func contentLanguage() async throws {
        for language in ["en", "zh"] {
            let h = try H(settings: ["language": language])
            var (verification, _) = try await h.prepared()
            let result = try await h.submit(verification, x: try await h.answer(verification))
            verification.state = result.state
            #expect(result.contentLanguage == "zh")
            #expect(h.outbox.last(to: H.number)?.language == "zh")
        }
        let english = try H(settings: ["sms_language": "en"])
        let (verification, _) = try await english.prepared()
        let sent = try await english.submit(verification, x: try await english.answer(verification))
        #expect(sent.contentLanguage == "en")
        #expect(
            IDaaSPlugin.plugin.problems(in: ["sms_language": "not a tag"], providerID: "idaas").contains {
                $0.contains("sms_language")
            })
    }

    @Test("warmUp reads the area codes once, so routing knows the tenant's regions before any start")
    func warmUp() async throws {
        let h = try H(settings: ["area_codes_preload": "true"])
        #expect(h.provider.capabilities.servedRegions == ["CN", "HK", "MO", "TW"])
        await h.provider.warmUp()
        #expect(h.provider.capabilities.servedRegions == ["CN", "HK", "MO", "TW", "SG"])
        #expect(h.transport.paths.filter { $0.hasSuffix(IDaaSWire.areaCodesPath) }.count == 1)
        let off = try H()
        await off.provider.warmUp()
        #expect(off.transport.requests.isEmpty)
    }
}
