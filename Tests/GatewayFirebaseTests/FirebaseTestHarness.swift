import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayFirebase

extension StubTransport {
    /// Answers every request with `status` and `json`.
    static func json(_ json: String, status: HTTPResponse.Status = .ok) -> StubTransport {
        StubTransport { _ in
            TransportResponse(
                status: status, headerFields: [.contentType: "application/json"], body: Data(json.utf8))
        }
    }
}

/// An emulator on a manual clock, a provider built through the plugin's public entry point with the
/// sandbox settings, and a recording transport between them.
struct FirebaseHarness: EmulatorHarness {
    static let number = "+16505553434"
    /// ``FirebaseSandbox/testNumbers``' number and code.
    static let testNumber = "+16505550100"
    static let testCode = "123456"
    static let mount = "/sandbox/firebase"

    let clock = ManualClock()
    let outbox = SandboxOutbox()
    /// What the emulator and the provider logged.
    let logs = CapturedLogs()
    let emulator: FirebaseEmulator
    let transport: RecordingTransport
    let provider: FirebaseProvider

    init(
        settings extra: [String: String] = [:], emulatorTestNumbers: [String: String] = FirebaseSandbox.testNumbers,
        maxSendsPerNumberPerHour: Int? = nil, requestTimeout: Duration = .seconds(10),
        transport custom: (any HTTPTransport)? = nil, persistence: any EmulatorPersistence = NoEmulatorPersistence()
    ) throws {
        emulator = FirebaseEmulator(
            context: EmulatorContext(clock: clock, outbox: outbox, logger: logs.logger(), persistence: persistence),
            testNumbers: emulatorTestNumbers,
            maxSendsPerNumberPerHour: maxSendsPerNumberPerHour)
        transport = RecordingTransport(custom ?? InProcessTransport(emulator: emulator, pathPrefix: Self.mount))
        var settings = FirebasePlugin.plugin.sandboxSettings(
            try #require(URL(string: "http://gateway.test\(Self.mount)")))
        settings.merge(extra) { _, new in new }
        provider = try FirebaseProvider(
            context: ProviderContext(
                providerID: "firebase", settings: settings, transport: transport, clock: clock,
                logger: logs.logger(), requestTimeout: requestTimeout))
    }

    static func sms(
        _ number: String = number, proof: AppVerificationProof? = .recaptcha, locales: [String] = []
    ) throws -> StartVerification {
        StartVerification(
            destination: .phone(try PhoneNumber(parsing: number)), channel: .sms, locales: locales,
            appVerification: proof)
    }

    func start(
        _ number: String = number, proof: AppVerificationProof? = .recaptcha, locales: [String] = []
    ) async throws -> ProviderStartResult {
        try await provider.start(try Self.sms(number, proof: proof, locales: locales))
    }

    /// The stored view of a started verification, as the engine hands it back to the provider.
    static func verification(
        _ result: ProviderStartResult, to number: String = number
    ) throws -> ProviderVerification {
        ProviderVerification(
            destination: .phone(try PhoneNumber(parsing: number)), channel: .sms, reference: result.reference,
            state: result.state)
    }

    /// The newest code the emulator "sent" to `number`.
    func code(to number: String = number) throws -> String {
        try #require(outbox.last(to: number)?.code)
    }

    /// A request straight to the emulator, `path` relative to its mount.
    func raw(
        _ method: HTTPRequest.Method, _ path: String, query: String? = "key=\(FirebaseSandbox.apiKey)",
        json: String = "", headers: HTTPFields = [:]
    ) async -> TransportResponse? {
        let request = EmulatorRequest(
            method: method, path: path, query: query, headerFields: headers, body: Data(json.utf8))
        guard case .response(let response) = await emulator.handle(request) else { return nil }
        return response
    }

    static let sendPath = "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode"
    static let signInPath = "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber"
    static var codesPath: String { "/emulator/v1/projects/\(FirebaseSandbox.projectID)/verificationCodes" }
}

extension AppVerificationProof {
    static let recaptcha = AppVerificationProof(kind: .recaptcha, token: "sandbox-recaptcha-token")
}

/// The JSON object of a body, for tests that read the wire.
func jsonObject(_ data: Data) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

/// Google's error envelope of a response.
func envelope(_ response: TransportResponse?) throws -> FirebaseWire.ErrorEnvelope {
    try JSONDecoder().decode(FirebaseWire.ErrorEnvelope.self, from: try #require(response).body)
}
