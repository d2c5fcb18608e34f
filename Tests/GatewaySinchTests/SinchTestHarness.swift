import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Synchronization
import Testing

@testable import GatewaySinch

/// Plays the gateway for the emulator's callbacks: hands each to the provider's `handleCallback` with a
/// lookup over the verifications the test registers, and keeps the replies and updates.
final class GatewayStandIn: HTTPTransport {
    struct Delivered: Sendable {
        var body: Data
        var status: HTTPResponse.Status
        var updates: [ProviderUpdate]
    }

    private let provider = Mutex<SinchProvider?>(nil)
    private let known = Mutex<[ProviderUpdate.Target: ProviderVerification]>([:])
    private let delivered = Mutex<[Delivered]>([])
    private let received = Mutex<[VendorCallback]>([])
    /// What the gateway's country policy says of a destination.
    let permits = Mutex<@Sendable (Destination) -> Bool>({ _ in true })

    func bind(_ provider: SinchProvider) { self.provider.withLock { $0 = provider } }

    func register(_ verification: ProviderVerification, as targets: [ProviderUpdate.Target]) {
        known.withLock { known in for target in targets { known[target] = verification } }
    }

    var deliveries: [Delivered] { delivered.withLock { $0 } }
    /// Every callback as the provider got it.
    var callbacks: [VendorCallback] { received.withLock { $0 } }

    var lookup: VerificationLookup {
        let permits = self.permits.withLock { $0 }
        return VerificationLookup({ [self] target in self.known.withLock { $0[target] } }, permits: permits)
    }

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        guard let provider = provider.withLock({ $0 }) else { throw .connectFailed("no provider bound") }
        let callback = VendorCallback(
            method: request.method, url: request.url, subpath: "/", query: nil, headerFields: request.headerFields,
            body: request.body)
        received.withLock { $0.append(callback) }
        do {
            let reply = try await provider.handleCallback(callback, lookup: lookup)
            delivered.withLock {
                $0.append(Delivered(body: request.body, status: reply.response.status, updates: reply.updates))
            }
            return reply.response
        } catch {
            let status = HTTPResponse.Status(code: error.httpStatus)
            delivered.withLock { $0.append(Delivered(body: request.body, status: status, updates: [])) }
            return TransportResponse(status: status)
        }
    }
}

/// A Sinch provider wired to a ``SinchEmulator`` in process, sharing one manual clock and outbox; the
/// emulator's callbacks reach the provider through a ``GatewayStandIn``.
struct SinchHarness: EmulatorHarness {
    static let baseURL = "http://localhost:8080" + SinchSandbox.mountPath
    static let callbackURL = "http://localhost:8080/callbacks/sinch"
    static let phone = "+46701234567"

    let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
    let outbox = SandboxOutbox()
    let gateway = GatewayStandIn()
    let emulator: SinchEmulator
    let recorder: RecordingTransport
    let provider: SinchProvider

    init(
        settings extra: [String: String] = [:], timeout: Duration = .seconds(5), callbacks: Bool = true,
        persistence: any EmulatorPersistence = NoEmulatorPersistence()
    ) throws {
        let sender = callbacks ? CallbackSender(baseURL: URL(string: Self.callbackURL), transport: gateway) : .none
        emulator = SinchEmulator(
            context: EmulatorContext(
                clock: clock, outbox: outbox, logger: .quiet, callbacks: sender, persistence: persistence))
        recorder = RecordingTransport(InProcessTransport(emulator: emulator, pathPrefix: SinchSandbox.mountPath))
        provider = try SinchProvider(
            context: SinchPlugin.plugin.testContext(
                baseURL: Self.baseURL, settings: extra, transport: recorder, clock: clock, requestTimeout: timeout))
        gateway.bind(provider)
    }

    static func request(
        _ channel: Channel = .sms, to phone: String = phone, locales: [String] = [], id: String = "vf_0123456789abcdef"
    ) throws -> StartVerification {
        StartVerification(
            destination: .phone(try PhoneNumber(parsing: phone)), channel: channel, locales: locales, verificationID: id
        )
    }

    /// The provider's view of a started verification.
    static func stored(_ request: StartVerification, _ result: ProviderStartResult) -> ProviderVerification {
        ProviderVerification(
            id: request.verificationID ?? "", destination: request.destination,
            channel: result.channel ?? request.channel,
            reference: result.reference, state: result.state, locales: request.locales)
    }

    /// Starts over `channel` and returns the stored view and what reached the phone.
    func start(
        _ channel: Channel = .sms, to phone: String = phone, locales: [String] = [], id: String = "vf_0123456789abcdef"
    ) async throws -> (verification: ProviderVerification, result: ProviderStartResult, message: SandboxOutbox.Message?)
    {
        let request = try Self.request(channel, to: phone, locales: locales, id: id)
        let result = try await provider.start(request)
        return (Self.stored(request, result), result, outbox.last(to: phone))
    }

    static func wrong(_ code: String) -> String { code == "0000" ? "1111" : "0000" }
}

func json(_ data: Data) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
}
