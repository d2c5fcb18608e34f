import Foundation
import OpenAPIRuntime

/// Between the generated types (`Components.Schemas`, internal) and the client's public ones: the public types
/// stay stable and idiomatic while the generated ones follow the document.
enum Generated {
    /// A generated string enum from the same raw value (the channel and status lists are the document's).
    static func value<T: RawRepresentable>(_ raw: String) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: raw) else {
            throw GatewayClientError.undecodable("\(raw) is not a \(T.self) of the API document")
        }
        return value
    }
}

extension Verification {
    init(_ payload: Components.Schemas.Verification) throws {
        let nextAction: NextAction? =
            switch payload.nextAction {
            case .NextAction(let action): try NextAction(action)
            case .case2: nil
            }
        self.init(
            id: payload.id, status: try Generated.value(payload.status.rawValue), to: payload.to,
            channel: try Generated.value(payload.channel.rawValue), provider: payload.provider, nextAction: nextAction,
            fallbackChannels: try payload.fallbackChannels.map { try Generated.value($0.rawValue) },
            statusReason: payload.statusReason, contentLanguage: payload.contentLanguage,
            expiresAt: payload.expiresAt, attemptsRemaining: payload.attemptsRemaining, sends: payload.sends,
            createdAt: payload.createdAt, updatedAt: payload.updatedAt, route: payload.route,
            testNumber: payload.testNumber ?? false, clientRef: payload.clientRef,
            metadata: payload.metadata?.additionalProperties ?? [:], risk: payload.risk?.additionalProperties ?? [:],
            token: nil, providerTokens: [:], clientSecret: nil)
    }

    /// A start's answer, whatever type the document gives it: a `Verification`, or a `Verification` with the
    /// app's `client_secret` (an `allOf` of the two). Read back as JSON, so that the client follows the document
    /// without naming the type of that answer.
    init(startAnswer: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let json = try encoder.encode(startAnswer)
        try self.init(try decoder.decode(Components.Schemas.Verification.self, from: json))
        clientSecret = try decoder.decode(ClientSecretMember.self, from: json).clientSecret
    }

    init(_ result: Components.Schemas.CheckResult) throws {
        try self.init(result.value1)
        token = result.value2.token
        providerTokens =
            try result.value2.providerTokens?.additionalProperties.mapValues { try JSONValue.converting($0) } ?? [:]
    }
}

/// The `client_secret` member of a start's answer, if any.
private struct ClientSecretMember: Decodable {
    var clientSecret: String?
    enum CodingKeys: String, CodingKey { case clientSecret = "client_secret" }
}

extension NextAction {
    init(_ action: Components.Schemas.NextAction) throws {
        switch action {
        case .case1(let payload):
            let challenge = payload.solveChallenge
            self = .solveChallenge(
                Challenge(
                    kind: challenge.kind, data: try JSONValue.converting(challenge.data),
                    expiresAt: challenge.expiresAt))
        case .case2(let payload):
            self = .interceptCall(
                CallInterception(
                    callerPattern: payload.interceptCall.callerPattern,
                    timeoutSeconds: payload.interceptCall.timeoutSeconds))
        case .case3(let payload):
            guard let url = URL(string: payload.openUrl.url) else {
                throw GatewayClientError.undecodable("open_url.url is not a URL: \(payload.openUrl.url)")
            }
            self = .openURL(URLOpening(url: url, cellularOnly: payload.openUrl.cellularOnly))
        case .case4(let payload):
            self = .awaitApproval(
                ApprovalWait(message: payload.awaitApproval.message, expiresAt: payload.awaitApproval.expiresAt))
        }
    }
}

extension StartRequest {
    func generated() throws -> Components.Schemas.StartRequest {
        var options: Components.Schemas.ChannelOptions?
        if pushPrompt != nil || pushFactorID != nil {
            options = .init(
                factorId: pushFactorID,
                prompt: pushPrompt.map { prompt in
                    .init(
                        message: prompt.message,
                        details: prompt.detailPairs.isEmpty
                            ? nil : prompt.detailPairs.map { .init(label: $0.label, value: $0.value) },
                        hiddenDetails: prompt.hiddenDetails.isEmpty
                            ? nil : .init(additionalProperties: prompt.hiddenDetails))
                })
        }
        return Components.Schemas.StartRequest(
            to: to, region: try region.map { try Generated.value($0) },
            channel: try channel.map { try Generated.value($0.rawValue) },
            fallbackChannels: fallbackChannels.isEmpty
                ? nil : try fallbackChannels.map { try Generated.value($0.rawValue) },
            locales: locales.isEmpty ? nil : locales, appVerification: try appVerification?.generated(),
            codeLength: codeLength, clientRef: clientRef,
            metadata: metadata.isEmpty ? nil : .init(additionalProperties: metadata), provider: provider,
            clientContext: clientContext?.generated(), channelOptions: options, multiFactor: multiFactor?.generated())
    }
}

extension MultiFactor {
    /// The document's `oneOf`: each case an object whose `type` is a constant.
    func generated() -> Components.Schemas.MultiFactor {
        switch self {
        case .signIn(let credential, let enrollmentID):
            .case1(
                .init(
                    _type: OpenAPIValueContainer(stringLiteral: "sign_in"), pendingCredential: credential,
                    enrollmentId: enrollmentID))
        case .enroll(let idToken, let displayName):
            .case2(
                .init(
                    _type: OpenAPIValueContainer(stringLiteral: "enroll"), idToken: idToken, displayName: displayName))
        }
    }
}

extension AppVerification {
    func generated() throws -> Components.Schemas.AppVerification {
        .init(_type: try Generated.value(kind.rawValue), token: token, secret: secret)
    }
}

extension ClientContext {
    func generated() -> Components.Schemas.ClientContext {
        .init(
            ip: ip.map { .init(value1: OpenAPIValueContainer(stringLiteral: $0)) }, userAgent: userAgent,
            deviceId: deviceID, platform: platform.flatMap { .init(rawValue: $0.rawValue) })
    }
}
