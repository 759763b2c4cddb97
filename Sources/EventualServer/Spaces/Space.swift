import EventualAPI

/// A space the person is a member of, as a pull lists it.
struct SpaceMembership: Sendable, Equatable {
    let id: String
    let name: String
    let kind: SpaceKind
    let role: SpaceRole
    /// The app whose records it holds (`AnalyticsApp` raw value); nil for a personal space, and
    /// for a shared one no record has claimed yet.
    var app: String? = nil
}

/// A space named to someone who is no longer in it.
struct SpaceName: Sendable, Equatable {
    let id: String
    let name: String
}

/// A space with its members, as the space calls answer it.
struct SpaceDetails: Sendable, Equatable, Codable {
    struct Member: Sendable, Equatable, Codable {
        let username: String
        let role: SpaceRole
        /// When they became a member (Unix ms).
        let since: Int64
    }

    let id: String
    let name: String
    let kind: SpaceKind
    /// The caller's role.
    let role: SpaceRole
    /// The owner's username.
    let owner: String
    /// The owner first, then by username.
    let members: [Member]
    /// See `SpaceMembership.app`.
    var app: String? = nil
}

/// A pending invitation, as its invitee sees it.
struct SpaceInvitation: Sendable, Equatable {
    let id: String
    let space: SpaceName
    let invitedBy: String
    let role: SpaceRole
    let createdAt: Int64
}

/// Whom an invitation is for: a person by username, or an email address.
enum Invitee: Sendable, Equatable {
    case username(String)
    case email(String)
}
