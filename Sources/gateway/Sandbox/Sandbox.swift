import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The sandbox: every installed plugin's emulator mounted at `/sandbox/<plugin id>` on the gateway's
/// own port, the outbox of what they "sent", and their fault switches.
struct Sandbox: Sendable {
    struct Mount: Sendable {
        let pluginID: String
        let emulator: any VendorEmulator
    }

    let mounts: [Mount]
    let outbox: SandboxOutbox
    /// Where the outbox is kept across restarts (`nil`: not kept).
    let journal: OutboxJournal?
    let logger: Logger

    /// Builds and mounts an emulator for each plugin. With a `stateDirectory`, each emulator keeps its
    /// state in `emulators.sqlite` there, written entity by entity, so the sandbox survives a restart.
    init(
        plugins: [GatewayPlugin], context: EmulatorContext, stateDirectory: URL?, journal: OutboxJournal? = nil,
        callbackBaseURL: URL? = nil, publicCallbackBaseURL: URL? = nil, callbackTransport: (any HTTPTransport)? = nil,
        logger: Logger
    ) {
        let database = stateDirectory.flatMap {
            SQLiteEmulatorPersistence.open($0.appendingPathComponent("emulators.sqlite"), logger: logger)
        }
        var mounts: [Mount] = []
        for plugin in plugins {
            var context = context
            // In the sandbox each plugin serves one provider of the same id.
            // Emulators sign for the callback URL a vendor would be told (under `public_base_url`, when set)
            // and deliver to the gateway's own address, as a proxy in front of it would.
            let own = callbackBaseURL?.appending(path: plugin.id)
            let told = publicCallbackBaseURL?.appending(path: plugin.id)
            context.callbacks = CallbackSender(
                baseURL: told ?? own, deliveredTo: told == nil || told == own ? nil : own, transport: callbackTransport)
            if let database {
                context.persistence = SQLiteEmulatorPersistence(database: database, pluginID: plugin.id, logger: logger)
            }
            mounts.append(Mount(pluginID: plugin.id, emulator: plugin.makeEmulator(context)))
        }
        self.mounts = mounts
        self.outbox = context.outbox
        self.journal = journal
        self.logger = logger
    }

    func mount(_ pluginID: String) -> Mount? { mounts.first { $0.pluginID == pluginID } }

    static func prefix(_ pluginID: String) -> String { "/sandbox/\(pluginID)" }

    /// Serves one request addressed to an emulator.
    func handle(_ mount: Mount, request: Request, path: String) async throws -> Response {
        var request = request
        let buffer = try await request.collectBody(upTo: 1 << 20)
        let emulatorRequest = EmulatorRequest(
            method: request.method, path: path.isEmpty ? "/" : path, query: request.uri.query,
            headerFields: request.headers, body: Data(buffer.readableBytesView))
        let outcome = await mount.emulator.handle(emulatorRequest)
        switch outcome {
        case .response(let response):
            return Response(
                status: response.status, headers: response.headerFields,
                body: ResponseBody(byteBuffer: ByteBuffer(data: response.body)))
        case .reset:
            // Send the head, then fail the body: the server closes the connection mid-response.
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody { _ in throw SandboxConnectionReset() })
        }
    }

    var outboxJSON: JSONValue { outboxJSON(to: nil) }

    func outboxJSON(to: String?) -> JSONValue {
        .object([
            "messages": .array(
                (to.map(outbox.messages(to:)) ?? outbox.all).map { message in
                    [
                        "provider": .string(message.provider), "kind": .string(message.kind.rawValue),
                        "channel": .string(message.channel), "to": .string(message.to),
                        "code": message.code.map(JSONValue.string) ?? .null, "text": .string(message.text),
                        "language": message.language.map(JSONValue.string) ?? .null,
                        "sent_at": .string(VerificationsController.timestamp(message.sentAt)),
                    ]
                })
        ])
    }
}

struct SandboxConnectionReset: Error {}

/// Hands `/sandbox/<plugin>/…` requests to the emulators before routing, whatever their method and
/// path, so vendor clients see the vendor's own paths and error bodies.
struct SandboxMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let sandbox: Sandbox

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        guard path.hasPrefix("/sandbox/") else { return try await next(request, context) }
        let rest = path.dropFirst("/sandbox/".count)
        let pluginID = String(rest.prefix { $0 != "/" })
        guard let mount = sandbox.mount(pluginID) else { return try await next(request, context) }
        return try await sandbox.handle(mount, request: request, path: String(rest.dropFirst(pluginID.count)))
    }
}

extension Sandbox {
    /// `GET /sandbox/outbox`, `DELETE /sandbox/outbox`, `GET|PUT|DELETE /sandbox/faults/{plugin}`.
    func addRoutes(to router: some RouterMethods<GatewayRequestContext>) {
        router.get("sandbox/outbox") { request, _ in
            // `?to=+E164` narrows the list to one recipient (a simulation reads thousands of codes).
            let to = request.uri.queryParameters.get("to").map { String($0) }
            return JSONResponse.response(outboxJSON(to: to))
        }
        router.delete("sandbox/outbox") { _, _ in
            outbox.removeAll()
            journal?.replace(with: [])
            return JSONResponse.response(outboxJSON)
        }
        router.get("sandbox/faults/{plugin}") { _, context in
            let mount = try faultMount(context)
            return try JSONResponse.response(
                Self.faultsJSON(mount.emulator.faults.current, delivery: outbox.delivery(for: mount.pluginID)))
        }
        // Back to a vendor that behaves: no faults, every message delivered.
        router.delete("sandbox/faults/{plugin}") { _, context in
            let mount = try faultMount(context)
            mount.emulator.faults.clear()
            outbox.setDelivery(SandboxOutbox.Delivery(), for: mount.pluginID)
            logger.notice("sandbox faults cleared", metadata: ["plugin.id": "\(mount.pluginID)"])
            return try JSONResponse.response(Self.faultsJSON(.none, delivery: SandboxOutbox.Delivery()))
        }
        // A fault switch is set with a JSON body like the API's; the emulators' own routes take any body.
        router.group("sandbox/faults").add(middleware: JSONBodyMiddleware()).put("{plugin}") { request, context in
            var request = request
            let mount = try faultMount(context)
            let data = try await VerificationsController.body(of: &request, upTo: 4096)
            let reader = try JSONObjectReader(data: data, allowEmpty: true)
            let faults = try Self.faults(from: reader)
            var delivery = outbox.delivery(for: mount.pluginID)
            if let rate = try reader.number("delivery_rate") {
                guard (0...1).contains(rate) else {
                    throw GatewayError.invalidRequest("`delivery_rate` must be a number from 0 to 1.")
                }
                delivery.rate = rate
            }
            if let seed = try reader.integer("delivery_seed", in: 0...Int(Int32.max)) { delivery.seed = seed }
            if let byCountry = try reader.object("delivery_rate_by_country") {
                delivery.byCountry = try Self.countryRates(byCountry, field: "delivery_rate_by_country")
            }
            if let rate = try reader.number("undelivered_receipt_rate") {
                guard (0...1).contains(rate) else {
                    throw GatewayError.invalidRequest("`undelivered_receipt_rate` must be a number from 0 to 1.")
                }
                delivery.undeliveredReceiptRate = rate
            }
            if let byCountry = try reader.object("undelivered_receipt_rate_by_country") {
                delivery.undeliveredReceiptRateByCountry = try Self.countryRates(
                    byCountry, field: "undelivered_receipt_rate_by_country")
            }
            if reader.fields["undelivered_code"] == .null {
                delivery.undeliveredCode = nil
            } else if let code = try reader.string("undelivered_code") {
                guard (1...16).contains(code.count), code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
                else {
                    throw GatewayError.invalidRequest(
                        "`undelivered_code` must be the vendor's error code: 1 to 16 letters and digits.")
                }
                delivery.undeliveredCode = code
            }
            if let delay = try reader.integer("receipt_delay_ms", in: 0...600_000) {
                delivery.receiptDelayMilliseconds = delay
            }
            mount.emulator.faults.set(faults)
            outbox.setDelivery(delivery, for: mount.pluginID)
            logger.notice("sandbox faults set", metadata: ["plugin.id": "\(mount.pluginID)"])
            return try JSONResponse.response(Self.faultsJSON(faults, delivery: delivery))
        }
    }

    /// The faults a `PUT` body asks for, checked field by field and then as a whole (rates that add up to
    /// more than 1, latency past its bound): every problem in one `invalid_request`.
    static func faults(from reader: JSONObjectReader) throws(GatewayError) -> FaultSwitch.Faults {
        try reader.rejectUnknown(allowing: [
            "latency_ms", "latency_jitter_ms", "server_error_status", "malformed_body", "connection_reset",
            "error_rate", "error_status", "reset_rate", "malformed_rate", "seed", "remaining", "delivery_rate",
            "delivery_seed", "delivery_rate_by_country", "undelivered_receipt_rate",
            "undelivered_receipt_rate_by_country", "undelivered_code", "receipt_delay_ms",
        ])
        let latencyBound = 0...FaultSwitch.Faults.maximumLatencyMilliseconds
        let faults = FaultSwitch.Faults(
            latencyMilliseconds: try reader.integer("latency_ms", in: latencyBound) ?? 0,
            latencyJitterMilliseconds: try reader.integer("latency_jitter_ms", in: latencyBound) ?? 0,
            serverErrorStatus: try reader.integer("server_error_status", in: 500...599),
            malformedBody: try reader.bool("malformed_body") ?? false,
            connectionReset: try reader.bool("connection_reset") ?? false,
            errorRate: try reader.number("error_rate") ?? 0,
            errorStatus: try reader.integer("error_status", in: 500...599) ?? 503,
            resetRate: try reader.number("reset_rate") ?? 0,
            malformedRate: try reader.number("malformed_rate") ?? 0,
            seed: try reader.integer("seed", in: 0...Int(Int32.max)) ?? 0,
            remaining: try reader.integer("remaining", in: 1...1_000_000))
        let problems = faults.problems
        guard problems.isEmpty else { throw GatewayError.invalidRequest(problems.joined(separator: " ")) }
        return faults
    }

    /// `{"ID": 0.4, "GB": 0.95}`: region codes (any case) to delivery rates from 0 to 1; every problem in one
    /// `invalid_request`. An empty object clears them.
    static func countryRates(_ reader: JSONObjectReader, field: String) throws(GatewayError) -> [String: Double] {
        var rates: [String: Double] = [:]
        var problems: [String] = []
        for key in reader.fields.keys.sorted() {
            guard let region = PhoneRegion.named(key)?.code else {
                problems.append("`\(field)`: `\(key)` is not a region code.")
                continue
            }
            guard case .number(let rate) = reader.fields[key], (0...1).contains(rate) else {
                problems.append("`\(field).\(key)` must be a number from 0 to 1.")
                continue
            }
            rates[region] = rate
        }
        guard problems.isEmpty else { throw GatewayError.invalidRequest(problems.joined(separator: " ")) }
        return rates
    }

    private func faultMount(_ context: GatewayRequestContext) throws -> Mount {
        let pluginID = try context.parameters.require("plugin")
        guard let mount = mount(pluginID) else {
            throw GatewayError(.notFound, "No sandbox emulator named `\(pluginID)`.")
        }
        return mount
    }

    static func faultsJSON(_ faults: FaultSwitch.Faults, delivery: SandboxOutbox.Delivery) throws -> JSONValue {
        [
            "delivery_rate": .number(delivery.rate),
            "delivery_seed": .number(Double(delivery.seed)),
            "delivery_rate_by_country": .object(delivery.byCountry.mapValues(JSONValue.number)),
            "undelivered_receipt_rate": .number(delivery.undeliveredReceiptRate),
            "undelivered_receipt_rate_by_country": .object(
                delivery.undeliveredReceiptRateByCountry.mapValues(JSONValue.number)),
            "undelivered_code": delivery.undeliveredCode.map(JSONValue.string) ?? .null,
            "receipt_delay_ms": .number(Double(delivery.receiptDelayMilliseconds)),
            "latency_ms": .number(Double(faults.latencyMilliseconds)),
            "latency_jitter_ms": .number(Double(faults.latencyJitterMilliseconds)),
            "server_error_status": faults.serverErrorStatus.map { .number(Double($0)) } ?? .null,
            "malformed_body": .bool(faults.malformedBody),
            "connection_reset": .bool(faults.connectionReset),
            "error_rate": .number(faults.errorRate),
            "error_status": .number(Double(faults.errorStatus)),
            "reset_rate": .number(faults.resetRate),
            "malformed_rate": .number(faults.malformedRate),
            "seed": .number(Double(faults.seed)),
            "remaining": faults.remaining.map { .number(Double($0)) } ?? .null,
        ]
    }
}
