import CommandLineSupport
import EventualKit
import Foundation
import Spending

// NB: help is ArgumentParser's to print, with exit status 0; every error, a usage mistake or a
// failed command, is one line on stderr and a non-zero exit status, never a stack trace.
await runParsed(SpendiqCommand.self, arguments: Array(CommandLine.arguments.dropFirst()), isUsageMistake: { error in
    (error as? SpendingError)?.isMalformedArgument ?? (error as? OutboxError)?.isMalformedArgument ?? false
})
