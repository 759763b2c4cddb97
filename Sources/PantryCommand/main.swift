import ArgumentParser
import Foundation

// NB: parse errors get ArgumentParser's usage message; errors from running a command get one
// line on stderr and exit status 1, never a stack trace.
let command: any ParsableCommand
do {
    command = try PantryCommand.parseAsRoot()
} catch {
    PantryCommand.exit(withError: error)
}
do {
    if let asyncCommand = command as? any AsyncParsableCommand {
        try await runAsync(asyncCommand)
    } else {
        var syncCommand = command
        try syncCommand.run()
    }
} catch let exit as ExitCode {
    Foundation.exit(exit.rawValue)
} catch let clean as CleanExit {
    PantryCommand.exit(withError: clean)
} catch {
    Terminal.fail(error)
}

/// Runs a command's `async` body (on an existential, `run()` would pick the synchronous requirement).
func runAsync<Command: AsyncParsableCommand>(_ command: Command) async throws {
    var command = command
    try await command.run()
}
