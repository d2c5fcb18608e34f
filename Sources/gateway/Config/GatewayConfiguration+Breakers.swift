import Foundation
import GatewayCore

/// ```yaml
/// breakers: {consecutive_failures: 5, failure_rate: 0.5, window_seconds: 60, min_requests: 10,
///            cooldown_seconds: 30, max_cooldown_seconds: 600}
/// test_numbers: {"+15005550006": "424242"}
/// prices: {twilio: {default: 0.05, GB: 0.04}, firebase: {default: 0.01}}
/// ```
extension GatewayConfiguration {
    mutating func readBreakersAndPrices(_ top: ConfigMap) {
        if let fields = top.map("breakers") {
            fields.rejectUnknown([
                "consecutive_failures", "failure_rate", "window_seconds", "min_requests", "cooldown_seconds",
                "max_cooldown_seconds",
            ])
            if let value = fields.number("consecutive_failures", in: 1...1000) {
                breakers.consecutiveFailures = Int(value)
            }
            if let value = fields.number("failure_rate", in: 0.01...1) { breakers.failureRate = value }
            if let value = fields.number("window_seconds", in: 1...86_400) { breakers.window = value }
            if let value = fields.number("min_requests", in: 1...100_000) { breakers.minimumRequests = Int(value) }
            if let value = fields.number("cooldown_seconds", in: 1...86_400) { breakers.cooldown = value }
            if let value = fields.number("max_cooldown_seconds", in: 1...86_400) { breakers.maximumCooldown = value }
            if breakers.maximumCooldown < breakers.cooldown {
                fields.problem(
                    "breakers.max_cooldown_seconds must not be less than cooldown_seconds",
                    at: fields.has("max_cooldown_seconds") ? "max_cooldown_seconds" : "cooldown_seconds")
            }
        }

        if let entries = top.map("test_numbers", message: "`test_numbers` must be a mapping of E.164 number to code") {
            for member in entries.node.members ?? [] {
                let number = member.key
                guard let parsed = try? PhoneNumber(parsing: number), parsed.e164 == number else {
                    top.log.problem(
                        "test_numbers: `\(number)` must be a phone number in E.164 (`+15005550006`)",
                        at: member.keyPosition)
                    continue
                }
                guard let code = member.value.string, (4...10).contains(code.count), code.allSatisfy(\.isASCII),
                    code.allSatisfy(\.isNumber)
                else {
                    top.log.problem(
                        "test_numbers: the code for \(number) must be a quoted string of 4 to 10 digits",
                        at: member.value.position)
                    continue
                }
                policy.testNumbers[number] = code
            }
        }

        if let byProvider = top.map("prices", message: "`prices` must be a mapping of provider to prices") {
            for member in byProvider.node.members ?? [] {
                let provider = member.key
                let value = ConfigValue(node: member.value, name: "prices.\(provider)", log: top.log)
                guard
                    let byCountry = value.map(
                        message: "prices.\(provider) must be a mapping of country (or `default`) to price")
                else { continue }
                for entry in byCountry.node.members ?? [] {
                    let country = entry.key
                    guard let amount = entry.value.number, amount >= 0 else {
                        top.log.problem(
                            "prices.\(provider).\(country) must be a number not below 0", at: entry.value.position)
                        continue
                    }
                    if country != "default" && PhoneRegion.named(country) == nil {
                        top.log.problem("prices.\(provider): `\(country)` is not a region code", at: entry.keyPosition)
                        continue
                    }
                    prices.set(amount, provider: provider, country: country == "default" ? nil : country.uppercased())
                }
            }
        }
    }
}
