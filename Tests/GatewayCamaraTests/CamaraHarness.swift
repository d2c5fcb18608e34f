import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Synchronization
import Testing

@testable import GatewayCamara

/// A CAMARA provider wired to a ``CamaraEmulator`` in process on one manual clock, with a public base URL so
/// the silent verification's redirect can be followed, and a simulated device that opens the `open_url`.
final class CamaraHarness: EmulatorHarness {
    static let mount = "/sandbox/camara"
    static let baseURL = "http://localhost:8080" + mount
    static let publicBaseURL = "http://localhost:8080"

    let clock = ManualClock()
    let outbox = SandboxOutbox()
    let emulator: CamaraEmulator
    /// Where the device's browser landed after the operator's redirects, for ``callbacks``.
    let landed = Mutex<[VendorCallback]>([])
    let recorder: RecordingTransport
    let provider: CamaraProvider

    init(
        settings extra: [String: String] = [:], publicBaseURL: String? = CamaraHarness.publicBaseURL,
        timeout: Duration = .seconds(10)
    ) throws {
        emulator = CamaraEmulator(
            context: .testing(
                clock: clock, outbox: outbox, callbacks: CallbackSink(),
                route: "http://localhost:8080/callbacks/camara"))
        recorder = RecordingTransport(InProcessTransport(emulator: emulator, pathPrefix: Self.mount))
        var settings = CamaraPlugin.plugin.sandboxSettings(try #require(URL(string: Self.baseURL)))
        settings.merge(extra) { _, new in new }
        provider = try CamaraProvider(
            context: ProviderContext(
                providerID: "camara", settings: settings, transport: recorder, clock: clock, logger: .quiet,
                requestTimeout: timeout, publicBaseURL: publicBaseURL.flatMap(URL.init(string:))))
    }

    /// The device opens the start's URL over mobile data: the operator's redirect, as the callback it lands on.
    func openOnTheDevice(_ result: ProviderStartResult) async throws -> VendorCallback {
        guard case .openURL(let opening) = result.nextAction else { throw HarnessError.noURL }
        let url = try #require(URLComponents(string: opening.url))
        let redirect = try await emulatorCall(.get, "/authorize", query: url.percentEncodedQuery)
        let location = try #require(redirect.headerFields[.location].flatMap(URLComponents.init(string:)))
        return VendorCallback(
            method: .get, url: try #require(location.url), subpath: "/", query: location.percentEncodedQuery,
            headerFields: [:], body: Data())
    }

    /// Sets a number's simulated network through the sandbox control.
    func set(_ number: String, _ control: String) async throws {
        let response = try await emulatorCall(.put, "/sandbox/numbers/" + number, body: Data(control.utf8))
        #expect(response.status == .ok)
    }

    func emulatorCall(
        _ method: HTTPRequest.Method, _ path: String, query: String? = nil, headers: HTTPFields = [:],
        body: Data = Data()
    ) async throws -> TransportResponse {
        let answer = await emulator.handle(
            EmulatorRequest(method: method, path: path, query: query, headerFields: headers, body: body))
        guard case .response(let response) = answer else { throw HarnessError.reset }
        return response
    }

    /// A silent start to `number`, the device opening its URL (the operator's redirect), and the callback the
    /// redirect lands on: the update the provider reports.
    func silentVerification(_ number: String) async throws -> (started: ProviderStartResult, reply: CallbackReply) {
        let destination = Destination.phone(try PhoneNumber(parsing: number))
        let started = try await provider.start(StartVerification(destination: destination, channel: .silentAuth))
        guard case .openURL(let opening) = started.nextAction else { throw HarnessError.noURL }
        #expect(opening.cellularOnly)
        let url = try #require(URLComponents(string: opening.url))
        #expect(url.path == Self.mount + "/authorize")
        let redirect = try await emulatorCall(.get, "/authorize", query: url.percentEncodedQuery)
        #expect(redirect.status == .found)
        let location = try #require(redirect.headerFields[.location].flatMap(URLComponents.init(string:)))
        #expect(location.path == "/callbacks/camara")
        let callback = VendorCallback(
            method: .get, url: try #require(location.url), subpath: "/", query: location.percentEncodedQuery,
            headerFields: [:], body: Data())
        let reference = started.reference
        let lookup = VerificationLookup { target in
            guard case .reference(let given) = target, given == reference else { return nil }
            return ProviderVerification(
                destination: destination, channel: .silentAuth, reference: reference, state: .empty)
        }
        return (started, try await provider.handleCallback(callback, lookup: lookup))
    }

    /// The token requests the provider made, as forms.
    var tokenRequests: [[String: String]] {
        recorder.requests.filter { $0.url.path.hasSuffix("/token") }
            .map { FormEncoding.decode(String(decoding: $0.body, as: UTF8.self)) }
    }

    enum HarnessError: Error {
        case noDevice
        case reset
        case noURL
    }
}

/// The CAMARA harness as the conformance suite drives it: the device's step is opening the start's URL.
struct CamaraConformanceRig: HarnessConformanceRig {
    let harness: CamaraHarness

    var provider: any VerificationProvider { harness.provider }

    func approveWithoutCode(_ result: ProviderStartResult, to destination: Destination) async throws {
        let callback = try await harness.openOnTheDevice(result)
        harness.landed.withLock { $0.append(callback) }
    }

    func callbacks() async -> [VendorCallback] {
        harness.landed.withLock { landed in
            defer { landed = [] }
            return landed
        }
    }
}

extension CamaraEmulator: SwitchedEmulator {}
