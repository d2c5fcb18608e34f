import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayTwilio

@Suite("Twilio provider configuration failures")
struct TwilioProviderConfigurationTests {
    static let notFound = ScriptedTransport.response(
        status: 404,
        json: #"{"code":20404,"message":"The requested resource was not found","more_info":"x","status":404}"#)

    @Test("a start for an unknown service is provider_rejected, not a verification's not_found")
    func unknownService() async throws {
        let harness = try TwilioHarness()
        var settings = TwilioPlugin.plugin.sandboxSettings(try #require(URL(string: TwilioHarness.baseURL)))
        settings["service_sid"] = "VA" + String(repeating: "0", count: 32)
        let provider = try TwilioProvider(
            context: ProviderContext(
                providerID: "twilio", settings: settings,
                transport: InProcessTransport(emulator: harness.emulator, pathPrefix: TwilioHarness.mount),
                clock: harness.clock, logger: .quiet))
        let error = await expectGatewayError(.providerRejected) {
            try await provider.start(try TwilioHarness.smsStart())
        }
        #expect(error?.vendor == GatewayError.VendorDetail(providerID: "twilio", code: "20404", httpStatus: 404))
        #expect(error?.errorClass == .providerPermanent)
    }

    @Test("a start refused with 404 is sent once more without Locale, as Twilio advises")
    func localeRefused() async throws {
        let sid = "VE" + String(repeating: "a", count: 32)
        let created = ScriptedTransport.response(
            status: 201, json: #"{"sid":"\#(sid)","status":"pending","date_created":"2027-01-15T08:00:00Z"}"#)
        let transport = ScriptedTransport([Self.notFound, created])
        let provider = try TwilioHarness.provider(over: transport)
        let result = try await provider.start(try TwilioHarness.smsStart(locales: ["pt-BR"]))
        #expect(result.reference == sid)
        #expect(result.contentLanguage == nil)
        let requests = transport.requests
        #expect(requests.count == 2)
        #expect(formFields(requests[0].body)["Locale"] == "pt-BR")
        #expect(formFields(requests[1].body)["Locale"] == nil)
    }

    @Test("a start refused with 404 twice is provider_rejected after one retry")
    func localeRetryOnce() async throws {
        let transport = ScriptedTransport([Self.notFound, Self.notFound, Self.notFound])
        let provider = try TwilioHarness.provider(over: transport)
        await expectGatewayError(.providerRejected) {
            try await provider.start(try TwilioHarness.smsStart(locales: ["es"]))
        }
        #expect(transport.requests.count == 2)
    }
}
