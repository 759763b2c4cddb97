import ArgumentParser

/// `eventual-server`: runs the server (the default), or imports products into its knowledge base.
@main
struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eventual-server",
        abstract: "The Eventual server: barcode knowledge base and sync API, on SQLite or PostgreSQL.",
        subcommands: [Serve.self, ImportProducts.self],
        defaultSubcommand: Serve.self
    )
}
