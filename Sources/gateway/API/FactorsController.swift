import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// `/v1/factors`: the device factors (Twilio Verify Push) that providers adopting ``FactorProvider`` keep for
/// a user identity. The backend fetches the access token the app's SDK enrols with, lists factors and
/// removes them; enrolment itself and the device's proofs go from the SDK to the vendor.
struct FactorsController: Sendable {
    let service: VerificationService

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("factors/access-tokens", use: accessToken)
        group.get("factors", use: list)
        group.get("factors/{factor_id}", use: fetch)
        group.delete("factors/{factor_id}", use: delete)
    }

    @Sendable func accessToken(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let reader = try JSONObjectReader(data: try await VerificationsController.body(of: &request, context: context))
        try reader.rejectUnknown(allowing: ["identity", "provider", "friendly_name", "ttl_seconds"])
        let identity = try Self.identity(try reader.string("identity", required: true, maxLength: 64))
        let providers = try factorProviders(named: try reader.string("provider", maxLength: 40))
        guard providers.count == 1, let provider = providers.first else {
            throw GatewayError.invalidRequest(
                "Several providers keep device factors: name one in `provider` (\(providers.map(\.id).joined(separator: ", ")))."
            )
        }
        let token = try await provider.createFactorAccessToken(
            identity: identity, friendlyName: try reader.string("friendly_name", maxLength: 64),
            ttlSeconds: try reader.integer("ttl_seconds", in: 60...300))
        var body: [String: JSONValue] = [:]
        body["provider"] = .string(provider.id)
        body["identity"] = .string(token.identity)
        body["token"] = .string(token.token)
        body["factor_type"] = .string(token.factorType)
        body["expires_at"] = .string(VerificationsController.timestamp(token.expiresAt))
        body["details"] = .object(token.details)
        return JSONResponse.response(.object(body), status: .created)
    }

    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (identity, providers) = try query(request)
        var factors: [JSONValue] = []
        for provider in providers {
            factors += try await provider.listFactors(identity: identity).map { Self.render($0, provider: provider.id) }
        }
        var body: [String: JSONValue] = [:]
        body["identity"] = .string(identity)
        body["factors"] = .array(factors)
        return JSONResponse.response(.object(body))
    }

    @Sendable func fetch(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let id = try Self.factorID(context)
        let (identity, providers) = try query(request)
        for provider in providers {
            if let factor = try await Self.fetch(id, identity: identity, from: provider) {
                return JSONResponse.response(Self.render(factor, provider: provider.id))
            }
        }
        throw GatewayError(.notFound, "No factor with this id for this identity.")
    }

    @Sendable func delete(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let id = try Self.factorID(context)
        let (identity, providers) = try query(request)
        for provider in providers {
            if try await Self.delete(id, identity: identity, from: provider) { return Response(status: .noContent) }
        }
        throw GatewayError(.notFound, "No factor with this id for this identity.")
    }

    /// The factor, or `nil` when this provider does not know it.
    static func fetch(_ id: String, identity: String, from provider: any FactorProvider) async throws(GatewayError)
        -> DeviceFactor?
    {
        do {
            return try await provider.fetchFactor(identity: identity, id: id)
        } catch {
            if error.code == .notFound { return nil }
            throw error
        }
    }

    /// Whether this provider knew the factor and removed it.
    static func delete(_ id: String, identity: String, from provider: any FactorProvider) async throws(GatewayError)
        -> Bool
    {
        do {
            try await provider.deleteFactor(identity: identity, id: id)
            return true
        } catch {
            if error.code == .notFound { return false }
            throw error
        }
    }

    // MARK: helpers

    /// The providers that keep device factors: the named one, or every one.
    func factorProviders(named name: String?) throws(GatewayError) -> [any FactorProvider] {
        if let name {
            guard let provider = service.registry.provider(name) else {
                throw GatewayError(.notFound, "No provider named `\(name)` is configured.")
            }
            guard let factors = provider as? any FactorProvider else {
                throw GatewayError(.notFound, "Provider `\(name)` keeps no device factors.")
            }
            return [factors]
        }
        let all = service.registry.providerIDs.compactMap { service.registry.provider($0) as? any FactorProvider }
        guard !all.isEmpty else { throw GatewayError(.notFound, "No configured provider keeps device factors.") }
        return all
    }

    /// `identity` (required) and `provider` (optional) from the query.
    private func query(_ request: Request) throws(GatewayError) -> (String, [any FactorProvider]) {
        let parameters = request.uri.queryParameters
        let identity = try Self.identity(parameters.get("identity"))
        return (identity, try factorProviders(named: parameters.get("provider")))
    }

    static func identity(_ value: String?) throws(GatewayError) -> String {
        guard let value, (8...64).contains(value.count),
            value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        else { throw GatewayError.invalidRequest("`identity` must be 8 to 64 letters, digits and dashes.") }
        return value
    }

    static func factorID(_ context: GatewayRequestContext) throws -> String {
        let id = try context.parameters.require("factor_id")
        guard (1...64).contains(id.count), id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw GatewayError(.notFound, "No factor with this id for this identity.")
        }
        return id
    }

    static func render(_ factor: DeviceFactor, provider: String) -> JSONValue {
        var fields: [String: JSONValue] = [:]
        fields["id"] = .string(factor.id)
        fields["provider"] = .string(provider)
        fields["identity"] = .string(factor.identity)
        fields["type"] = .string(factor.type)
        fields["friendly_name"] = factor.friendlyName.map(JSONValue.string) ?? JSONValue.null
        fields["status"] = .string(factor.status.rawValue)
        fields["created_at"] = Self.timestamp(factor.createdAt)
        fields["updated_at"] = Self.timestamp(factor.updatedAt)
        fields["details"] = .object(factor.details)
        return .object(fields)
    }

    static func timestamp(_ date: Date?) -> JSONValue {
        guard let date else { return .null }
        return .string(VerificationsController.timestamp(date))
    }
}
