import GatewayCore
import GatewayFirebase
import GatewayIDaaS
import GatewaySinch
import GatewayTwilio

/// The one list of installed plugins. Adding a vendor is adding its target and one line here.
/// The order is the default routing order when the configuration names none.
enum InstalledPlugins {
    static let all: [GatewayPlugin] = [TwilioPlugin.plugin, FirebasePlugin.plugin, IDaaSPlugin.plugin, SinchPlugin.plugin]
}
