import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the client presents as `Authorization: Bearer …`: the server's API key (a back end), or a
/// verification's client secret (an app, for that one verification's own steps).
public enum Credential: Sendable, Hashable {
    /// The server's API key (`Authorization` for a back end).
    case apiKey(String)
    /// A verification's client secret (`vcs_…`), good only for that verification's app-side steps.
    case clientSecret(String)

    var bearer: String {
        switch self {
        case .apiKey(let value), .clientSecret(let value): value
        }
    }
}

/// The gateway's verification API: the client generated from its OpenAPI document (by swift-openapi-generator's
/// build plugin), over URLSession, with typed answers and typed errors.
///
/// Every method returns the gateway's answer or throws a ``GatewayAPIError`` (the gateway's error shape, for every
/// error status) or a ``GatewayClientError`` (no answer, or one that is not the gateway's).
public struct VerificationClient: Sendable {
    /// The gateway's address, as given.
    public let baseURL: URL
    /// What every call but the sandbox's presents.
    public let credential: Credential
    private let client: Client

    /// - Parameters:
    ///   - baseURL: the gateway, for example `https://verify.example.com` (paths start with `/v1/`).
    ///   - credential: the API key, or the client secret of the verification this client acts on.
    ///   - session: the URLSession to send with (an app may pass one with its own configuration).
    public init(baseURL: URL, credential: Credential, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.credential = credential
        self.client = Client(
            serverURL: baseURL, transport: URLSessionTransport(configuration: .init(session: session)),
            middlewares: [GatewayMiddleware(credential: credential)])
    }

    /// `POST /v1/verifications`: starts a verification. A retry with the same `idempotencyKey` answers the first
    /// start's verification and never sends twice.
    public func start(_ request: StartRequest, idempotencyKey: String? = nil) async throws -> Verification {
        let output = try await call {
            try await client.startVerification(
                headers: .init(idempotencyKey: idempotencyKey), body: .json(try request.generated()))
        }
        guard case .created(let created) = output else { throw unexpected(output) }
        return try Verification(startAnswer: try created.body.json)
    }

    /// `POST /v1/verifications/{id}/check`: checks a code (for a flash call, the caller number). An approval
    /// carries `token`; a wrong code throws `incorrect_code` with `attemptsRemaining`.
    public func check(_ id: String, code: String, clientContext: ClientContext? = nil) async throws -> Verification {
        let output = try await call {
            try await client.checkVerification(
                path: .init(id: id), body: .json(.init(code: code, clientContext: clientContext?.generated())))
        }
        guard case .ok(let ok) = output else { throw unexpected(output) }
        return try Verification(try ok.body.json)
    }

    /// `POST /v1/verifications/{id}/challenge`: answers a `solve_challenge`. A wrong answer throws
    /// `app_verification_failed` whose `nextAction` is a fresh challenge.
    public func answerChallenge(
        _ id: String, answer: JSONValue, clientContext: ClientContext? = nil
    ) async throws -> Verification {
        let answer = try answer.converted(to: OpenAPIObjectContainer.self)
        let output = try await call {
            try await client.answerChallenge(
                path: .init(id: id), body: .json(.init(answer: answer, clientContext: clientContext?.generated())))
        }
        guard case .ok(let ok) = output else { throw unexpected(output) }
        return try Verification(try ok.body.json)
    }

    /// `POST /v1/verifications/{id}/resend`: sends again, on `channel` or (nil) the vendor's next step.
    public func resend(
        _ id: String, channel: Channel? = nil, appVerification: AppVerification? = nil,
        clientContext: ClientContext? = nil
    ) async throws -> Verification {
        let body = Components.Schemas.ResendRequest(
            channel: try channel.map { try Generated.value($0.rawValue) },
            appVerification: try appVerification?.generated(), clientContext: clientContext?.generated())
        let output = try await call { try await client.resendVerification(path: .init(id: id), body: .json(body)) }
        guard case .ok(let ok) = output else { throw unexpected(output) }
        return try Verification(try ok.body.json)
    }

    /// `POST /v1/verifications/{id}/cancel`.
    public func cancel(_ id: String) async throws -> Verification {
        let output = try await call { try await client.cancelVerification(path: .init(id: id)) }
        guard case .ok(let ok) = output else { throw unexpected(output) }
        return try Verification(try ok.body.json)
    }

    /// `GET /v1/verifications/{id}`; `refresh: true` asks the vendor first (never spends an attempt): how a push
    /// or a silent authentication is polled. The first read after an approval by the vendor carries `token`.
    public func status(_ id: String, refresh: Bool = false) async throws -> Verification {
        let output = try await call {
            try await client.getVerification(path: .init(id: id), query: .init(refresh: refresh ? true : nil))
        }
        guard case .ok(let ok) = output else { throw unexpected(output) }
        return try Verification(try ok.body.json)
    }

    /// `POST /v1/factors/access-tokens` (a back-end call, with the API key): the token a device's push SDK enrols
    /// a factor with.
    public func factorAccessToken(
        identity: String, provider: String? = nil, friendlyName: String? = nil, ttlSeconds: Int? = nil
    ) async throws -> FactorAccessToken {
        let body = Components.Schemas.FactorAccessTokenRequest(
            identity: identity, provider: provider, friendlyName: friendlyName, ttlSeconds: ttlSeconds)
        let output = try await call { try await client.createFactorAccessToken(body: .json(body)) }
        guard case .created(let created) = output else { throw unexpected(output) }
        let token = try created.body.json
        return FactorAccessToken(
            provider: token.provider, identity: token.identity, token: token.token, factorType: token.factorType,
            expiresAt: token.expiresAt,
            details: try token.details.additionalProperties.mapValues { try JSONValue.converting($0) })
    }

    /// `GET /sandbox/outbox` (a sandbox gateway only): the messages its emulators "sent", oldest first; what the
    /// user's phone would show, for an app's tests.
    public func sandboxOutbox(to: String? = nil) async throws -> [SandboxMessage] {
        let output = try await call { try await client.sandboxOutbox(query: .init(to: to)) }
        guard case .ok(let ok) = output else { throw unexpected(output) }
        return try ok.body.json.messages.map {
            SandboxMessage(
                provider: $0.provider, kind: $0.kind.rawValue, channel: $0.channel, to: $0.to, code: $0.code,
                text: $0.text, language: $0.language, sentAt: $0.sentAt)
        }
    }

    /// Runs a generated call, turning the runtime's wrapping of errors back into the client's own.
    private func call<Output>(_ body: () async throws -> Output) async throws -> Output {
        do {
            return try await body()
        } catch let error as ClientError {
            switch error.underlyingError {
            case let api as GatewayAPIError: throw api
            case let client as GatewayClientError: throw client
            case is CancellationError: throw CancellationError()
            case let decoding as DecodingError: throw GatewayClientError.undecodable(String(describing: decoding))
            default: throw GatewayClientError.transport(underlying: String(describing: error.underlyingError))
            }
        }
    }

    /// An answer the middleware let through that is not the operation's success (it cannot be: every error
    /// status is thrown there), kept as a typed error rather than a crash.
    private func unexpected(_ output: some Sendable) -> GatewayClientError {
        .unexpectedResponse(status: 0, body: String(describing: output))
    }
}

/// Authenticates every call but the sandbox's, and turns every error status into a typed error before the
/// generated code sees it: one place for the gateway's one error shape.
struct GatewayMiddleware: ClientMiddleware {
    let credential: Credential

    /// The error shape, read leniently: a code this client does not know still decodes.
    struct ErrorBody: Decodable {
        struct Inner: Decodable {
            struct Provider: Decodable {
                var id: String
                var code: String?
                var status: Int?
            }
            var code: String
            var message: String
            var retryable: Bool
            var requestID: String?
            var attemptsRemaining: Int?
            var retryAfter: Int?
            var nextAction: Components.Schemas.NextAction?
            var provider: Provider?

            enum CodingKeys: String, CodingKey {
                case code, message, retryable, provider
                case requestID = "request_id"
                case attemptsRemaining = "attempts_remaining"
                case retryAfter = "retry_after"
                case nextAction = "next_action"
            }
        }
        var error: Inner
    }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if operationID != "sandboxOutbox" { request.headerFields[.authorization] = "Bearer \(credential.bearer)" }
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.code >= 400 else { return (response, responseBody) }
        var bytes = Data()
        if let responseBody { bytes = try await Data(collecting: responseBody, upTo: 4 << 20) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let shape = try? decoder.decode(ErrorBody.self, from: bytes) else {
            throw GatewayClientError.unexpectedResponse(
                status: response.status.code, body: String(decoding: bytes.prefix(1024), as: UTF8.self))
        }
        let error = shape.error
        throw GatewayAPIError(
            httpStatus: response.status.code, code: ErrorCode(rawValue: error.code), message: error.message,
            retryable: error.retryable, requestID: error.requestID, attemptsRemaining: error.attemptsRemaining,
            retryAfter: error.retryAfter ?? response.headerFields[.retryAfter].flatMap { Int($0) },
            nextAction: try error.nextAction.map { try NextAction($0) },
            vendor: error.provider.map { VendorError(id: $0.id, code: $0.code, status: $0.status) })
    }
}
