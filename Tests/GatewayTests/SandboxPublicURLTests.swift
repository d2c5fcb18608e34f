import Crypto
import Foundation
import GatewayCore
import GatewayTwilio
import HTTPTypes
import Testing

@testable import gateway

/// A sandbox with `public_base_url`: its emulators sign callbacks for the URL a vendor would be told (under
/// the public address) and deliver them to the gateway's own, as a proxy in front of the gateway would.
@Suite("The sandbox behind a public_base_url")
struct SandboxPublicURLTests {
    @Test(
        "a Twilio Push webhook from the sandbox verifies, with or without public_base_url",
        arguments: [nil, "https://verify.example.com", "https://verify.example.com/gateway/"])
    func twilioPushWebhook(publicBaseURL: String?) async throws {
        let harness = GatewayHarness()
        let yaml = "sandbox: true\n" + (publicBaseURL.map { "public_base_url: \"\($0)\"\n" } ?? "")
        let (_, runtime) = try await buildApplication(try harness.options(config: yaml))
        let emulator = try #require(runtime.sandbox?.mount("twilio")?.emulator)

        // A device enrols a push factor; the emulator tells the gateway with a signed `factor.created`.
        let token = try await Self.call(
            emulator, "/AccessTokens", form: [("Identity", "user-0001"), ("FactorType", "push")],
            authorization: Self.basic(TwilioSandbox.accountSID, TwilioSandbox.authToken))
        #expect(token.status == .created)
        let secret = try #require(token.json["token"]?.stringValue)
        let key = P256.Signing.PrivateKey().publicKey.derRepresentation.base64EncodedString()
        let factor = try await Self.call(
            emulator, "/Entities/user-0001/Factors",
            form: [
                ("FriendlyName", "Test phone"), ("FactorType", "push"), ("Binding.Alg", "ES256"),
                ("Binding.PublicKey", key), ("Config.AppId", "com.example.app"),
                ("Config.NotificationPlatform", "apn"),
                ("Config.NotificationToken", String(repeating: "ab", count: 32)), ("Config.SdkVersion", "3.0.2"),
            ],
            authorization: Self.basic("token", secret))
        #expect(factor.status == .created)

        let deliveries = harness.logs.messages.filter { $0.hasPrefix("twilio emulator webhook delivered") }
        #expect(deliveries.count == 1)
        #expect(deliveries.allSatisfy { $0.contains("http.status=200") }, "\(deliveries)")
        #expect(!harness.logs.messages.contains { $0.hasPrefix("twilio callback refused") })
    }

    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// A form POST to the emulator's Verify service, in process.
    static func call(
        _ emulator: any VendorEmulator, _ path: String, form: [(String, String)], authorization: String
    ) async throws -> (status: HTTPResponse.Status, json: JSONValue) {
        var headers = HTTPFields()
        headers[.authorization] = authorization
        headers[.contentType] = "application/x-www-form-urlencoded"
        let outcome = await emulator.handle(
            EmulatorRequest(
                method: .post, path: "/v2/Services/\(TwilioSandbox.serviceSID)" + path, query: nil,
                headerFields: headers, body: Data(FormEncoding.encode(form).utf8)))
        guard case .response(let response) = outcome else { throw TransportError.connectionReset("reset") }
        return (response.status, try JSONDecoder().decode(JSONValue.self, from: response.body))
    }
}
