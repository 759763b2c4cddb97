import ArgumentParser
import Foundation

// NB: help is ArgumentParser's to print, with exit status 0; every error, a usage mistake or a
// failed command, is one line on stderr and a non-zero exit status, never a stack trace.
do {
    let arguments: [String]
    do {
        arguments = try CommandLineText.checked(Array(CommandLine.arguments.dropFirst()))
    } catch {
        // NB: a control character in an argument is a usage mistake (status 64), like an unknown option.
        throw ValidationError(error.description)
    }
    let command = try SpendiqCommand.parseAsRoot(arguments)
    if let asyncCommand = command as? any AsyncParsableCommand {
        try await runAsync(asyncCommand)
    } else {
        var syncCommand = command
        try syncCommand.run()
    }
} catch {
    Terminal.fail(error)
}

/// Runs a command's `async` body (on an existential, `run()` would pick the synchronous requirement).
func runAsync<Command: AsyncParsableCommand>(_ command: Command) async throws {
    var command = command
    try await command.run()
}
