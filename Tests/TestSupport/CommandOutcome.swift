import Foundation

/// What a command printed, and how it ended.
public struct CommandOutcome: Sendable {
    /// The command's name, which starts each of its error lines (`pantry: …`).
    public let command: String
    public let status: Int32
    public let stdout: String
    public let stderr: String

    public init(command: String, status: Int32, stdout: String, stderr: String) {
        self.command = command
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    /// Exactly one line on stderr, nothing on stdout, a non-zero status: how every error looks.
    /// Never a Foundation error, a Swift value's dump or an optional.
    public var isOneLineError: Bool {
        status != 0 && stdout.isEmpty && stderr.hasPrefix("\(command): ") && stderr.hasSuffix("\n")
            && stderr.split(separator: "\n", omittingEmptySubsequences: false).count == 2
            && !stderr.contains("Error Domain=") && !stderr.contains("CommandError(") && !stderr.contains("Optional(")
    }

    /// What a `--json` command printed.
    public func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8))
    }
}
