import Foundation
import GatewayCore
import HTTPTypes
import Testing

@testable import GatewaySinch

@Suite("Sinch emulator")
struct SinchEmulatorTests {
    @Test("verifications survive a restart through the emulator's persistence, written one by one")
    func persistence() async throws {
        let clock = ManualClock()
        let outbox = SandboxOutbox()
        let persistence = InMemoryEmulatorPersistence()
        let first = SinchEmulator(context: EmulatorContext(clock: clock, outbox: outbox, logger: .quiet, persistence: persistence))
        let settings = SinchPlugin.plugin.sandboxSettings(try #require(URL(string: SinchHarness.baseURL)))
        func provider(_ emulator: SinchEmulator) throws -> SinchProvider {
            try SinchProvider(
                context: ProviderContext(
                    providerID: "sinch", settings: settings,
                    transport: InProcessTransport(emulator: emulator, pathPrefix: SinchSandbox.mountPath), clock: clock,
                    logger: .quiet))
        }
        let request = try SinchHarness.request()
        let result = try await provider(first).start(request)
        #expect(persistence.writeCount == 1)
        let code = try #require(outbox.last(to: SinchHarness.phone)?.code)
        let second = SinchEmulator(context: EmulatorContext(clock: clock, outbox: outbox, logger: .quiet, persistence: persistence))
        let check = try await provider(second).check(SinchHarness.stored(request, result), code: code)
        #expect(check.status == .approved)
        // The restored emulator still knows the reference: reusing it is a conflict.
        await expectGatewayError(.providerRejected) { try await provider(second).start(request) }
    }

    @Test("the language table: exact tag, base language, and en-US when the country has neither")
    func languages() {
        #expect(SinchLanguages.negotiate(requested: ["fr-CH", "de"], country: "CH") == "fr-CH")
        #expect(SinchLanguages.negotiate(requested: ["de"], country: "AT") == "de-AT")
        #expect(SinchLanguages.negotiate(requested: ["ja"], country: "SE") == "en-US")
        #expect(SinchLanguages.negotiate(requested: [], country: "SE") == "en-US")
        #expect(SinchLanguages.negotiate(requested: ["es"], country: nil) == "en-US")
        #expect(SinchWire.languages(fromAcceptLanguage: "sv;q=0.5, es-ES, *;q=0.1, fr;q=0") == ["es-ES", "sv"])
        #expect(SinchWire.acceptLanguage(["pt_BR", "pt-br", "en", "bad tag!"]) == "pt-BR, en;q=0.9")
        #expect(SinchWire.acceptLanguage([]) == nil)
    }

    @Test("the emulator's answers decode with the shapes the Python SDK reads (sms.template, flashCall.cliFilter)")
    func shapes() async throws {
        let harness = try SinchHarness()
        _ = try await harness.start(.flashcall)
        let sent = try #require(harness.recorder.requests.first)
        let answer = await harness.emulator.handle(
            EmulatorRequest(method: .get, path: "/verification/v1/verifications/reference/vf_0123456789abcdef", query: nil,
                            headerFields: try Self.signedGET(path: "/verification/v1/verifications/reference/vf_0123456789abcdef", at: harness.clock.now),
                            body: Data()))
        guard case .response(let response) = answer else { return }
        let body = json(response.body)
        #expect(body["status"] as? String == "PENDING" && body["method"] as? String == "flashcall")
        #expect((body["identity"] as? [String: Any])?["endpoint"] as? String == SinchHarness.phone)
        #expect(body["countryId"] as? String == "SE")
        #expect((body["verificationTimestamp"] as? String)?.hasSuffix("Z") == false)
        #expect(sent.headerFields[.contentType] == "application/json; charset=UTF-8")
    }

    static func signedGET(path: String, at date: Date) throws -> HTTPFields {
        let key = try #require(SinchSigning.key(fromSecret: SinchSandbox.applicationSecret))
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[SinchSigning.timestampHeader] = SinchSigning.timestamp(date)
        headers[.authorization] = SinchSigning.authorization(
            applicationKey: SinchSandbox.applicationKey, key: key, method: "GET", body: Data(),
            contentType: "application/json", timestamp: SinchSigning.timestamp(date), resource: SinchSandbox.mountPath + path)
        return headers
    }
}
