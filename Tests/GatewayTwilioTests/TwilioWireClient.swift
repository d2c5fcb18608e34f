import Foundation
import GatewayCore
import HTTPTypes
import Testing

@testable import GatewayTwilio

/// Talks to a ``TwilioEmulator`` directly, as the official client would over HTTP.
struct TwilioWireClient {
    static let service = "/v2/Services/\(TwilioSandbox.serviceSID)"
    static let basic =
        "Basic " + Data("\(TwilioSandbox.accountSID):\(TwilioSandbox.authToken)".utf8).base64EncodedString()

    let clock: ManualClock
    let outbox = SandboxOutbox()
    let emulator: TwilioEmulator

    init(persistence: any EmulatorPersistence = NoEmulatorPersistence(), clock: ManualClock = ManualClock()) {
        self.clock = clock
        emulator = TwilioEmulator(
            context: EmulatorContext(clock: clock, outbox: outbox, logger: .quiet, persistence: persistence))
    }

    func send(
        _ method: HTTPRequest.Method, _ path: String, _ form: [(String, String)] = [],
        authorization: String? = Self.basic
    ) async throws -> TransportResponse {
        var headers = HTTPFields()
        if let authorization { headers[.authorization] = authorization }
        if method == .post { headers[.contentType] = "application/x-www-form-urlencoded" }
        let request = EmulatorRequest(
            method: method, path: path, query: nil, headerFields: headers, body: Data(FormEncoding.encode(form).utf8))
        guard case .response(let response) = await emulator.handle(request) else {
            Issue.record("the emulator reset the connection")
            throw CancellationError()
        }
        return response
    }

    func start(_ to: String = TwilioHarness.phone, channel: String = "sms") async throws -> TwilioWire.Verification {
        let response = try await send(.post, Self.service + "/Verifications", [("To", to), ("Channel", channel)])
        #expect(response.status.code == 201)
        return try JSONDecoder().decode(TwilioWire.Verification.self, from: response.body)
    }

    func check(_ form: [(String, String)]) async throws -> TransportResponse {
        try await send(.post, Self.service + "/VerificationCheck", form)
    }
}
