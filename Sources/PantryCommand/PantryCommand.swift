import CommandLineSupport
import ArgumentParser

/// `pantry`: Tracking My Pantry on the command line.
struct PantryCommand: AsyncParsableCommand {
    typealias SettleOptions = PantrySettleOptions
    static let configuration = CommandConfiguration(
        commandName: "pantry",
        abstract: "Tracking My Pantry: your groceries, their expiry, and a shared barcode knowledge base. Works offline.",
        subcommands: accountCommands + [
            Scan.self, Vote.self, Add.self, ShowAttachment<PantryCommand>.self, List.self, Search.self, Show.self, Consume.self, Remove.self, Restore.self, Delete.self, Edit.self,
            RemindersCommand.self, Places.self, HouseholdCommand.self,
        ] + outboxCommands
    )

    // NB: declared here too so that `pantry --server URL login` works as well as
    // `pantry login --server URL`; the subcommand's own group gets this parsed value.
    @OptionGroup var global: GlobalOptions
}
