import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

import struct NIOCore.NIOTooManyBytesError

/// `/v1/verifications`: start, check, resend, cancel, get (DESIGN.md §4).
struct VerificationsController: Sendable {
    let service: VerificationService
    let signer: VerificationTokenSigner

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("verifications", use: start)
        group.get("verifications/{id}", use: get)
        group.post("verifications/{id}/check", use: check)
        group.post("verifications/{id}/resend", use: resend)
        group.post("verifications/{id}/cancel", use: cancel)
        group.post("providers/{provider}/actions/{action}", use: action)
    }

    // MARK: start

    static let startFields: Set<String> = [
        "to", "channel", "locales", "app_verification", "code_length", "client_ref", "metadata", "provider",
        "region",
    ]

    @Sendable func start(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let body = try await Self.body(of: &request, context: context)
        let idempotencyKey = try Self.idempotencyKey(request, context: context)
        guard let idempotencyKey else {
            return JSONResponse.response(try await startBody(body: body, context: context), status: .created)
        }
        let fingerprint = SHA256.hash(data: body).map { String(format: "%02x", $0) }.joined()
        switch try await service.store.claimIdempotencyKey(
            idempotencyKey, fingerprint: fingerprint, at: service.clock.now)
        {
        case .replay(let stored):
            var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
            headers[.idempotentReplayed] = "true"
            return Response(
                status: HTTPResponse.Status(code: stored.status), headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(data: stored.body)))
        case .inProgress:
            throw GatewayError(
                .idempotencyConflict, "A request with this Idempotency-Key is still being processed; retry shortly.")
        case .mismatch:
            throw GatewayError(
                .idempotencyConflict, "This Idempotency-Key was already used with a different request body.")
        case .claimed:
            do {
                let data = JSONResponse.encode(try await startBody(body: body, context: context))
                try await service.store.completeIdempotencyKey(
                    idempotencyKey, response: StoredResponse(status: 201, body: data))
                return Response(
                    status: .created, headers: [.contentType: "application/json; charset=utf-8"],
                    body: ResponseBody(byteBuffer: ByteBuffer(data: data)))
            } catch let error as GatewayError where error.errorClass == .caller || error.errorClass == .blocked {
                // The same body will fail the same way: keep the answer so a replay gets it without a send.
                let apiError = APIError(error)
                try await service.store.completeIdempotencyKey(
                    idempotencyKey,
                    response: StoredResponse(
                        status: Int(apiError.status.code), body: apiError.body(requestID: context.requestID)))
                throw error
            } catch {
                // A retry may succeed (vendor down, state changed): free the key.
                try? await service.store.releaseIdempotencyKey(idempotencyKey)
                throw error
            }
        }
    }

    private func startBody(body: Data, context: GatewayRequestContext) async throws -> JSONValue {
        let start = try Self.parseStart(body)
        let record = try await service.start(start, apiKeyID: context.apiKey?.id, apiKeyName: context.apiKey?.name)
        return Self.render(record, now: service.clock.now)
    }

    static func parseStart(_ body: Data) throws(GatewayError) -> StartVerification {
        let reader = try JSONObjectReader(data: body)
        try reader.rejectUnknown(allowing: startFields)
        let channelName = try reader.string("channel", maxLength: 32) ?? "sms"
        guard let channel = Channel(rawValue: channelName) else {
            let known = Channel.allCases.map(\.rawValue).joined(separator: ", ")
            throw GatewayError(.unsupportedChannel, "`channel` must be one of: \(known).")
        }
        let to = try reader.string("to", required: true, maxLength: 254) ?? ""
        let region = try PhoneNumbersController.region(try reader.string("region", maxLength: 8))
        let destination = try Destination.parse(to, for: channel, region: region)
        let locales = try reader.stringArray("locales", maxCount: 10, maxLength: 35) ?? []
        for locale in locales where !isLanguageTag(locale) {
            throw GatewayError.invalidRequest("`locales` entry `\(locale)` is not a language tag such as `es-ES`.")
        }
        let proof = try parseProof(reader)
        return StartVerification(
            destination: destination,
            channel: channel,
            locales: locales,
            appVerification: proof,
            codeLength: try reader.integer("code_length", in: 4...10),
            clientReference: try reader.string("client_ref", maxLength: 128),
            metadata: try reader.stringMap("metadata", maxCount: 20) ?? [:],
            forcedProvider: try reader.string("provider", maxLength: 40))
    }

    /// The optional `app_verification` object of a start or a resend.
    static func parseProof(_ reader: JSONObjectReader) throws(GatewayError) -> AppVerificationProof? {
        guard let object = try reader.object("app_verification") else { return nil }
        try object.rejectUnknown(allowing: ["type", "token", "secret"])
        let typeName = try object.string("type", required: true, maxLength: 32) ?? ""
        guard let kind = AppVerificationProof.Kind(rawValue: typeName) else {
            let known = AppVerificationProof.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw GatewayError.invalidRequest("`app_verification.type` must be one of: \(known).")
        }
        let token = try object.string("token", required: true, maxLength: 8192) ?? ""
        let secret = try object.string("secret", maxLength: 1024)
        if kind == .iosReceipt && secret == nil {
            throw GatewayError.invalidRequest("`app_verification.secret` is required with type ios_receipt.")
        }
        return AppVerificationProof(kind: kind, token: token, secret: secret)
    }

    static func isLanguageTag(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return false }
        return parts.dropFirst().allSatisfy {
            (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }

    // MARK: check, resend, cancel, get

    @Sendable func check(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let id = try context.parameters.require("id")
        let reader = try JSONObjectReader(data: try await Self.body(of: &request, context: context), allowEmpty: true)
        try reader.rejectUnknown(allowing: ["code"])
        let code = try reader.string("code", maxLength: 32)
        if let code, code.isEmpty || code.contains(where: { !$0.isASCII || $0.isWhitespace }) {
            throw GatewayError.invalidRequest("`code` must be the code the user received, without spaces.")
        }
        let outcome = try await service.check(CheckVerification(verificationID: id, code: code))
        var body = Self.render(outcome.record, now: service.clock.now)
        if outcome.record.status == .approved, case .object(var fields) = body {
            fields["token"] = .string(signer.sign(outcome.record, at: service.clock.now))
            fields["provider_tokens"] = .object(outcome.providerTokens.mapValues(JSONValue.string))
            body = .object(fields)
        }
        return JSONResponse.response(body)
    }

    @Sendable func resend(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let id = try context.parameters.require("id")
        let reader = try JSONObjectReader(data: try await Self.body(of: &request, context: context), allowEmpty: true)
        try reader.rejectUnknown(allowing: ["channel", "app_verification"])
        let proof = try Self.parseProof(reader)
        var channel: Channel?
        if let name = try reader.string("channel", maxLength: 32) {
            guard let parsed = Channel(rawValue: name) else {
                throw GatewayError(
                    .unsupportedChannel,
                    "`channel` must be one of: \(Channel.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            channel = parsed
        }
        let record = try await service.resend(id: id, channel: channel, appVerification: proof)
        return JSONResponse.response(Self.render(record, now: service.clock.now))
    }

    @Sendable func cancel(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let id = try context.parameters.require("id")
        let reader = try JSONObjectReader(data: try await Self.body(of: &request, context: context), allowEmpty: true)
        try reader.rejectUnknown(allowing: [])
        let record = try await service.cancel(id: id)
        return JSONResponse.response(Self.render(record, now: service.clock.now))
    }

    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let id = try context.parameters.require("id")
        let record = try await service.get(id: id)
        var body = Self.render(record, now: service.clock.now)
        if let include = request.uri.queryParameters.get("include") {
            guard include == "events" || include == "timeline" else {
                throw GatewayError.invalidRequest("`include` takes the value `timeline` (or its older name `events`).")
            }
            let events = try await service.events(id: id)
            if case .object(var fields) = body {
                fields[String(include)] = .array(
                    events.map { event in
                        [
                            "kind": .string(event.kind.rawValue), "at": .string(Self.timestamp(event.at)),
                            "detail": .object(event.detail.mapValues(JSONValue.string)),
                        ]
                    })
                body = .object(fields)
            }
        }
        return JSONResponse.response(body)
    }

    @Sendable func action(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let providerID = try context.parameters.require("provider")
        let name = try context.parameters.require("action")
        guard let provider = service.registry.provider(providerID) else {
            throw GatewayError(.notFound, "No provider named `\(providerID)` is configured.")
        }
        guard let action = provider.actions.first(where: { $0.name == name }) else {
            throw GatewayError(.notFound, "Provider `\(providerID)` has no action named `\(name)`.")
        }
        let reader = try JSONObjectReader(data: try await Self.body(of: &request, context: context), allowEmpty: true)
        let input = try reader.stringMap("input", maxCount: 32, maxLength: 8192) ?? [:]
        try reader.rejectUnknown(allowing: ["input"])
        for key in action.requiredInputs where input[key] == nil {
            throw GatewayError.invalidRequest("`input.\(key)` is required by action `\(name)`.")
        }
        let output = try await provider.perform(action: name, input: input)
        return JSONResponse.response([
            "provider": .string(providerID), "action": .string(name),
            "output": .object(output.mapValues(JSONValue.string)),
        ])
    }

    // MARK: helpers

    static func render(_ record: VerificationRecord, now: Date) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(record.id),
            "status": .string(record.effectiveStatus(at: now).rawValue),
            "to": .string(record.destination.value),
            "channel": .string(record.channel.rawValue),
            "provider": .string(record.providerID),
            "content_language": record.contentLanguage.map(JSONValue.string) ?? .null,
            "expires_at": .string(timestamp(record.expiresAt)),
            "attempts_remaining": .number(Double(record.attemptsRemaining)),
            "sends": .number(Double(record.sends)),
            "created_at": .string(timestamp(record.createdAt)),
            "updated_at": .string(timestamp(record.updatedAt)),
            "experiment_arm": record.experimentArm.map(JSONValue.string) ?? .null,
            "experiment": record.experiment.map(JSONValue.string) ?? .null,
            "route": record.route.map(JSONValue.string) ?? .null,
            "test_number": .bool(record.isTestNumber),
            "client_ref": record.clientReference.map(JSONValue.string) ?? .null,
        ]
        if !record.metadata.isEmpty { fields["metadata"] = .object(record.metadata.mapValues(JSONValue.string)) }
        return .object(fields)
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }

    static func body(of request: inout Request, context: GatewayRequestContext) async throws -> Data {
        do {
            let buffer = try await request.collectBody(upTo: context.maxUploadSize)
            return Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            // Depending on how the body arrived, the limit surfaces as NIO's error or Hummingbird's 413.
            throw HTTPError(.contentTooLarge)
        }
    }

    static func idempotencyKey(_ request: Request, context: GatewayRequestContext) throws(GatewayError)
        -> IdempotencyKey?
    {
        guard let value = request.headers[.idempotencyKey] else { return nil }
        guard (1...255).contains(value.count), value.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw GatewayError.invalidRequest("`Idempotency-Key` must be 1 to 255 visible ASCII characters.")
        }
        return IdempotencyKey(scope: context.apiKey?.id ?? "-", key: value)
    }
}
