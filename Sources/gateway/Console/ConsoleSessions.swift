import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import Synchronization

/// A signed-in operator console: which API key signed in (by the SHA-256 of its secret, so a revoked or
/// removed key ends its sessions at once) and until when. The session's own secret is in the browser's
/// cookie only; the store keeps its SHA-256 as the row's id.
struct ConsoleSession: Sendable, Equatable {
    /// SHA-256 of the cookie's secret, hex.
    var id: String
    /// SHA-256 of the API key's secret, hex: the key is looked up again on every request.
    var keyHash: String
    var createdAt: Date
    var expiresAt: Date
}

/// Console sessions kept in the store, so every instance on one PostgreSQL (or one SQLite file) knows them.
protocol ConsoleSessionStore: Sendable {
    func insertConsoleSession(_ session: ConsoleSession) async throws(GatewayError)
    /// The session with this id, unless it expired by `at`.
    func consoleSession(id: String, at: Date) async throws(GatewayError) -> ConsoleSession?
    /// Ends a session; `false` when there was none.
    func deleteConsoleSession(id: String) async throws(GatewayError) -> Bool
    /// Removes sessions that expired before `before`; how many.
    @discardableResult
    func deleteExpiredConsoleSessions(before: Date) async throws(GatewayError) -> Int
}

/// Sessions in this process only: for a store that keeps none (the in-memory store of tests).
final class InProcessConsoleSessions: ConsoleSessionStore {
    private let sessions = Mutex<[String: ConsoleSession]>([:])

    func insertConsoleSession(_ session: ConsoleSession) async throws(GatewayError) {
        sessions.withLock { $0[session.id] = session }
    }

    func consoleSession(id: String, at: Date) async throws(GatewayError) -> ConsoleSession? {
        sessions.withLock { $0[id] }.flatMap { $0.expiresAt > at ? $0 : nil }
    }

    func deleteConsoleSession(id: String) async throws(GatewayError) -> Bool {
        sessions.withLock { $0.removeValue(forKey: id) } != nil
    }

    func deleteExpiredConsoleSessions(before: Date) async throws(GatewayError) -> Int {
        sessions.withLock { all in
            let expired = all.filter { $0.value.expiresAt <= before }.map(\.key)
            for id in expired { all[id] = nil }
            return expired.count
        }
    }
}

/// Signing in and out of the console, and telling a request's session from its cookie.
///
/// The cookie carries 32 random bytes (hex); the store keeps their SHA-256. The CSRF token is
/// HMAC-SHA256(cookie secret, "console csrf"): the page reads it from `GET /console/session` (which another
/// site cannot read) and sends it as `X-CSRF-Token` with every request that changes something. Nothing about
/// it is stored, and it dies with the session.
struct ConsoleSessions: Sendable {
    static let cookieName = "gateway_console"
    static let csrfHeader = "X-CSRF-Token"
    /// How long a session lasts from sign-in; it is not extended by use.
    static let lifetime: TimeInterval = 8 * 3600

    let store: any ConsoleSessionStore
    let keyring: APIKeyring
    let keyStore: (any APIKeyStore)?
    let clock: any WallClock
    /// Whether the gateway serves HTTPS: the cookie is then `Secure`.
    let secureCookie: Bool

    /// A signed-in request: its key and the CSRF token it must send to change anything.
    struct Resolved: Sendable {
        var key: APIKey
        var session: ConsoleSession
        var csrfToken: String
    }

    /// The key that `secret` names, if any.
    func key(secret: String) async throws(GatewayError) -> APIKey? {
        if let key = keyring.key(forSecret: secret) { return key }
        return try await keyStore?.apiKey(hash: APIKeyring.hash(secret))
    }

    /// The key whose secret hashes to `hash`.
    func key(hash: String) async throws(GatewayError) -> APIKey? {
        if let key = keyring.key(forHash: hash) { return key }
        return try await keyStore?.apiKey(hash: hash)
    }

    /// Signs in with an API key secret: a `read` or `admin` key gets a new session; anything else is refused.
    func signIn(secret: String) async throws(GatewayError) -> (cookieSecret: String, resolved: Resolved) {
        guard let key = try await key(secret: secret) else {
            throw GatewayError(.unauthorized, "Missing or invalid API key.")
        }
        guard Self.mayUseConsole(key) else {
            throw GatewayError(.forbidden, "The console needs a key with the `admin` or `read` scope.")
        }
        let now = clock.now
        try await store.deleteExpiredConsoleSessions(before: now)
        let cookieSecret = Self.newSecret()
        let session = ConsoleSession(
            id: Self.sessionID(cookieSecret), keyHash: APIKeyring.hash(secret), createdAt: now,
            expiresAt: now.addingTimeInterval(Self.lifetime))
        try await store.insertConsoleSession(session)
        return (cookieSecret, Resolved(key: key, session: session, csrfToken: Self.csrfToken(cookieSecret)))
    }

    /// The session a request's cookie names, with its key; nil when there is none, it expired, or its key is
    /// gone, revoked or no longer `read` or `admin`.
    func resolve(cookieSecret: String) async throws(GatewayError) -> Resolved? {
        guard Self.isWellFormed(cookieSecret),
            let session = try await store.consoleSession(id: Self.sessionID(cookieSecret), at: clock.now),
            let key = try await key(hash: session.keyHash), Self.mayUseConsole(key)
        else { return nil }
        return Resolved(key: key, session: session, csrfToken: Self.csrfToken(cookieSecret))
    }

    func signOut(_ resolved: Resolved) async throws(GatewayError) {
        _ = try await store.deleteConsoleSession(id: resolved.session.id)
    }

    /// Refuses a state-changing request whose `X-CSRF-Token` is not the session's.
    static func checkCSRF(_ request: Request, _ resolved: Resolved) throws(GatewayError) {
        guard let sent = request.headers[csrfField], ConstantTime.equals(sent, resolved.csrfToken) else {
            throw GatewayError(
                .forbidden, "A console request that changes something needs the session's `\(csrfHeader)` header.")
        }
    }

    static let csrfField = HTTPField.Name(csrfHeader)!

    static func mayUseConsole(_ key: APIKey) -> Bool {
        key.scopes.contains(.admin) || key.scopes.contains(.read)
    }

    static func sessionID(_ cookieSecret: String) -> String { APIKeyring.hash(cookieSecret) }

    static func csrfToken(_ cookieSecret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data("console csrf".utf8), using: SymmetricKey(data: Data(cookieSecret.utf8)))
        return Hex.lowercase(mac)
    }

    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    static func isWellFormed(_ cookieSecret: String) -> Bool {
        cookieSecret.utf8.count == 64
            && cookieSecret.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The `Set-Cookie` value that carries a new session.
    func setCookie(_ cookieSecret: String) -> String {
        "\(Self.cookieName)=\(cookieSecret); Path=/; Max-Age=\(Int(Self.lifetime)); HttpOnly; SameSite=Strict"
            + (secureCookie ? "; Secure" : "")
    }

    /// The `Set-Cookie` value that removes the cookie.
    func clearCookie() -> String {
        "\(Self.cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (secureCookie ? "; Secure" : "")
    }

    /// The console cookie's value among a request's `Cookie` headers.
    static func cookieSecret(_ headers: [String]) -> String? {
        for header in headers {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }
}
