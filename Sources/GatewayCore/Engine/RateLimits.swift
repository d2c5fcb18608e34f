import Foundation

/// One limit: at most `limit` hits per fixed window of `window` seconds.
public struct RateLimit: Sendable, Equatable {
    /// Hits allowed per window.
    public var limit: Int
    /// The window's length, in seconds; windows are aligned to multiples of it since 1970 (``rateWindow(at:window:)``).
    public var window: TimeInterval

    /// A limit of `limit` hits per `window` seconds.
    public init(limit: Int, window: TimeInterval) {
        self.limit = limit
        self.window = window
    }
}

/// The gateway's own rate limits (docs/design.md §9), each with its own window; `nil` turns one off. Counters
/// live in the store, so they hold across restarts (and across instances sharing a store). Test numbers
/// are exempt.
public struct RateLimits: Sendable, Equatable {
    /// Starts per destination (E.164, email or identity).
    public var startsPerDestination: RateLimit?
    /// Starts per API key.
    public var startsPerAPIKey: RateLimit?
    /// Starts per client IP (the connection's, or a trusted proxy header's).
    public var startsPerIP: RateLimit?
    /// Starts per destination country.
    public var startsPerCountry: RateLimit?
    /// Starts per number prefix: the first ``prefixDigits`` digits of the E.164 number.
    public var startsPerPrefix: RateLimit?
    /// How many digits after the `+` make a number's prefix for ``startsPerPrefix`` (6 by default).
    public var prefixDigits: Int
    /// Checks per API key (checks per verification are bounded by the attempt limit).
    public var checksPerAPIKey: RateLimit?
    /// Requests made with a client secret (an app's steps of one verification: read, check, challenge,
    /// resend, cancel) per client IP, on top of the verification's own attempt and send limits.
    public var clientSecretRequestsPerIP: RateLimit?

    /// Limits with every one off unless given.
    public init(
        startsPerDestination: RateLimit? = nil, startsPerAPIKey: RateLimit? = nil, startsPerIP: RateLimit? = nil,
        startsPerCountry: RateLimit? = nil, startsPerPrefix: RateLimit? = nil, prefixDigits: Int = 6,
        checksPerAPIKey: RateLimit? = nil, clientSecretRequestsPerIP: RateLimit? = nil
    ) {
        self.startsPerDestination = startsPerDestination
        self.startsPerAPIKey = startsPerAPIKey
        self.startsPerIP = startsPerIP
        self.startsPerCountry = startsPerCountry
        self.startsPerPrefix = startsPerPrefix
        self.prefixDigits = prefixDigits
        self.checksPerAPIKey = checksPerAPIKey
        self.clientSecretRequestsPerIP = clientSecretRequestsPerIP
    }
}

/// What a rate-limit counter answered.
public enum RateDecision: Sendable, Equatable {
    case allowed
    /// Refused; the window ends in this many seconds.
    case refused(retryAfter: Int)
}

extension VerificationService {
    /// Counts a start against every limit that applies to it; the first limit that is full refuses it with
    /// `rate_limited` and `Retry-After`.
    func countStart(
        _ request: StartVerification, apiKeyID: String?, clientIP: String?, keyLimit: RateLimit? = nil
    ) async throws(GatewayError) {
        let limits = policy.rateLimits
        var counters: [(String, RateLimit, String)] = []
        if let keyLimit, let apiKeyID {
            counters.append(("start:own-key:" + apiKeyID, keyLimit, "API key's own limit"))
        }
        if let limit = limits.startsPerDestination {
            counters.append(("start:to:" + request.destination.value, limit, "destination"))
        }
        if let limit = limits.startsPerAPIKey, let apiKeyID {
            counters.append(("start:key:" + apiKeyID, limit, "API key"))
        }
        if let limit = limits.startsPerIP, let clientIP {
            counters.append(("start:ip:" + clientIP, limit, "IP address"))
        }
        if let number = request.destination.phoneNumber {
            if let limit = limits.startsPerCountry {
                counters.append(("start:country:" + number.policyRegion, limit, "country"))
            }
            if let limit = limits.startsPerPrefix {
                let prefix = String(number.e164.prefix(1 + limits.prefixDigits))
                counters.append(("start:prefix:" + prefix, limit, "number prefix"))
            }
        }
        for (key, limit, name) in counters {
            try await count(key, limit: limit, name: name, operation: "starts")
        }
    }

    /// Counts a check against the per-key limit.
    func countCheck(apiKeyID: String?) async throws(GatewayError) {
        guard let limit = policy.rateLimits.checksPerAPIKey, let apiKeyID else { return }
        try await count("check:key:" + apiKeyID, limit: limit, name: "API key", operation: "checks")
    }

    /// Counts a request made with a client secret against the per-IP limit of such requests.
    public func countClientSecretRequest(clientIP: String?) async throws(GatewayError) {
        guard let limit = policy.rateLimits.clientSecretRequestsPerIP, let clientIP else { return }
        try await count(
            "secret:ip:" + clientIP, limit: limit, name: "IP address", operation: "client-secret requests")
    }

    private func count(_ key: String, limit: RateLimit, name: String, operation: String) async throws(GatewayError) {
        switch try await store.hit(key, limit: limit.limit, window: limit.window, at: clock.now) {
        case .allowed:
            return
        case .refused(let retryAfter):
            logger.notice("rate limit reached", metadata: ["limit": "\(operation) per \(name)"])
            metrics.rateLimited(operation: operation, limit: name)
            await countRefusal?("rate_limit:\(operation) per \(name)", clock.now)
            throw GatewayError(
                .rateLimited, "Too many \(operation) for this \(name); retry after \(retryAfter) seconds.",
                retryAfter: retryAfter)
        }
    }
}

/// The fixed window a hit at `now` falls in: its start, and the seconds left in it.
public func rateWindow(at now: Date, window: TimeInterval) -> (start: Int64, retryAfter: Int) {
    let seconds = now.timeIntervalSince1970
    let start = (seconds / window).rounded(.down) * window
    return (Int64(start), max(1, Int((start + window - seconds).rounded(.up))))
}

/// Where verifications may go (docs/design.md §9): an allow-list (`nil`: every country) and a deny-list of ISO
/// 3166 regions, globally in the policy and per API key.
public struct CountryPermissions: Sendable, Equatable {
    /// The only regions verifications may go to; `nil` allows every region not denied.
    public var allow: Set<String>?
    /// Regions verifications may never go to; a denial wins over the allow-list.
    public var deny: Set<String>

    /// Permissions that allow every region unless told.
    public init(allow: Set<String>? = nil, deny: Set<String> = []) {
        self.allow = allow
        self.deny = deny
    }

    /// Whether a verification may go to `region` (ISO 3166): not denied, and allowed when there is an allow-list.
    public func permits(_ region: String) -> Bool {
        !deny.contains(region) && allow.map { $0.contains(region) } != false
    }
}
