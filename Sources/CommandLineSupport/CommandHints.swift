import EventualKit

/// How a command speaks of its app's errors. An app's model says what is wrong in words a phone
/// could show; the command adds how to act on it here ("run `pantry login --email EMAIL`"), and
/// says which errors are a value typed wrong (status 64). One type per command.
public protocol CommandHints: Sendable {
    /// The message for `error` with this command's way to act on it; nil when the error's own
    /// words say all there is.
    func message(for error: any Error) -> String?
    /// Whether `error` is a value typed on the command line that cannot be one.
    func isMalformedArgument(_ error: any Error) -> Bool
}

extension CommandHints {
    /// Whether `error` is a usage mistake: an engine's (an outbox id too short to pick one change)
    /// or one the command names.
    func isUsageMistake(_ error: any Error) -> Bool {
        if case .idTooShort = error as? OutboxError { return true }
        return isMalformedArgument(error)
    }
}

/// The running command's words for its app's errors, bound by `runParsed` for the whole run, so
/// that a `validate()`'s `usageCheck` says an app's error in the command's words too.
enum RunningCommand {
    @TaskLocal static var hints: (any CommandHints)?
}
