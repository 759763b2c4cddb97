import EventualAPI

/// Text a person gave the command (arguments, answers, a piped password), refused when it holds
/// a control character: a NUL byte or an escape sequence is never something a person meant, and
/// it would reach the database, the server or someone's terminal.
public enum CommandLineText {
    /// The arguments, unchanged, or an error naming the first one that holds a control character.
    // NB: a line break and a tab pass here (a description may have them); the library refuses them
    // in single-line fields such as a name.
    public static func checked(_ arguments: [String]) throws(CLIError) -> [String] {
        for (index, argument) in arguments.enumerated() {
            guard let character = ControlCharacters.first(in: argument, allowing: ["\n", "\t"]) else { continue }
            let previous = index > 0 ? arguments[index - 1] : ""
            let name = previous.hasPrefix("-") && !argument.hasPrefix("-") ? "The value of \(previous)" : "Argument \(index + 1)"
            throw CLIError("\(name) contains \(character): type it without one")
        }
        return arguments
    }

    /// A line read from standard input, or an error when it holds a control character.
    public static func checkedLine(_ line: String, what: String) throws(CLIError) -> String {
        if let character = ControlCharacters.first(in: line) {
            throw CLIError("The \(what) contains \(character): type it without one")
        }
        return line
    }
}
