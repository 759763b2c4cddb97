import ArgumentParser

/// `eventual-server`: runs the server (the default), imports data, or manages roles.
@main
struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eventual-server",
        abstract: "The Eventual server: barcode knowledge base and sync API, on SQLite or PostgreSQL.",
        subcommands: [Serve.self, ImportProducts.self, UserCommand.self, ImportPoints.self, ImportPackaging.self, ImportShops.self],
        defaultSubcommand: Serve.self
    )
}
