import ArgumentParser
import EventualKit
import Foundation
import GRDB
import Spending

/// The process's terminal: colours only on one, prompts, JSON, and the one-line error.
enum Terminal {
    static var stdinIsTTY: Bool { isatty(STDIN_FILENO) == 1 }
    static var stderrIsTTY: Bool { isatty(STDERR_FILENO) == 1 }
    static var colours: Bool { isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil }

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

    /// Ends the command for `error`: help to stdout with status 0; anything else one line on
    /// stderr, status 64 for a usage mistake and 1 otherwise.
    static func fail(_ error: any Error) -> Never {
        let code = SpendiqCommand.exitCode(for: error)
        if code == .success { SpendiqCommand.exit(withError: error) }
        if code == .failure {
            let wrapped = String(reflecting: type(of: error)).hasPrefix("ArgumentParser.")
            Self.error("spendiq: " + (wrapped ? SpendiqCommand.message(for: error).replacingOccurrences(of: "\n", with: " ") : message(error)))
            exit(code.rawValue)
        }
        let hint = SpendiqCommand.fullMessage(for: error).split(separator: "\n")
            .last { $0.contains("See '") }?.trimmingCharacters(in: .whitespaces)
        let text = SpendiqCommand.message(for: error).replacingOccurrences(of: "\n", with: " ")
        if !text.isEmpty { Self.error("spendiq: " + text + (hint.map { (text.hasSuffix(".") ? " " : ". ") + $0 } ?? "")) }
        exit(code.rawValue)
    }

    static func message(_ error: any Error) -> String {
        let text: String
        switch error {
        case let error as DatabaseError: text = "The local database failed: \(error.message ?? "\(error.resultCode)")"
        case let error where type(of: error) is NSError.Type: text = (error as NSError).localizedDescription
        case let error as any CustomStringConvertible: text = error.description
        default: text = "\(error)"
        }
        return text.replacingOccurrences(of: "\n", with: " ")
    }

    /// Reads a password without echoing it.
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

    static func password(fromStdin: Bool) throws -> String {
        if fromStdin {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else { throw CLIError("No password on standard input") }
            return try CommandLineText.checkedLine(line, what: "password")
        }
        return try readPassword(prompt: "Password: ")
    }

    /// Pretty, key-sorted JSON of `value`.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// Runs a check of a command's `validate()`, so that what it refuses is a usage mistake (status 64).
func usageCheck(_ check: () throws -> Void) throws {
    do { try check() } catch let error as ValidationError { throw error } catch { throw ValidationError(Terminal.message(error)) }
}

/// Columns aligned to their widest cell, a header, two spaces between columns.
struct Table {
    var headers: [String]
    var rows: [[String]] = []

    init(_ headers: String...) { self.headers = headers }

    mutating func add(_ cells: String...) { rows.append(cells) }

    func render() -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String], bold: Bool) -> String {
            cells.enumerated().map { index, cell in
                let padding = index == cells.count - 1 ? "" : String(repeating: " ", count: widths[index] - cell.count)
                return Terminal.paint(cell, bold ? .bold : nil) + padding
            }.joined(separator: "  ")
        }
        return ([line(headers, bold: true)] + rows.map { line($0, bold: false) }).joined(separator: "\n")
    }
}
