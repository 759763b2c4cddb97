/// Why the server will not do what a person asked, in the domain's words. Stores throw it; only
/// `ErrorMapping` (HTTP/) turns it into a status and the JSON error shape.
enum Refusal: Error, Equatable, CustomStringConvertible {
    /// A write would take the person past one of their `Quotas`.
    case quotaExceeded(String)
    /// The person has done this as often as a limit allows; it may be done again in `retryAfter` seconds.
    case limitReached(String, retryAfter: Int)
    /// What the request names does not exist.
    case notFound(String)
    /// What the request names belongs to someone else.
    case notTheOwner(String)
    /// The request's credentials do not cover what it names (a session token for another barcode).
    case notPermitted(String)
    /// A name or address that must be unique is taken already.
    case alreadyTaken(String)
    /// What the request asks clashes with the state of what it names (the owner leaving a space others are in).
    case conflict(String)
    /// What the person sent is not acceptable (a wrong or expired code).
    case invalid(String)
    /// The device's version of an app is below the oldest the server syncs (`EventualApp.minimumVersion`).
    case upgradeRequired(String)
    /// What the request builds on is no longer kept (a sync cursor older than the purged deletions).
    case gone(String)
    /// The server has too much of this to do at once; retry in `retryAfter` seconds.
    case overloaded(String, retryAfter: Int)
    /// The attachment asked for is not complete in that space (unknown, or its upload under way).
    case notUploaded(String)
    /// A chunk of an attachment names no upload begun in that space.
    case uploadNotBegun(String)
    /// A chunk of an attachment starts elsewhere than where its upload stands: resume from `received`.
    case offsetMismatch(String, received: Int64)
    /// The bytes are not of a kind the server keeps (`AttachmentContentType`).
    case unsupportedContent(String)
    /// The bytes do not match the SHA-256 they were sent under.
    case digestMismatch(String)
    /// The range asked for starts at or past the end of what it names.
    case rangeNotSatisfiable(String)

    /// The sentence the person is shown.
    var message: String {
        switch self {
        case .quotaExceeded(let message), .notFound(let message), .notTheOwner(let message), .notPermitted(let message),
             .alreadyTaken(let message), .conflict(let message), .invalid(let message), .notUploaded(let message),
             .uploadNotBegun(let message), .unsupportedContent(let message), .digestMismatch(let message),
             .rangeNotSatisfiable(let message), .gone(let message), .upgradeRequired(let message):
            return message
        case .offsetMismatch(let message, _):
            return message
        case .limitReached(let message, _), .overloaded(let message, _):
            return message
        }
    }

    var description: String { message }
}
