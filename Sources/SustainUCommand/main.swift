import CommandLineSupport
import EventualKit
import Foundation
import Recycling

// NB: help is ArgumentParser's to print, with exit status 0; every error, a usage mistake or a
// failed command, is one line on stderr and a non-zero exit status, never a stack trace.
await runParsed(SustainUCommand.self, arguments: Array(CommandLine.arguments.dropFirst()), isUsageMistake: { error in
    if case .idTooShort = error as? OutboxError { return true }
    return (error as? RecyclingError)?.isMalformedArgument ?? false
})
