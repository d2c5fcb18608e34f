@preconcurrency import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// A client secret: what a start made with an API key hands the server, for the app to take part in that one
/// verification without an API key (docs/architecture.md §10). It authorizes only the app-side steps of its
/// verification while it is pending: read it, check a code, answer its challenge, resend, cancel.
///
/// `vcs_`, the verification id's 32 hex digits, `_`, and 64 hex digits of an HMAC-SHA256 of the id under a key
/// derived from the token signing key. So a replayed start (`Idempotency-Key`) answers the same secret without
/// the gateway keeping it anywhere: the verification record keeps only its SHA-256 (``hash(_:)``), which is
/// what a request is checked against, and the idempotency key's stored answer has no secret in it.
struct ClientSecrets: Sendable {
    static let prefix = "vcs_"
    /// HMAC-SHA256 keyed once: each secret copies this state and hashes only the id, where keying again
    /// would hash the key's two padded blocks for every start.
    private let keyed: HMAC<SHA256>

    init(signingKey: P256.Signing.PrivateKey) {
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: signingKey.rawRepresentation),
            info: Data("verification-gateway client secret v1".utf8), outputByteCount: 32)
        keyed = HMAC<SHA256>(key: key)
    }

    /// The secret of a verification (`vf_` and 32 hex digits).
    func secret(for verificationID: String) -> String {
        var mac = keyed
        var id = verificationID
        id.withUTF8 { mac.update(data: UnsafeRawBufferPointer($0)) }
        return Self.prefix + verificationID.dropFirst(3) + "_" + Hex.lowercase(mac.finalize())
    }

    /// What the record keeps: the secret's SHA-256, as hex.
    static func hash(_ secret: String) -> String {
        var secret = secret
        return secret.withUTF8 { Hex.lowercase(SHA256.hash(data: UnsafeRawBufferPointer($0))) }
    }

    /// The verification a presented secret names, when it has the secret's form; nil otherwise.
    static func verificationID(named secret: String) -> String? {
        let parts = secret.dropFirst(prefix.count).split(separator: "_", omittingEmptySubsequences: false)
        guard secret.hasPrefix(prefix), parts.count == 2, parts[0].count == 32, parts[1].count == 64,
            parts.allSatisfy({ $0.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) } })
        else { return nil }
        return "vf_" + parts[0]
    }

    /// Equal in time that depends only on the lengths, not on where the strings first differ.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

/// What a client secret authorized: one verification, and the API key that started it (the checks it makes
/// count against that key's limit, as the key's own would).
struct ClientSecretGrant: Sendable {
    let verificationID: String
    let apiKeyID: String?
}

extension ClientSecrets {
    /// The app-side steps: `GET /v1/verifications/{id}`, and `POST` to its `check`, `challenge`, `resend` and
    /// `cancel`. Returns the id in the path, or nil for any other route.
    static func appSideVerificationID(_ request: Request) -> String? {
        let segments = request.uri.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard segments.count >= 3, segments.prefix(2).elementsEqual(["v1", "verifications"]) else { return nil }
        let id = String(segments[segments.startIndex + 2])
        switch (request.method, segments.count) {
        case (.get, 3): return id
        case (.post, 4) where ["check", "challenge", "resend", "cancel"].contains(segments.last ?? ""): return id
        default: return nil
        }
    }

    /// Checks a presented client secret for this request: refused with `403 forbidden` on a route that is not
    /// an app-side step of the secret's own verification (a start, a list, another verification, the admin
    /// API, a timeline), and with `401 unauthorized` when it is no verification's secret or its verification
    /// has ended (approved, denied, canceled, expired: a leaked secret of a finished verification is useless).
    static func authorize(
        _ secret: String, request: Request, scope: APIKey.Scope, service: VerificationService?
    ) async throws -> ClientSecretGrant {
        let onlyAppSide =
            "A client secret authorizes only its own verification's app-side steps: GET /v1/verifications/{id} and "
            + "POST …/check, …/challenge, …/resend and …/cancel; everything else needs an API key."
        guard scope == .verify, let service, let pathID = appSideVerificationID(request),
            request.uri.queryParameters.get("include") == nil
        else {
            throw APIError(GatewayError(.forbidden, onlyAppSide))
        }
        guard let named = verificationID(named: secret) else {
            throw APIError(GatewayError(.unauthorized, "Missing or invalid API key or client secret."))
        }
        guard named == pathID else {
            throw APIError(GatewayError(.forbidden, "This client secret belongs to another verification."))
        }
        guard let record = try await service.store.record(id: pathID), let stored = record.clientSecretHash,
            constantTimeEqual(hash(secret), stored)
        else {
            throw APIError(GatewayError(.unauthorized, "Missing or invalid API key or client secret."))
        }
        guard record.effectiveStatus(at: service.clock.now) == .pending else {
            throw APIError(
                GatewayError(
                    .unauthorized,
                    "This client secret's verification has ended, and its secret with it; the server reads the "
                        + "outcome with its API key."))
        }
        return ClientSecretGrant(verificationID: record.id, apiKeyID: record.apiKeyID)
    }
}
