import ArgumentParser
import EventualKit
import Foundation
import GRDB

/// The process's terminal: whether it is one, colours only when it is, prompts, and the
/// one-line error that ends a failed command. Shared by the apps' commands.
public enum Terminal {
    public static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }
    public static var stdinIsTTY: Bool { isatty(STDIN_FILENO) == 1 }
    public static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }
    /// Whether whoever read standard output went away: the other end of a pipe closed (`| head`
    /// took what it wanted) or the terminal hung up. Asks without waiting and without writing.
    public static var stdoutReaderGone: Bool {
        var descriptor = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
        guard poll(&descriptor, 1, 0) == 1 else { return false }
        return descriptor.revents & Int16(POLLERR | POLLHUP) != 0
    }
    public static var colours: Bool { stdoutIsTTY && ProcessInfo.processInfo.environment["NO_COLOR"] == nil }

    public enum Colour: String, Sendable {
        case red = "31", yellow = "33", green = "32", blue = "34", grey = "90", dim = "2", bold = "1"
    }

    public static func paint(_ text: String, _ colour: Colour?) -> String {
        guard let colour, colours else { return text }
        return "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m"
    }

    /// A line on stderr.
    public static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Ends the command `Root` ran for `error`: help goes to stdout with status 0 (ArgumentParser's
    /// way); any other error is one line on stderr, "name: message", with status 64 for a usage
    /// mistake and 1 otherwise.
    public static func fail<Root: ParsableCommand>(_ error: any Error, root: Root.Type) -> Never {
        let name = Root.configuration.commandName ?? "command"
        let code = Root.exitCode(for: error)
        if code == .success {
            // NB: ArgumentParser wraps help to the terminal's width, but not its usage line.
            print(HelpText.fitted(Root.fullMessage(for: error), width: columns))
            exitAfterFlushingOutput(name)
            exit(0)
        }
        if code == .failure {
            // NB: what a `validate()` throws, other than a ValidationError, arrives wrapped in
            // ArgumentParser's own error type, whose description is not for people.
            let wrapped = String(reflecting: type(of: error)).hasPrefix("ArgumentParser.")
            Self.error("\(name): " + (wrapped ? Root.message(for: error).replacingOccurrences(of: "\n", with: " ") : message(error)))
            exit(code.rawValue)
        }
        // NB: a usage mistake: ArgumentParser's message, and its pointer to the command's help,
        // on one line instead of the usage block.
        let hint = Root.fullMessage(for: error).split(separator: "\n")
            .last { $0.contains("See '") }?.trimmingCharacters(in: .whitespaces)
        let text = Root.message(for: error).replacingOccurrences(of: "\n", with: " ")
        // NB: "Did you mean '--colour'?" ends its sentence already.
        let ended = text.hasSuffix(".") || text.hasSuffix("?") || text.hasSuffix("!")
        if !text.isEmpty { Self.error("\(name): " + text + (hint.map { (ended ? " " : ". ") + $0 } ?? "")) }
        exit(code.rawValue)
    }

    /// Exits 0 once what was printed is written; a failed write (a full disk, `> /dev/full`) is
    /// said in one line, status 1. With `unlessWritten`, returns instead when all was written.
    // NB: print() drops a failed write without a word: help printed to a full disk exited 0.
    // (fflush(nil): strict concurrency checking refuses to name stdio's `stdout`.)
    public static func exitAfterFlushingOutput(_ name: String, unlessWritten: Bool = false) {
        if fflush(nil) != 0 {
            // NB: a reader that stopped reading (`| head`) took what it wanted: not a failure.
            if errno == EPIPE { exit(0) }
            let reason = errno == ENOSPC ? "the disk is full" : String(cString: strerror(errno))
            Self.error("\(name): Cannot write to standard output: \(reason)")
            exit(ExitCode.failure.rawValue)
        }
        if !unlessWritten { exit(0) }
    }

    /// An error in one short line for people. Only this project's own errors (and the system's
    /// file errors) are said in their own words: any other error's description may hold a request,
    /// its body, a password, a token or a build path, so it is never printed.
    /// The running command's words for an app's error (its `CommandHints`) come first.
    public static func message(_ error: any Error) -> String {
        if let hinted = RunningCommand.hints?.message(for: error) { return oneLine(hinted) }
        let text: String
        switch error {
        case let error where DeviceStorageFailure.isFull(error): text = DeviceStorageFailure.fullAtWrite
        case let error as DatabaseError: text = "The local database failed: \(error.message ?? "\(error.resultCode)")"
        case let error as CocoaError: text = FileProblem(error).description
        // NB: checked before CustomStringConvertible, whose description of an NSError is "Error Domain=…".
        case let error where type(of: error) is NSError.Type: text = (error as NSError).localizedDescription
        case is DecodingError: text = "Some saved or received data could not be read"
        // NB: the running app's own error type speaks to people too, whatever module it is in (an app in Examples/).
        case let described as any CustomStringConvertible where ownsType(of: described) || RunningCommand.hints?.owns(error) == true:
            text = described.description
        default: text = "An unexpected error happened: try again, and report it if it keeps happening"
        }
        return oneLine(text)
    }

    /// The modules whose errors speak to people: this project's. Another library's error (a
    /// generated client's, a transport's) is said by the app's engine first, never printed as is.
    public static let modulesWithPersonFacingErrors: Set<String> = [
        "CommandLineSupport", "EventualKit", "EventualAPI", "Pantry", "Recycling", "Spending", "BarcodeImages",
        "pantry", "sustainu", "spendiq", "eventual_server",
    ]

    private static func ownsType(of error: Any) -> Bool {
        let name = String(reflecting: type(of: error))
        return modulesWithPersonFacingErrors.contains(String(name.prefix { $0 != "." }))
    }

    /// Text on one line, no longer than `maxMessageLength` characters (cut with "…").
    public static func oneLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        guard line.count > maxMessageLength else { return line }
        // NB: only a text past any sentence of ours (a pasted file, say) is cut, and at a word's end.
        let head = line.prefix(maxMessageLength - 1)
        return String(head.lastIndex(of: " ").map { head[..<$0] } ?? head) + "…"
    }

    /// The longest error message printed: past any this project words (what a person typed is
    /// quoted at most 40 or 80 characters long), so that a message is never cut.
    public static let maxMessageLength = 2000

    /// How many columns output may use: `COLUMNS` when set, else the terminal's width, else 80
    /// (output piped to a file or another command).
    public static var columns: Int {
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let columns = Int(text), columns > 0 {
            return max(columns, minimumColumns)
        }
        var size = winsize()
        if stdoutIsTTY, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return max(Int(size.ws_col), minimumColumns)
        }
        return 80
    }

    /// Below this, tables and prose are laid out as if the terminal were this wide.
    public static let minimumColumns = 20

    /// Prose wrapped at spaces to `width` terminal columns (a word longer than a line is cut with "…").
    public static func wrap(_ text: String, width: Int = columns) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { paragraph in
            var lines: [String] = []
            var line = ""
            for word in paragraph.split(separator: " ") {
                let word = Table.cut(String(word), to: width)
                if line.isEmpty {
                    line = word
                } else if DisplayWidth.of(line) + 1 + DisplayWidth.of(word) <= width {
                    line += " " + word
                } else {
                    lines.append(line)
                    line = word
                }
            }
            lines.append(line)
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Prints prose on stdout, wrapped to the output's width.
    public static func say(_ text: String) {
        print(wrap(text))
    }

    /// Reads a password without echoing it, from the terminal.
    public static func readPassword(prompt: String) throws -> String {
        guard stdinIsTTY else { throw CLIError("No terminal to ask for the password on: pipe it in with --password-stdin") }
        FileHandle.standardError.write(Data(prompt.utf8))
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return try CommandLineText.checkedLine(readLine(strippingNewline: true) ?? "", what: "password")
    }

    /// The first line of standard input (for `--password-stdin`).
    public static func readPasswordFromStdin() throws -> String {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError("No password on standard input") }
        return try CommandLineText.checkedLine(line, what: "password")
    }

    /// The password from standard input's first line, or asked on the terminal.
    public static func password(fromStdin: Bool) throws -> String {
        fromStdin ? try readPasswordFromStdin() : try readPassword(prompt: "Password: ")
    }

    /// Pretty, sorted JSON, as every `--json` prints it.
    public static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// Runs a check of a command's `validate()`, so that what it refuses is a usage mistake (status
/// 64 and a pointer to the command's help) rather than a failure.
public func usageCheck(_ check: () throws -> Void) throws {
    do { try check() } catch let error as ValidationError { throw error } catch { throw ValidationError(Terminal.message(error)) }
}

/// A mistake in how a command was used, said in one line.
public struct CLIError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Parses `arguments` for `Root` and runs the command, with `hints`' words for the app's errors:
/// an option may come before or after its subcommand's name. A thrown error that `hints` calls a
/// malformed argument (a date, amount or position the app's model refused) ends with status 64,
/// as ArgumentParser's own do.
public func runParsed<Root: ParsableCommand>(_ root: Root.Type, arguments: [String], hints: some CommandHints) async -> Never {
    await RunningCommand.$hints.withValue(hints) {
        await run(root, arguments: arguments, isUsageMistake: hints.isUsageMistake)
    }
    exit(0)
}

/// Parses and runs the command; any end but success exits here.
// NB: on an existential, `run()` would pick the synchronous requirement: the async body is called here.
private func run<Root: ParsableCommand>(_ root: Root.Type, arguments: [String], isUsageMistake: (any Error) -> Bool) async {
    let name = Root.configuration.commandName ?? "command"
    do {
        let checked: [String]
        do {
            checked = NegativeCoordinates.asValues(try CommandLineText.checked(arguments))
        } catch {
            // NB: a control character in an argument is a usage mistake (status 64), like an unknown option.
            throw ValidationError(error.description)
        }
        if let unknown = unknownSubcommand(in: checked, root: Root.self) {
            Terminal.error("\(name): No command '\(Terminal.oneLine(String(unknown.prefix(40))))': \(name) --help lists them")
            exit(ExitCode.validationFailure.rawValue)
        }
        let command = try OptionOrder.parse(checked, as: Root.self)
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch let error where isUsageMistake(error) {
            Terminal.error("\(name): " + Terminal.message(error))
            exit(ExitCode.validationFailure.rawValue)
        }
        Terminal.exitAfterFlushingOutput(name, unlessWritten: true)
    } catch {
        Terminal.fail(error, root: root)
    }
}

/// The subcommand `arguments` name that `Root` does not have (`bogus` in `help bogus`, `bogus
/// --help` or `bogus`), if any.
// NB: ArgumentParser would print the main help with status 0 for the first two, as if it existed.
private func unknownSubcommand(in arguments: [String], root: any ParsableCommand.Type) -> String? {
    let subcommands = root.configuration.subcommands
    guard !subcommands.isEmpty, let asked = arguments.first == "help" ? arguments.dropFirst().first : arguments.first,
          !asked.hasPrefix("-"), asked != "help" else { return nil }
    return subcommands.contains { $0._commandName == asked || $0.configuration.aliases.contains(asked) } ? nil : asked
}
