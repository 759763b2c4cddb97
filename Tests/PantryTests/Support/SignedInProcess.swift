import Foundation
import Testing

/// A `pantry` device (its own data directory) with a fresh user registered and signed in
/// online through the executable.
func signedInProcess(_ server: URL, _ scratch: ScratchFolder, folder: String = "cli") async throws -> (pantry: PantryProcess, email: String) {
    let pantry = PantryProcess(dataDirectory: scratch.folder(folder), server: server)
    let suffix = UUID().uuidString.prefix(6).lowercased()
    let email = "cli.\(suffix)@example.com"
    let registered = try await pantry.run(["register", "--username", "cli_\(suffix)", "--email", email, "--password-stdin"],
                                          input: "long-password\n")
    #expect(registered.status == 0, "\(registered.stderr)")
    let login = try await pantry.run(["login", "--email", email, "--password-stdin"], input: "long-password\n")
    #expect(login.status == 0, "\(login.stderr)")
    #expect(login.stdout.contains("Signed in as cli_\(suffix)."))
    return (pantry, email)
}

/// The JSON list a `--json` listing printed.
func jsonItems(_ outcome: PantryProcess.Outcome) throws -> [[String: Any]] {
    try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]], "\(outcome.stderr)")
}

/// The JSON object a `--json` command printed.
func jsonObject(_ outcome: PantryProcess.Outcome) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any], "\(outcome.stderr)")
}

extension PantryProcess.Outcome {
    /// Exactly one line on stderr, nothing on stdout, a non-zero status: how every error looks.
    var isOneLineError: Bool {
        status != 0 && stdout.isEmpty && stderr.hasPrefix("pantry: ") && stderr.hasSuffix("\n")
            && stderr.split(separator: "\n", omittingEmptySubsequences: false).count == 2
            && !stderr.contains("Error Domain=") && !stderr.contains("CommandError(") && !stderr.contains("Optional(")
    }
}
