import Foundation

/// The kinds of setting plugins take, declared once with the check and the reason every plugin used to
/// write again: text (optionally shaped), a secret from the environment, an http(s) URL, one of a few words,
/// or a whole number in a range.
extension SettingSpec {
    /// Free text; with `check`, a value it refuses is reported with `reason` (`must be …`).
    public static func text(
        _ name: String, _ summary: String, required: Bool = true, check: (@Sendable (String) -> Bool)? = nil,
        reason: String = "is not valid"
    ) -> SettingSpec {
        var validate: (@Sendable (String) -> String?)?
        if let check { validate = { check($0) ? nil : reason } }
        return SettingSpec(name: name, summary: summary, isRequired: required, validate: validate)
    }

    /// A secret: in a configuration file it comes from the environment (`<name>_env: VARIABLE`).
    public static func secret(_ name: String, _ summary: String, required: Bool = true) -> SettingSpec {
        SettingSpec(name: name, summary: summary, isRequired: required, isSecret: true)
    }

    /// An `http` or `https` URL with a host; read it with ``PluginSettings/url(_:default:)``, which trims
    /// trailing slashes.
    public static func url(_ name: String, _ summary: String, required: Bool = false) -> SettingSpec {
        SettingSpec(
            name: name, summary: summary, isRequired: required,
            validate: { SettingSpec.isHTTPURL($0) ? nil : "must be an http or https URL" })
    }

    /// One of `values` (``must be `v2` or `v1` ``).
    public static func choice(
        _ name: String, _ summary: String, _ values: [String], required: Bool = false
    ) -> SettingSpec {
        let quoted = values.map { "`\($0)`" }
        let listed =
            quoted.count > 1
            ? quoted.dropLast().joined(separator: ", ") + " or " + quoted[quoted.count - 1] : quoted.joined()
        return SettingSpec(
            name: name, summary: summary, isRequired: required,
            validate: { values.contains($0) ? nil : "must be \(listed)" })
    }

    /// A whole number in `range` (`must be a whole number from 4 to 10`, or `reason`).
    public static func integer(
        _ name: String, _ summary: String, in range: ClosedRange<Int>, required: Bool = false, reason: String? = nil
    ) -> SettingSpec {
        let reason = reason ?? "must be a whole number from \(range.lowerBound) to \(range.upperBound)"
        return SettingSpec(
            name: name, summary: summary, isRequired: required,
            validate: { Int($0).map(range.contains) == true ? nil : reason })
    }

    /// A number of seconds in `range` (`must be 1 to 3600 seconds`).
    public static func seconds(
        _ name: String, _ summary: String, in range: ClosedRange<Int>, required: Bool = false
    ) -> SettingSpec {
        integer(
            name, summary, in: range, required: required,
            reason: "must be \(range.lowerBound) to \(range.upperBound) seconds")
    }

    /// Whether `value` is an `http` or `https` URL with a host.
    public static func isHTTPURL(_ value: String) -> Bool {
        guard let url = URL(string: value), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host(), !host.isEmpty
        else { return false }
        return true
    }

    /// Every problem of `values` against `specs`: a required setting missing, a value a spec refuses. Empty
    /// values count as absent.
    public static func problems(in values: [String: String], specs: [SettingSpec], providerID: String) -> [String] {
        var problems: [String] = []
        for spec in specs {
            guard let value = values[spec.name], !value.isEmpty else {
                if spec.isRequired { problems.append("provider \(providerID): missing setting `\(spec.name)`") }
                continue
            }
            if let reason = spec.validate?(value) {
                problems.append("provider \(providerID): setting `\(spec.name)` \(reason)")
            }
        }
        return problems
    }
}
