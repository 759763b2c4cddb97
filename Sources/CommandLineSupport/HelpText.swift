/// ArgumentParser's help, fitted to the output's width.
enum HelpText {
    /// `help` with a usage line wider than `width` broken between its options, the following
    /// lines indented under the first; the rest unchanged (ArgumentParser wraps it already).
    static func fitted(_ help: String, width: Int) -> String {
        help.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.hasPrefix("USAGE: "), line.count > width else { return String(line) }
            var lines: [String] = [], current = "USAGE:"
            for part in parts(of: line.dropFirst("USAGE: ".count)) {
                if current.count + 1 + part.count > width, current != "USAGE:" {
                    lines.append(current)
                    current = "      "
                }
                current += " " + part
            }
            lines.append(current)
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// The words of a usage line, an option in brackets with its value (`[--server <server>]`) as one.
    private static func parts(of usage: Substring) -> [String] {
        var parts: [String] = [], current = "", depth = 0
        for character in usage {
            if character == " ", depth == 0 {
                if !current.isEmpty { parts.append(current) }
                current = ""
                continue
            }
            if character == "[" || character == "<" { depth += 1 }
            if character == "]" || character == ">" { depth = max(0, depth - 1) }
            current.append(character)
        }
        if !current.isEmpty { parts.append(current) }
        return parts
    }
}
