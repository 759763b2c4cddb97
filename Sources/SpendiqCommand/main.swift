import CommandLineSupport

// NB: help is ArgumentParser's to print, with exit status 0; every error, a usage mistake or a
// failed command, is one line on stderr and a non-zero exit status, never a stack trace.
await runParsed(SpendiqCommand.self, arguments: NegativeAmounts.asValues(Array(CommandLine.arguments.dropFirst())), hints: ErrorHints())
