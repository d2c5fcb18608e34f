import GatewayCore

/// The one list of installed plugins. Adding a vendor is adding its target and one line here.
enum InstalledPlugins {
    static let all: [GatewayPlugin] = []
}
