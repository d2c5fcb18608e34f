import Foundation

/// A provider's settings as its configuration reads them: the specs checked once, typed reads of the values,
/// and the plugin's own cross-setting problems added to the same list, so `check-config` and startup report
/// every problem at once.
public struct PluginSettings: Sendable {
    /// The provider the settings belong to; every problem names it.
    public let providerID: String
    private let values: [String: String]
    /// Every problem found so far, each naming the provider.
    public private(set) var problems: [String]

    /// Reads `values`, checking each of `specs`.
    public init(_ values: [String: String], specs: [SettingSpec], providerID: String) {
        self.providerID = providerID
        self.values = values
        self.problems = SettingSpec.problems(in: values, specs: specs, providerID: providerID)
    }

    /// The value of `name`; `nil` when absent or empty.
    public subscript(_ name: String) -> String? {
        values[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The value of `name` as a whole number, when it is one.
    public func int(_ name: String) -> Int? { self[name].flatMap { Int($0) } }

    /// The value of `name` as one of `T`'s cases, or `fallback` when absent (a bad value is already a problem).
    public func choice<T: RawRepresentable>(_ name: String, default fallback: T) -> T where T.RawValue == String {
        self[name].flatMap(T.init(rawValue:)) ?? fallback
    }

    /// The URL of `name`, or `fallback`, without trailing slashes, so paths append to it as they are.
    public func url(_ name: String, default fallback: String) -> String {
        var url = self[name] ?? fallback
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// Adds `problem` (prefixed with the provider) when `condition` is false.
    public mutating func require(_ condition: Bool, _ problem: @autoclosure () -> String) {
        if !condition { problems.append("provider \(providerID): \(problem())") }
    }

    /// Throws every problem at once, if there is any.
    public func validate() throws(ConfigurationError) {
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
    }
}
