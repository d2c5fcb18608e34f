import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewaySinch

@Suite("Sinch provider failures")
struct SinchProviderFailureTests {
    @Test("a wrong application secret fails the signature: 40102, provider_auth_failed, nothing sent")
    func badSignature() async throws {
        let harness = try SinchHarness(settings: ["application_secret": "d3Jvbmctc2VjcmV0"])
        let error = await expectGatewayError(.providerAuthFailed) {
            try await harness.provider.start(try SinchHarness.request())
        }
        #expect(error?.vendor == GatewayError.VendorDetail(providerID: "sinch", code: "40102", httpStatus: 401))
        #expect(error?.errorClass == .providerPermanent)
        #expect(harness.outbox.all.isEmpty)
    }

    @Test("a wrong Basic secret is refused too, and an unknown key is 40004")
    func basicAndKey() async throws {
        let wrongSecret = try SinchHarness(settings: ["auth": "basic", "application_secret": "d3Jvbmc="])
        let error = await expectGatewayError(.providerAuthFailed) {
            try await wrongSecret.provider.start(try SinchHarness.request())
        }
        #expect(error?.vendor?.code == "40102")
        let wrongKey = try SinchHarness(settings: ["application_key": "someone-else"])
        let keyError = await expectGatewayError(.providerAuthFailed) {
            try await wrongKey.provider.start(try SinchHarness.request())
        }
        #expect(keyError?.vendor == GatewayError.VendorDetail(providerID: "sinch", code: "40004", httpStatus: 400))
    }

    @Test(
        "every errorCode, answered by the emulator in Sinch's shape, reaches the gateway as its row says",
        arguments: SinchErrorMapping.rows)
    func everyErrorCode(_ row: VendorErrorRow) async throws {
        let harness = try SinchHarness()
        let code = try #require(row.code.flatMap { Int($0) })
        let error = await expectGatewayError(row.mapsTo) {
            try await harness.provider.start(try SinchHarness.request(to: SinchSandbox.errorNumber(code)))
        }
        #expect(
            error?.vendor == GatewayError.VendorDetail(providerID: "sinch", code: row.code, httpStatus: row.httpStatus))
        #expect(harness.outbox.all.isEmpty)
    }

    @Test("the emulator's own refusals: a reused reference is 40900, too many starts 42901, unknown id 40400")
    func naturalErrors() async throws {
        let harness = try SinchHarness()
        let (verification, _, _) = try await harness.start()
        let conflict = await expectGatewayError(.providerRejected) {
            try await harness.provider.start(try SinchHarness.request())
        }
        #expect(conflict?.vendor?.code == "40900")
        for index in 2...5 {
            _ = try await harness.provider.start(try SinchHarness.request(id: "vf_\(index)"))
        }
        let velocity = await expectGatewayError(.rateLimited) {
            try await harness.provider.start(try SinchHarness.request(id: "vf_6"))
        }
        #expect(velocity?.vendor?.code == "42901" && velocity?.vendor?.httpStatus == 429)
        harness.clock.advance(by: 61)
        _ = try await harness.provider.start(try SinchHarness.request(id: "vf_7"))
        var unknown = verification
        unknown.reference = "1000000000000000000"
        let missing = await expectGatewayError(.notFound) { try await harness.provider.check(unknown, code: "1234") }
        #expect(missing?.vendor?.code == "40400")
    }

    @Test("an emulated outage is provider_unavailable: 50000 for 500, 50300 for 503", arguments: [500, 503])
    func serverError(_ status: Int) async throws {
        let harness = try SinchHarness()
        harness.emulator.faults.set(FaultSwitch.Faults(serverErrorStatus: status))
        let error = await expectGatewayError(.providerUnavailable) {
            try await harness.provider.start(try SinchHarness.request())
        }
        #expect(error?.vendor?.code == (status == 503 ? "50300" : "50000") && error?.vendor?.httpStatus == status)
        #expect(error?.sendMayHaveHappened == false)
    }

    @Test("a 2xx body that is not Sinch's JSON is provider_error; a start may have sent, a check did not")
    func malformed() async throws {
        let harness = try SinchHarness()
        harness.emulator.faults.set(FaultSwitch.Faults(malformedBody: true, remaining: 1))
        let start = await expectGatewayError(.providerError) {
            try await harness.provider.start(try SinchHarness.request())
        }
        #expect(start?.sendMayHaveHappened == true && start?.vendor?.httpStatus == 200)
        let (verification, _, message) = try await harness.start(to: "+46701234568")
        harness.emulator.faults.set(FaultSwitch.Faults(malformedBody: true, remaining: 1))
        let check = await expectGatewayError(.providerError) {
            try await harness.provider.check(verification, code: try #require(message?.code))
        }
        #expect(check?.sendMayHaveHappened == false)
    }

    @Test("the emulator answers bad requests in Sinch's error shape")
    func emulatorShapes() async throws {
        let harness = try SinchHarness()
        func start(_ body: String) async throws -> [String: Any] {
            let key = try #require(SinchSigning.key(fromSecret: SinchSandbox.applicationSecret))
            let data = Data(body.utf8)
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[SinchSigning.timestampHeader] = VendorDate.iso8601(harness.clock.now)
            headers[.authorization] = SinchSigning.authorization(
                applicationKey: SinchSandbox.applicationKey, key: key, method: "POST", body: data,
                contentType: "application/json", timestamp: VendorDate.iso8601(harness.clock.now),
                resource: "/verification/v1/verifications")
            let answer = await harness.emulator.handle(
                EmulatorRequest(
                    method: .post, path: "/verification/v1/verifications", query: nil, headerFields: headers, body: data
                ))
            guard case .response(let response) = answer else { return [:] }
            return json(response.body)
        }
        #expect(try await start(#"{"method":"sms","identity":{"type":"number"}}"#)["errorCode"] as? Int == 40002)
        #expect(
            try await start(#"{"method":"sms","identity":{"type":"number","endpoint":"46701234567"}}"#)["errorCode"]
                as? Int == 40005)
        #expect(
            try await start(#"{"method":"sms","identity":{"type":"number","endpoint":"+4813"}}"#)["errorCode"] as? Int
                == 40001)
        #expect(
            try await start(#"{"method":"fax","identity":{"type":"number","endpoint":"+46701234567"}}"#)["errorCode"]
                as? Int == 40001)
        let unsigned = await harness.emulator.handle(
            EmulatorRequest(
                method: .get, path: "/verification/v1/verifications/id/1", query: nil, headerFields: [:], body: Data()))
        if case .response(let response) = unsigned {
            #expect(response.status.code == 401)
            let body = json(response.body)
            #expect(body["errorCode"] as? Int == 40104 && body["message"] is String && body["reference"] is String)
        }
    }
}
