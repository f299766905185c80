import ArgumentParser

/// The `countersign` command: the service and its operator tools.
@main
struct Countersign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "countersign",
        abstract: "Self-hosted proof-of-delivery service: signatures, proofs, audit trail.",
        subcommands: [ServeCommand.self, MigrateCommand.self, KeysCommand.self, VerifyCommand.self, ExportCommand.self, RenderCommand.self, EraseCommand.self]
    )
}
