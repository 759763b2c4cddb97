import ArgumentParser
import EventualKit
import Foundation
import GRDB
import Pantry

/// The process's terminal: whether it is one, colours only when it is, prompts, and the
/// one-line error that ends a failed command.
enum Terminal {
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }
    static var stdinIsTTY: Bool { isatty(STDIN_FILENO) == 1 }
    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }
    static var colours: Bool { stdoutIsTTY && ProcessInfo.processInfo.environment["NO_COLOR"] == nil }

    enum Colour: String {
        case red = "31", yellow = "33", green = "32", dim = "2", bold = "1"
    }

    static func paint(_ text: String, _ colour: Colour?) -> String {
        guard let colour, colours else { return text }
        return "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m"
    }

    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Ends the command for `error`: help goes to stdout with status 0 (ArgumentParser's way); any
    /// other error is one line on stderr, with status 64 for a usage mistake and 1 otherwise.
    static func fail(_ error: any Error) -> Never {
        let code = PantryCommand.exitCode(for: error)
        if code == .success { PantryCommand.exit(withError: error) }
        if code == .failure {
            // NB: what a `validate()` throws, other than a ValidationError, arrives wrapped in
            // ArgumentParser's own error type, whose description is not for people.
            let wrapped = String(reflecting: type(of: error)).hasPrefix("ArgumentParser.")
            Self.error("pantry: " + (wrapped ? PantryCommand.message(for: error).replacingOccurrences(of: "\n", with: " ") : message(error)))
            exit(code.rawValue)
        }
        // NB: a usage mistake: ArgumentParser's message, and its pointer to the command's help,
        // on one line instead of the usage block.
        let hint = PantryCommand.fullMessage(for: error).split(separator: "\n")
            .last { $0.contains("See '") }?.trimmingCharacters(in: .whitespaces)
        let text = PantryCommand.message(for: error).replacingOccurrences(of: "\n", with: " ")
        if !text.isEmpty { Self.error("pantry: " + text + (hint.map { (text.hasSuffix(".") ? " " : ". ") + $0 } ?? "")) }
        exit(code.rawValue)
    }

    static func message(_ error: any Error) -> String {
        let text: String
        switch error {
        case let error as DatabaseError: text = "The local database failed: \(error.message ?? "\(error.resultCode)")"
        case let error as CocoaError: text = FileProblem(error).description
        // NB: checked before CustomStringConvertible, whose description of an NSError is "Error Domain=…".
        case let error where type(of: error) is NSError.Type: text = (error as NSError).localizedDescription
        case let error as any CustomStringConvertible: text = error.description
        default: text = "\(error)"
        }
        return text.replacingOccurrences(of: "\n", with: " ")
    }

    /// Reads a password without echoing it, from the terminal.
    static func readPassword(prompt: String) throws -> String {
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
    static func readPasswordFromStdin() throws -> String {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError("No password on standard input") }
        return try CommandLineText.checkedLine(line, what: "password")
    }

    /// Asks a question on the terminal and returns the answer.
    static func ask(_ question: String) throws(CLIError) -> String? {
        FileHandle.standardError.write(Data(question.utf8))
        return try readLine(strippingNewline: true).map { line throws(CLIError) in try CommandLineText.checkedLine(line, what: "answer") }
    }
}

/// Runs a check of a command's `validate()`, so that what it refuses is a usage mistake (status
/// 64 and a pointer to the command's help) rather than a failure.
func usageCheck(_ check: () throws -> Void) throws {
    do { try check() } catch let error as ValidationError { throw error } catch { throw ValidationError(Terminal.message(error)) }
}

/// A mistake in how a command was used, said in one line.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
