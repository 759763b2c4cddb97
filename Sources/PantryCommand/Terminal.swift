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

    /// Prints `error` as one line on stderr and exits 1.
    static func fail(_ error: any Error) -> Never {
        Self.error("pantry: " + message(error))
        exit(1)
    }

    static func message(_ error: any Error) -> String {
        let text: String
        switch error {
        case let error as DatabaseError: text = "The local database failed: \(error.message ?? "\(error.resultCode)")"
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
        return readLine(strippingNewline: true) ?? ""
    }

    /// The first line of standard input (for `--password-stdin`).
    static func readPasswordFromStdin() throws -> String {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError("No password on standard input") }
        return line
    }

    /// Asks a question on the terminal and returns the answer.
    static func ask(_ question: String) -> String? {
        FileHandle.standardError.write(Data(question.utf8))
        return readLine(strippingNewline: true)
    }
}

/// A mistake in how a command was used, said in one line.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
