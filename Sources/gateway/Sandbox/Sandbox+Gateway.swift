import Foundation
import GatewayCore
import Logging

extension Sandbox {
    /// The gateway's sandbox: every plugin's emulator with its state under `<data-dir>/sandbox`, and the outbox,
    /// journaled there too, so a pending code can be read again after a restart. Emulators call back through
    /// `callbacks` to `<baseURL>/callbacks`, signed for `<public_base_url>/callbacks` when one is configured.
    static func forGateway(
        _ options: GatewayOptions, _ configuration: GatewayConfiguration, _ baseURL: String,
        _ callbacks: any HTTPTransport
    ) -> Sandbox {
        let logger = options.logger
        let directory = options.dataDirectory.appendingPathComponent("sandbox", isDirectory: true)
        let journal = OutboxJournal(
            file: directory.appendingPathComponent("outbox.jsonl"), capacity: 1000, logger: logger)
        let outbox = SandboxOutbox(
            capacity: journal.capacity,
            onSend: { message in
                journal.append(message)
                logger.notice(
                    "sandbox message sent",
                    metadata: [
                        "provider.id": "\(message.provider)", "channel": "\(message.channel)",
                        "to": "\(PhoneNumber.mask(message.to))", "kind": "\(message.kind.rawValue)",
                        "code": "\(message.code ?? "-")",
                    ])
            },
            onDrop: { message in
                logger.notice(
                    "sandbox message dropped (delivery_rate)",
                    metadata: ["provider.id": "\(message.provider)", "to": "\(PhoneNumber.mask(message.to))"])
            })
        outbox.restore(journal.load())
        journal.replace(with: outbox.all)
        return Sandbox(
            plugins: options.plugins,
            context: EmulatorContext(clock: options.clock, outbox: outbox, logger: logger),
            stateDirectory: directory,
            journal: journal,
            callbackBaseURL: URL(string: baseURL)?.appending(path: "callbacks"),
            publicCallbackBaseURL: configuration.publicBaseURL?.appending(path: "callbacks"),
            callbackTransport: callbacks,
            logger: logger)
    }

    /// One provider per plugin, pointed at its emulator (fixed public test credentials, printed at startup).
    static func providers(_ options: GatewayOptions, baseURL: String) throws(ConfigurationError)
        -> [ProviderConfiguration]
    {
        guard let base = URL(string: baseURL) else {
            throw ConfigurationError(problems: ["--host \(options.host) does not make a valid URL (\(baseURL))"])
        }
        return options.plugins.map { plugin in
            ProviderConfiguration(
                id: plugin.id, plugin: plugin.id,
                settings: plugin.sandboxSettings(base.appending(path: Sandbox.prefix(plugin.id).dropFirst())))
        }
    }

    /// The sandbox's API key in clear: `GATEWAY_SANDBOX_API_KEY`, else a new one (printed at startup).
    static func apiKey(_ environment: [String: String]) -> String {
        environment["GATEWAY_SANDBOX_API_KEY"].flatMap { $0.isEmpty ? nil : $0 } ?? APIKeyring.generateSandboxSecret()
    }
}
