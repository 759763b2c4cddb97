import Foundation
import Testing

/// A `pantry` device (its own data directory) with a fresh user registered and signed in
/// online through the executable.
func signedInProcess(_ server: URL, _ scratch: ScratchFolder, folder: String = "cli") async throws -> (pantry: CommandProcess, email: String) {
    let pantry = CommandProcess.pantry(dataDirectory: scratch.folder(folder), server: server)
    let (email, _) = try await pantry.signUp(name: "cli")
    return (pantry, email)
}

/// The JSON list a `--json` listing printed.
func jsonItems(_ outcome: CommandOutcome) throws -> [[String: Any]] {
    try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]], "\(outcome.stderr)")
}

/// The JSON object a `--json` command printed.
func jsonObject(_ outcome: CommandOutcome) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [String: Any], "\(outcome.stderr)")
}
