import EventualKit

/// How a command speaks of its app's errors. An app's model says what is wrong in words a phone
/// could show; the command adds how to act on it here ("run `pantry login --email EMAIL`"), and
/// says which errors are a value typed wrong (status 64). One type per command.
public protocol CommandHints: Sendable {
    /// The app model's error type.
    associatedtype AppError: Error

    /// The message for `error` with this command's way to act on it; nil when the error's own
    /// words say all there is.
    func message(for error: AppError) -> String?
    /// Whether `error` is a value typed on the command line that cannot be one.
    func isMalformedArgument(_ error: AppError) -> Bool
    /// The message for a shared option's refusal, when the command words it its own way.
    func message(for error: SettingError) -> String?
}

extension CommandHints {
    public func message(for error: SettingError) -> String? { nil }

    /// This command's words for `error`, whatever its type.
    func message(for error: any Error) -> String? {
        switch error {
        case let error as AppError: message(for: error)
        case let error as SettingError: message(for: error)
        default: nil
        }
    }

    /// Whether `error` is of the app model's error type, whose words are for people.
    func owns(_ error: any Error) -> Bool { error is AppError }

    /// Whether `error` is a usage mistake: an engine's (an outbox id too short to pick one change)
    /// or one the command names.
    func isUsageMistake(_ error: any Error) -> Bool {
        if case .idTooShort = error as? OutboxError { return true }
        return (error as? AppError).map(isMalformedArgument) ?? false
    }
}

/// The running command's words for its app's errors, bound by `runParsed` for the whole run, so
/// that a `validate()`'s `usageCheck` says an app's error in the command's words too.
enum RunningCommand {
    @TaskLocal static var hints: (any CommandHints)?
}
