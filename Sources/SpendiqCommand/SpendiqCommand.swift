import CommandLineSupport
import ArgumentParser

/// `spendiq`: SpendiQ on the command line.
struct SpendiqCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spendiq",
        abstract: "SpendiQ: what you spend and receive, a 30-day dashboard, offers near you. Works offline.",
        subcommands: [
            Register.self, Verify.self, Login.self, Logout.self, Whoami.self,
            Accounts.self, Add.self, Receipt.self, Transfer.self, List.self, Edit.self, Delete.self,
            DashboardCommand.self, Offers.self, Locate.self, InsightsCommand.self, LimitsCommand.self,
            Export.self, Import.self, Invitations.self, Accept.self, Decline.self, Status.self, Sync.self, Failures.self, Settle.self, Retry.self, Discard.self,
        ]
    )

    // NB: declared here too so that `spendiq --server URL login` works as well as
    // `spendiq login --server URL`; the subcommand's own group gets this parsed value.
    @OptionGroup var global: GlobalOptions
}
