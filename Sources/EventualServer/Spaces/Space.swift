/// What a member may do in a space.
enum SpaceRole: String, Sendable, Codable {
    /// Everything; the only one who invites, changes roles and removes members.
    case owner
    /// Reads and writes records.
    case editor
    /// Reads records.
    case viewer

    /// Whether the role lets its member change the space's records.
    var writes: Bool { self != .viewer }
}

/// A person's own space (its id is their user id) or one they share.
enum SpaceKind: String, Sendable, Codable {
    case personal
    case shared
}

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
