import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// `/v1/verifications/{id}`: check, challenge, resend, cancel, get and vendor actions.
extension VerificationsController {
    /// The path's `{id}` and a reader of the JSON body, which may hold only `allowing` (and may be empty
    /// unless `bodyRequired`).
    private static func idAndBody(
        _ request: Request, _ context: GatewayRequestContext, allowing fields: Set<String>, bodyRequired: Bool = false
    ) async throws -> (String, JSONObjectReader) {
        var request = request
        let id = try context.parameters.require("id")
        let reader = try JSONObjectReader(
            data: try await body(of: &request, context: context), allowEmpty: !bodyRequired)
        try reader.rejectUnknown(allowing: fields)
        return (id, reader)
    }

    @Sendable func check(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (id, reader) = try await Self.idAndBody(request, context, allowing: ["code", "client_context"])
        let code = try reader.string("code", required: true, maxLength: 64) ?? ""
        if code.contains(where: { !$0.isASCII || $0.isWhitespace }) {
            throw GatewayError.invalidRequest("`code` must be the code the user received, without spaces.")
        }
        let outcome = try await service.check(
            CheckVerification(verificationID: id, code: code, clientContext: try Self.parseClientContext(reader)),
            owner: Self.owner(context), apiKeyID: context.apiKey?.id ?? context.clientSecret?.apiKeyID)
        return JSONResponse.response(render(outcome))
    }

    @Sendable func challenge(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (id, reader) = try await Self.idAndBody(
            request, context, allowing: ["answer", "client_context"], bodyRequired: true)
        guard let answer = try reader.object("answer") else {
            throw GatewayError.invalidRequest("`answer` is required: the app's answer to the challenge.")
        }
        let record = try await service.submitChallenge(
            id: id,
            answer: ChallengeAnswer(answer: .object(answer.fields), clientContext: try Self.parseClientContext(reader)),
            owner: Self.owner(context))
        return JSONResponse.response(Self.render(record, now: service.clock.now))
    }

    @Sendable func resend(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (id, reader) = try await Self.idAndBody(
            request, context, allowing: ["channel", "app_verification", "client_context", "provider"])
        let proof = try Self.parseProof(reader)
        let provider = try reader.string("provider", maxLength: 40)
        let channel = try reader.string("channel", maxLength: 32).map { (name) throws(GatewayError) in
            try Self.parseChannel(name, field: "channel")
        }
        let record = try await service.resend(
            id: id,
            request: ResendRequest(
                channel: channel, appVerification: proof, clientContext: try Self.parseClientContext(reader),
                provider: provider),
            owner: Self.owner(context))
        return JSONResponse.response(Self.render(record, now: service.clock.now))
    }

    @Sendable func cancel(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (id, _) = try await Self.idAndBody(request, context, allowing: [])
        let record = try await service.cancel(id: id, owner: Self.owner(context))
        return JSONResponse.response(Self.render(record, now: service.clock.now))
    }

    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let id = try context.parameters.require("id")
        var refresh = false
        if let value = request.uri.queryParameters.get("refresh") {
            guard value == "true" || value == "false" else {
                throw GatewayError.invalidRequest("`refresh` takes `true` or `false`.")
            }
            refresh = value == "true"
        }
        var body = render(try await service.read(id: id, refresh: refresh, owner: Self.owner(context)))
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
        guard let actions = provider.actionProviding, let action = actions.actions.first(where: { $0.name == name })
        else {
            throw GatewayError(.notFound, "Provider `\(providerID)` has no action named `\(name)`.")
        }
        let reader = try JSONObjectReader(data: try await Self.body(of: &request, context: context), allowEmpty: true)
        let input = try reader.object("input")?.fields ?? [:]
        try reader.rejectUnknown(allowing: ["input"])
        guard input.count <= 32 else { throw GatewayError.invalidRequest("`input` has more than 32 entries.") }
        for key in action.requiredInputs where input[key] == nil {
            throw GatewayError.invalidRequest("`input.\(key)` is required by action `\(name)`.")
        }
        let output = try await actions.perform(action: name, input: input)
        return JSONResponse.response([
            "provider": .string(providerID), "action": .string(name),
            "output": .object(output),
        ])
    }
}
