import ArgumentParser

/// `gateway`: one subcommand per file in this directory; `serve` when none is named.
@main
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "A multi-provider phone verification gateway.",
        subcommands: [
            Serve.self, CheckConfig.self, Experiments.self, Keys.self, Migrate.self, RetentionRun.self, TokenKey.self,
            BenchAdaptive.self,
        ],
        defaultSubcommand: Serve.self)
}
