import GatewayCamara
import GatewayCore
import GatewayFirebase
import GatewayIDaaS
import GatewaySinch
import GatewayTelnyx
import GatewayTwilio
import GatewayVonage

/// The one list of installed plugins. Adding a vendor is adding its target and one line here.
/// The order is the default routing order when the configuration names none.
enum InstalledPlugins {
    /// Other names the configuration accepts for a plugin (`plugin: nexmo` is the `vonage` plugin).
    static let aliases: [String: String] = Dictionary(
        uniqueKeysWithValues: VonagePlugin.aliases.map { ($0, VonagePlugin.plugin.id) })

    static let all: [GatewayPlugin] = [
        TwilioPlugin.plugin, FirebasePlugin.plugin, IDaaSPlugin.plugin, SinchPlugin.plugin, VonagePlugin.plugin,
        TelnyxPlugin.plugin, TwilioMessagingPlugin.plugin, VonageSMSPlugin.plugin, TelnyxMessagingPlugin.plugin,
        SinchSMSPlugin.plugin, CamaraPlugin.plugin,
    ]
}
