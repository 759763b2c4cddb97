import Foundation

/// A member of a space, as the server last said.
public struct SpaceMember: Sendable, Equatable, Codable {
    public let username: String
    public let role: SpaceRole
    /// When they joined. NB: its `Codable` form follows the coder's date strategy: the engine and the
    /// server keep it as Unix ms (`.millisecondsSince1970`); the wire's text form is read and written
    /// by `SpaceSummary` and the generated types.
    public let since: Date

    public init(username: String, role: SpaceRole, since: Date) {
        self.username = username
        self.role = role
        self.since = since
    }

    /// The owner first, then by username: the order every listing of members uses.
    public static func ordered(_ members: [SpaceMember]) -> [SpaceMember] {
        members.sorted { ($0.role == .owner ? 0 : 1, $0.username) < ($1.role == .owner ? 0 : 1, $1.username) }
    }
}

/// A space with its members, as the space calls answer it (`openapi.yaml`'s `Space`).
public struct SpaceDetails: Sendable, Equatable, Codable {
    public let id: String
    public let name: String
    public let kind: SpaceKind
    /// The person's role in it.
    public let role: SpaceRole
    /// The owner's username.
    public let owner: String
    /// Every member, the owner first, then by username.
    public let members: [SpaceMember]
    /// The app whose records it holds (`pantry`, `spendiq`); nil for the personal space (every
    /// app's) and a shared one no app has claimed yet.
    public var app: String? = nil

    public init(id: String, name: String, kind: SpaceKind, role: SpaceRole, owner: String, members: [SpaceMember], app: String? = nil) {
        self.id = id
        self.name = name
        self.kind = kind
        self.role = role
        self.owner = owner
        self.members = members
        self.app = app
    }
}

extension SpaceMember {
    /// A member as the generated client reads it.
    public init(_ member: Components.Schemas.SpaceMember) {
        self.init(username: member.username, role: SpaceRole(member.role), since: member.since)
    }
}

extension Components.Schemas.SpaceMember {
    /// A member as the generated server writes it.
    public init(_ member: SpaceMember) {
        self.init(username: member.username, role: .init(member.role), since: member.since)
    }
}

extension SpaceDetails {
    /// A space as the generated client reads it.
    public init(_ space: Components.Schemas.Space) {
        self.init(id: space.id, name: space.name, kind: SpaceKind(space.kind), role: SpaceRole(space.role), owner: space.owner,
                  members: space.members.map(SpaceMember.init), app: space.app)
    }
}

extension Components.Schemas.Space {
    /// A space as the generated server writes it.
    public init(_ space: SpaceDetails) {
        self.init(id: space.id, name: space.name, kind: .init(space.kind), role: .init(space.role), owner: space.owner,
                  members: space.members.map(Components.Schemas.SpaceMember.init), app: space.app)
    }
}
