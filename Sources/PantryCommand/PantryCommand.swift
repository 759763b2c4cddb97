import CommandLineSupport
import ArgumentParser

/// `pantry`: Tracking My Pantry on the command line.
struct PantryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pantry",
        abstract: "Tracking My Pantry: your groceries, their expiry, and a shared barcode knowledge base. Works offline.",
        subcommands: [
            Register.self, Verify.self, Login.self, Logout.self, Whoami.self,
            Scan.self, Vote.self, Add.self, Photo.self, List.self, Search.self, Show.self, Consume.self, Remove.self, Edit.self,
            RemindersCommand.self, Places.self, HouseholdCommand.self, Status.self, Sync.self, Retry.self, Discard.self, Failures.self, Settle.self,
        ]
    )

    // NB: declared here too so that `pantry --server URL login` works as well as
    // `pantry login --server URL`; the subcommand's own group gets this parsed value.
    @OptionGroup var global: GlobalOptions
}
