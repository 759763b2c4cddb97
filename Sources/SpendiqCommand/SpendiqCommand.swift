import CommandLineSupport
import ArgumentParser

/// `spendiq`: SpendiQ on the command line.
struct SpendiqCommand: AsyncParsableCommand {
    typealias SettleOptions = SpendiqSettleOptions
    static let configuration = CommandConfiguration(
        commandName: "spendiq",
        abstract: "SpendiQ: what you spend and receive, a 30-day dashboard, offers near you. Works offline.",
        subcommands: accountCommands + [
            Accounts.self, Add.self, ShowAttachment<SpendiqCommand>.self, Transfer.self, List.self, Edit.self, Delete.self,
            DashboardCommand.self, Offers.self, Locate.self, InsightsCommand.self, LimitsCommand.self,
            Export.self, Import.self,
        ] + invitationCommands + outboxCommands
    )

    // NB: declared here too so that `spendiq --server URL login` works as well as
    // `spendiq login --server URL`; the subcommand's own group gets this parsed value.
    @OptionGroup var global: GlobalOptions
}
