import Foundation
import GatewayCore

/// The startup lines that tell a newcomer how to reach each emulator with the vendor's own client.
enum SandboxBanner {
    static func lines(for sandbox: Sandbox, plugins: [GatewayPlugin], baseURL: String) -> [String] {
        plugins.compactMap { plugin in
            guard sandbox.mount(plugin.id) != nil, let url = URL(string: baseURL + Sandbox.prefix(plugin.id)) else {
                return nil
            }
            // Sandbox credentials are fixed, public test values: printing them is the point.
            let settings = plugin.sandboxSettings(url).sorted { $0.key < $1.key }
            return "\(plugin.id) sandbox settings: " + settings.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }
}
