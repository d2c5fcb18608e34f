import Foundation
import HTTPTypes

/// A provider made from its context alone, as every plugin's is.
public protocol ContextProvider: VerificationProvider {
    init(context: ProviderContext) throws(ConfigurationError)
}

extension GatewayPlugin {
    /// A plugin whose providers are `P`, each made from its context.
    public init<P: ContextProvider>(
        id: String, displayName: String, settings: [SettingSpec], provider: P.Type,
        makeEmulator: @escaping @Sendable (EmulatorContext) -> any VendorEmulator,
        sandboxSettings: @escaping @Sendable (_ baseURL: URL) -> [String: String]
    ) {
        self.init(
            id: id, displayName: displayName, settings: settings,
            makeProvider: { (context) throws(ConfigurationError) -> any VerificationProvider in try P(context: context)
            },
            makeEmulator: makeEmulator, sandboxSettings: sandboxSettings)
    }
}
