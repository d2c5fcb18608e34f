import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// HTTP Basic as Twilio's clients send it, mapped onto the gateway's API keys: the user name is the
/// configured account SID (`AC…`) or one of the configured API key SIDs (`SK…`), the password a gateway API
/// key's secret with the `verify` scope (or `admin`; a `read` key may only `GET`). Anything else is Twilio's
/// 401 with 20003.
struct TwilioCompatAuthMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let settings: TwilioCompatSettings
    let keyring: APIKeyring
    var store: (any APIKeyStore)? = nil

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let (user, secret) = Self.credentials(request.headers[.authorization]),
            user == settings.accountSID || settings.apiKeySIDs.contains(user)
        else { throw Self.refused() }
        var found = keyring.key(forSecret: secret)
        if found == nil, let store { found = try await store.apiKey(hash: APIKeyring.hash(secret)) }
        guard let key = found else { throw Self.refused() }
        let readOnly = request.method == .get && key.scopes.contains(.read)
        guard key.scopes.contains(.verify) || key.scopes.contains(.admin) || readOnly else {
            throw TwilioCompatError(
                status: 403, code: 20403, message: "This API key lacks the `verify` scope",
                error: GatewayError(.forbidden, "This API key lacks the `verify` scope."))
        }
        var context = context
        context.apiKey = key
        context.logger[metadataKey: "api_key.id"] = .string(key.id)
        return try await next(request, context)
    }

    /// The user name and password of `Authorization: Basic …`, or nil when the header is not that. Read by
    /// bytes: the scheme in any case, then spaces, the token (spaces or tabs after it ignored) as `Data(base64Encoded:)`
    /// takes it, split at its first colon, each side UTF-8 and not empty.
    static func credentials(_ header: String?) -> (user: String, password: String)? {
        guard let header, header.utf8.count <= 1024 else { return nil }
        let bytes = Array(header.utf8)
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = 0
        while start < bytes.count, isBlank(bytes[start]) { start += 1 }
        let scheme = Array("basic".utf8)
        guard bytes.count > start + scheme.count, bytes[start + scheme.count] == UInt8(ascii: " ") else { return nil }
        for (offset, letter) in scheme.enumerated() where bytes[start + offset] | 0x20 != letter { return nil }
        start += scheme.count
        var end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        guard let data = Data(base64Encoded: String(decoding: bytes[start..<end], as: UTF8.self)),
            let colon = data.firstIndex(of: UInt8(ascii: ":")),
            let user = String(data: data[..<colon], encoding: .utf8),
            let password = String(data: data[(colon + 1)...], encoding: .utf8)
        else { return nil }
        guard !user.isEmpty, !password.isEmpty else { return nil }
        return (user, password)
    }

    static func refused() -> TwilioCompatError {
        TwilioCompatError(
            status: 401, code: 20003, message: "Authenticate",
            error: GatewayError(
                .unauthorized,
                "Send the configured account SID (or API key SID) and a gateway API key secret as HTTP Basic."))
    }
}
