import Foundation
import GatewayCore

/// ```yaml
/// risk:                                   # every route's, unless the route has its own `risk:`
///   sim_swap: {provider: camara, max_age_hours: 72, on_recent_swap: refuse}   # or step_up, flag
///   on_signal_unavailable: allow                                              # or refuse
///   cache_for: 5m                                                             # 0 turns the cache off
/// ```
/// (docs/network-signals.md)
extension GatewayConfiguration {
    /// A `risk:` section (top level or a route's); nil after logging why not. The signal's provider is added to
    /// `named`, so an unknown id is reported with the routing's.
    func readRisk(_ value: ConfigValue, label: String, named: inout [NamedProvider]) -> RiskPolicy? {
        guard let fields = value.map(message: "\(label): `risk` must be a mapping with `sim_swap`") else { return nil }
        fields.rejectUnknown(["sim_swap", "on_signal_unavailable", "cache_for"])
        var risk = RiskPolicy()
        if let unavailable = fields.value("on_signal_unavailable") {
            risk.onSignalUnavailable =
                unavailable.choice(
                    RiskPolicy.OnUnavailable.self,
                    message: "\(label): `risk.on_signal_unavailable` must be allow or refuse") ?? .allow
        }
        if let cache = fields.value("cache_for") {
            if cache.node.number == 0 {
                risk.cacheFor = 0
            } else if let seconds = Self.duration(cache.node), seconds <= 86_400 {
                risk.cacheFor = seconds
            } else {
                cache.problem("\(label): `risk.cache_for` must be a duration up to 24h, such as 5m (0: no cache)")
            }
        }
        guard
            let swap = fields.map(
                "sim_swap", message: "\(label): `risk.sim_swap` must be a mapping such as {provider: camara}")
        else {
            if !fields.has("sim_swap") { fields.problem("\(label): `risk.sim_swap` is required") }
            return nil
        }
        swap.rejectUnknown(["provider", "max_age_hours", "on_recent_swap"])
        guard
            let provider = swap.string(
                "provider", nonEmpty: true, message: "\(label): `risk.sim_swap.provider` must be a provider id")
        else {
            if !swap.has("provider") { swap.problem("\(label): `risk.sim_swap.provider` is required") }
            return nil
        }
        named.append(
            NamedProvider(place: "\(label) risk.sim_swap", id: provider, position: swap.value("provider")?.position))
        var rule = RiskPolicy.SimSwap(providerID: provider)
        // CAMARA's `maxAge`: 1 to 2400 hours.
        if let hours = swap.int(
            "max_age_hours", in: 1...2400, message: "\(label): `risk.sim_swap.max_age_hours` must be 1 to 2400")
        {
            rule.maxAgeHours = hours
        }
        if let action = swap.value("on_recent_swap") {
            rule.onRecentSwap =
                action.choice(
                    RiskPolicy.OnRecentSwap.self,
                    message: "\(label): `risk.sim_swap.on_recent_swap` must be refuse, step_up or flag") ?? .refuse
        }
        risk.simSwap = rule
        return risk
    }
}
