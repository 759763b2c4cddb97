/// Arguments and typed lines, refused when they hold a control character: a NUL byte or an
/// escape sequence is never something a person meant.
enum CommandLineText {
    /// The arguments, unchanged, or an error naming the first one that holds a control character.
    static func checked(_ arguments: [String]) throws(CLIError) -> [String] {
        for (index, argument) in arguments.enumerated() where hasControlCharacter(argument, allowing: ["\n", "\t"]) {
            let previous = index > 0 ? arguments[index - 1] : ""
            let name = previous.hasPrefix("-") && !argument.hasPrefix("-") ? "The value of \(previous)" : "Argument \(index + 1)"
            throw CLIError("\(name) contains a control character (such as a NUL byte): type it without one")
        }
        return arguments
    }

    static func checkedLine(_ line: String, what: String) throws(CLIError) -> String {
        guard !hasControlCharacter(line, allowing: []) else {
            throw CLIError("The \(what) contains a control character (such as a NUL byte): type it without one")
        }
        return line
    }

    static func hasControlCharacter(_ text: String, allowing allowed: Set<Unicode.Scalar>) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control && !allowed.contains($0) }
    }
}

/// A mistake in how a command was used, said in one line.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
