import ArgumentParser
import CommandLineSupport
import EventualKit
import Foundation
import Spending

let arguments = Array(CommandLine.arguments.dropFirst())

// NB: `help bogus` would print the main help with status 0, as if the subcommand existed.
if arguments.first == "help", arguments.count > 1, !arguments[1].hasPrefix("-"),
   !SpendiqCommand.configuration.subcommands.contains(where: { $0._commandName == arguments[1] }) {
    Terminal.error("spendiq: No command '\(arguments[1].prefix(40))': spendiq --help lists them")
    exit(ExitCode.validationFailure.rawValue)
}

// NB: help is ArgumentParser's to print, with exit status 0; every error, a usage mistake or a
// failed command, is one line on stderr and a non-zero exit status, never a stack trace.
await runParsed(SpendiqCommand.self, arguments: NegativeAmounts.asValues(arguments), isUsageMistake: { error in
    (error as? SpendingError)?.isMalformedArgument ?? (error as? OutboxError)?.isMalformedArgument ?? false
})
