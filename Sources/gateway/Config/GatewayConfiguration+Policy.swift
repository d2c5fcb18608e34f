import Foundation
import GatewayCore
import HTTPTypes

/// ```yaml
/// policy: {code_validity_seconds: 600, max_attempts: 5, max_sends: 5, start_deadline_seconds: 30,
///          check_lease_seconds: 30, silent_auth_timeout_seconds: 60, allow_unknown_numbers: [GB]}
/// countries: {allow: [GB, FR], deny: [KP]}
/// rate_limits:
///   starts_per_destination: {limit: 5, window_seconds: 3600}
///   starts_per_prefix: {limit: 100, window_seconds: 600, digits: 7}
///   trusted_proxy_header: X-Forwarded-For
/// pumping_guard: {prefix_digits: 6, window_seconds: 3600, min_starts: 20, conversion_floor: 0.2,
///                 cool_down_seconds: 3600}          # or `pumping_guard: true`
/// metrics: {access: loopback_or_admin}              # admin, open
/// ```
extension GatewayConfiguration {
    mutating func readPolicy(_ top: ConfigMap) {
        if let fields = top.map("policy") {
            fields.rejectUnknown([
                "code_validity_seconds", "max_attempts", "max_sends", "start_deadline_seconds", "allow_unknown_numbers",
                "check_lease_seconds", "silent_auth_timeout_seconds",
            ])
            if let seconds = fields.int("code_validity_seconds", in: 60...86_400) {
                policy.codeValidity = TimeInterval(seconds)
            }
            if let attempts = fields.int("max_attempts", in: 1...20) { policy.maxAttempts = attempts }
            if let sends = fields.int("max_sends", in: 1...20) { policy.maxSends = sends }
            if let seconds = fields.int("start_deadline_seconds", in: 1...300) {
                policy.startDeadline = .seconds(seconds)
            }
            // How long a check holds its verification while at the vendor; the checks of a verification
            // whose instance died mid-check wait this long. Above the 10-second vendor timeout.
            if let seconds = fields.int("check_lease_seconds", in: 15...300) {
                policy.checkLease = TimeInterval(seconds)
            }
            // How long a silent step the engine falls back from may stay open (docs/network-signals.md).
            if let seconds = fields.int("silent_auth_timeout_seconds", in: 5...600) {
                policy.silentAuthTimeout = TimeInterval(seconds)
            }
            if let value = fields.value("allow_unknown_numbers"),
                let regions = regionList(value, "policy.allow_unknown_numbers")
            {
                policy.allowUnknownNumbers = regions
            }
        }
        if let section = top.map("countries", message: "`countries` must be a mapping with `allow` and/or `deny` lists")
        {
            section.rejectUnknown(["allow", "deny"])
            policy.countries = CountryPermissions(
                allow: section.value("allow").flatMap { regionList($0, "countries.allow") },
                deny: section.value("deny").flatMap { regionList($0, "countries.deny") } ?? [])
        }
        if let section = top.map("rate_limits") { readRateLimits(section) }
        if let value = top.value("pumping_guard") { policy.pumpingGuard = Self.readPumpingGuard(value) }
        if let fields = top.map("metrics", message: "`metrics` must be a mapping such as {access: loopback_or_admin}") {
            fields.rejectUnknown(["access"])
            metricsAccess = fields.value("access")?.choice(MetricsAccess.self) ?? metricsAccess
        }
    }

    /// `rate_limits:` each limit `{limit: N, window_seconds: S}` (`starts_per_prefix` also takes `digits`),
    /// and `trusted_proxy_header`.
    private mutating func readRateLimits(_ section: ConfigMap) {
        let names = [
            "starts_per_destination", "starts_per_api_key", "starts_per_ip", "starts_per_country",
            "starts_per_prefix", "checks_per_api_key", "client_secret_requests_per_ip",
        ]
        section.rejectUnknown(Set(names + ["trusted_proxy_header"]))
        func limit(_ name: String) -> RateLimit? {
            guard let value = section.value(name) else { return nil }
            let message =
                "rate_limits.\(name) must be {limit: a whole number of at least 1, window_seconds: 1 to 2678400}"
            guard let fields = value.map(message: message) else { return nil }
            fields.rejectUnknown(
                name == "starts_per_prefix" ? ["limit", "window_seconds", "digits"] : ["limit", "window_seconds"])
            if !fields.has("limit") || !fields.has("window_seconds") { fields.problem(message) }
            let limit = fields.int("limit", atLeast: 1, message: message)
            let window = fields.int("window_seconds", in: 1...86_400 * 31, message: message)
            guard let limit, let window else { return nil }
            return RateLimit(limit: limit, window: TimeInterval(window))
        }
        var limits = RateLimits(
            startsPerDestination: limit("starts_per_destination"), startsPerAPIKey: limit("starts_per_api_key"),
            startsPerIP: limit("starts_per_ip"), startsPerCountry: limit("starts_per_country"),
            startsPerPrefix: limit("starts_per_prefix"), checksPerAPIKey: limit("checks_per_api_key"),
            clientSecretRequestsPerIP: limit("client_secret_requests_per_ip"))
        if let digits = section.value("starts_per_prefix")?.node.member("digits") {
            let value = ConfigValue(node: digits.value, name: "rate_limits.starts_per_prefix.digits", log: section.log)
            if let count = value.int(in: 2...12) { limits.prefixDigits = count }
        }
        policy.rateLimits = limits
        if let value = section.value("trusted_proxy_header") {
            trustedProxyHeader = value.string(message: "rate_limits.trusted_proxy_header must be an HTTP header name")
                .flatMap {
                    name in
                    guard HTTPField.Name(name) != nil else {
                        value.problem("rate_limits.trusted_proxy_header must be an HTTP header name")
                        return nil
                    }
                    return name
                }
        }
    }

    /// `pumping_guard: {prefix_digits: 6, window_seconds: 3600, min_starts: 20, conversion_floor: 0.2,
    /// cool_down_seconds: 3600}` (each optional, with these defaults), or `pumping_guard: true`.
    private static func readPumpingGuard(_ value: ConfigValue) -> PumpingGuard? {
        if case .bool(let on) = value.node.value { return on ? PumpingGuard() : nil }
        guard let fields = value.map(message: "`pumping_guard` must be true, false or a mapping", path: "pumping_guard")
        else { return nil }
        fields.rejectUnknown(["prefix_digits", "window_seconds", "cool_down_seconds", "min_starts", "conversion_floor"])
        var settings = PumpingGuard()
        if let n = fields.int("prefix_digits", in: 2...12) { settings.prefixDigits = n }
        if let n = fields.int("window_seconds", in: 60...86_400 * 7) { settings.window = TimeInterval(n) }
        if let n = fields.int("cool_down_seconds", in: 60...86_400 * 7) { settings.coolDown = TimeInterval(n) }
        if let n = fields.int("min_starts", atLeast: 1) { settings.minStarts = n }
        if let floor = fields.number(
            "conversion_floor", in: 0...1, message: "pumping_guard.conversion_floor must be a number from 0 to 1")
        {
            settings.conversionFloor = floor
        }
        return settings
    }
}
