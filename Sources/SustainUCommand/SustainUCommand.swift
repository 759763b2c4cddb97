import ArgumentParser
import CommandLineSupport

/// `sustainu`: SustainU on the command line.
struct SustainUCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sustainu",
        abstract: "SustainU: find the nearest recycling point, learn which bin your trash goes in, earn points. Works offline.",
        usage: "sustainu [--server URL] [--data-dir DIR] [--no-analytics] <subcommand>",
        subcommands: accountCommands + [
            Points.self, PointDetails.self, Visit.self, ScanItem.self, Scans.self,
            ScoreCommand.self, Leaderboard.self, Tips.self, Reminders.self,
        ] + outboxCommands
    )

    // NB: declared here too so that `sustainu --server URL login` works as well as
    // `sustainu login --server URL`; the subcommand's own group gets this parsed value.
    @OptionGroup var global: GlobalOptions
}
