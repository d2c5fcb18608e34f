import Foundation
import GatewayCore
import GatewayKitCrypto

extension IDaaSProvider {
    /// Why an ID token did not verify, as a bounded reason for errors and logs, with the result code the
    /// SDK's `verifySignWithIdToken` gives for the same failure ([BC-IOS]; ``IDaaSErrorMapping/callbackCodes``).
    struct TokenProblem: Error, Sendable, Equatable {
        var reason: String
        var sdkCode = "103"

        /// The gateway code the SDK's code maps to (`invalid_token` unless the table says otherwise).
        var code: GatewayError.Code { IDaaSErrorMapping.callback(sdkCode)?.mapsTo ?? .invalidToken }
    }

    /// Verifies an ID token (docs/vendors/idaas.md §2.7): an RS256 JWS whose key is in the tenant's JWKS (read again
    /// once when the `kid` is unknown, for key rotation), not expired (with ``IDaaSConfiguration/clockSkew``),
    /// audience = the client id, and the issuer when one is configured. Returns its claims.
    func verifyIDToken(_ token: String) async throws(GatewayError) -> Result<IDaaSWire.IDTokenClaims, TokenProblem> {
        guard let jws = JWS.parse(token), let claims = jws.claims(IDaaSWire.IDTokenClaims.self) else {
            return .failure(TokenProblem(reason: "not a JWT"))
        }
        guard jws.algorithm == "RS256" else { return .failure(TokenProblem(reason: "algorithm is not RS256")) }
        let kid = jws.header["kid"]?.stringValue
        var keys = try await signingKeys(refresh: false)
        if keys.rsaSigningKey(kid: kid) == nil { keys = try await signingKeys(refresh: true) }
        let key = keys.rsaSigningKey(kid: kid)
        if keys.keys.isEmpty { return .failure(TokenProblem(reason: "the tenant publishes no key", sdkCode: "102")) }
        guard let key, let algorithm = JWSAlgorithm.rs256(verifyingWith: key) else {
            return .failure(TokenProblem(reason: "no tenant key matches the token"))
        }
        guard jws.isSigned(by: algorithm) else {
            return .failure(TokenProblem(reason: "signature does not verify"))
        }
        let now = clock.now.timeIntervalSince1970
        guard let exp = claims.exp, now < exp + configuration.clockSkew else {
            return .failure(TokenProblem(reason: "expired", sdkCode: "106"))
        }
        guard claims.aud?.values.contains(configuration.clientID) == true else {
            return .failure(TokenProblem(reason: "audience is not this client id", sdkCode: "107"))
        }
        if let issuer = configuration.idTokenIssuer, claims.iss != issuer {
            return .failure(TokenProblem(reason: "issuer does not match"))
        }
        return .success(claims)
    }

    /// The tenant's keys, cached for ``IDaaSConfiguration/jwksTTL``. A forced read happens at most every
    /// 10 seconds, so tokens with made-up key ids cannot make the gateway hammer the JWKS.
    func signingKeys(refresh: Bool) async throws(GatewayError) -> JWKSet {
        let now = clock.now
        if let cached = cache.keys.withLock({ $0 }) {
            let age = now.timeIntervalSince(cached.fetchedAt)
            if (!refresh && age < configuration.jwksTTL) || (refresh && age < 10) { return cached.keys }
        }
        let response = try await call(.get, .jwks, device: nil)
        let set = try client.decode(JWKSet.self, from: response, operation: .jwks)
        cache.keys.withLock { $0 = (set, now) }
        return set
    }

    /// The provider tokens of a sign-in or a refresh, after the ID token verified. A token that does not
    /// verify is never handed out: `provider_error` (the vendor's answer cannot be trusted).
    func verifiedTokens(_ answer: IDaaSWire.TokenResponse, operation: VendorOperation) async throws(GatewayError)
        -> [String: JSONValue]
    {
        guard let sessionToken = answer.sessionToken, !sessionToken.isEmpty, let idToken = answer.idToken,
            !idToken.isEmpty
        else { throw client.malformed(operation, httpStatus: 200) }
        if case .failure(let problem) = try await verifyIDToken(idToken) {
            logger.warning(
                "idaas id token did not verify",
                metadata: [
                    "provider.id": "\(id)", "idaas.operation": "\(operation.name)", "reason": "\(problem.reason)",
                ])
            throw GatewayError(
                .providerError, "The ID token IDaaS returned did not verify (\(problem.reason)); nothing was approved.",
                vendor: GatewayError.VendorDetail(providerID: id, code: problem.sdkCode, httpStatus: 200))
        }
        var tokens: [String: JSONValue] = ["session_token": .string(sessionToken), "id_token": .string(idToken)]
        if let expire = answer.expire { tokens["expire"] = .number(Double(expire)) }
        if let status = answer.status { tokens["status"] = .string(status) }
        return tokens
    }
}
