/// Whom an invitation is for: a person by username, or an email address.
enum Invitee: Sendable, Equatable {
    case username(String)
    case email(String)
}
