import Foundation

/// A space the person is in, as a pull lists it (`openapi.yaml`'s `SpaceSummary`).
public struct SpaceSummary: Sendable, Equatable {
    public let id: String
    public let name: String
    public let kind: SpaceKind
    /// The person's role in it.
    public let role: SpaceRole
    /// See `SpaceDetails.app`.
    public var app: String? = nil
    /// The owner's username; nil for the personal space, and from a server that predates it.
    public var owner: String? = nil
    /// A shared space's members, the owner first, then by username; nil for the personal space,
    /// and from a server that predates them.
    public var members: [SpaceMember]? = nil

    public init(id: String, name: String, kind: SpaceKind, role: SpaceRole, app: String? = nil, owner: String? = nil,
                members: [SpaceMember]? = nil) {
        self.id = id
        self.name = name
        self.kind = kind
        self.role = role
        self.app = app
        self.owner = owner
        self.members = members
    }

    /// The space with its members (the owner first) and its owner as they say.
    public func with(members: [SpaceMember]) -> SpaceSummary {
        let ordered = SpaceMember.ordered(members)
        return SpaceSummary(id: id, name: name, kind: kind, role: role, app: app, owner: ordered.first { $0.role == .owner }?.username,
                            members: ordered)
    }
}

/// A space named, with no more: one a pull says the person is no longer in (`openapi.yaml`'s `SpaceRef`).
public struct SpaceRef: Sendable, Equatable, Codable {
    public let id: String
    public let name: String

    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

extension SpaceSummary: Decodable {
    /// A member as the wire carries it: `since` is RFC 3339 text.
    private struct WireMember: Decodable {
        let username: String
        let role: SpaceRole
        let since: String
    }

    private enum CodingKeys: String, CodingKey { case id, name, kind, role, app, owner, members }

    /// Read leniently: a kind or a role this version does not know is read as shared or viewer, a
    /// date it cannot read as 1970 (the member is kept).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        kind = try container.decode(SpaceKind.self, forKey: .kind)
        role = try container.decode(SpaceRole.self, forKey: .role)
        app = try container.decodeIfPresent(String.self, forKey: .app)
        owner = try container.decodeIfPresent(String.self, forKey: .owner)
        members = try container.decodeIfPresent([WireMember].self, forKey: .members)?.map { member in
            SpaceMember(username: member.username, role: member.role,
                        since: (try? MillisecondDateTranscoder().decode(member.since)) ?? Date(timeIntervalSince1970: 0))
        }
    }
}

extension Components.Schemas.SpaceSummary {
    /// A space as the generated server writes it in a pull.
    public init(_ space: SpaceSummary) {
        self.init(id: space.id, name: space.name, kind: .init(space.kind), role: .init(space.role), app: space.app, owner: space.owner,
                  members: space.members?.map(Components.Schemas.SpaceMember.init))
    }
}

extension SpaceSummary {
    /// A space as the generated client reads it.
    public init(_ space: Components.Schemas.SpaceSummary) {
        self.init(id: space.id, name: space.name, kind: SpaceKind(space.kind), role: SpaceRole(space.role), app: space.app,
                  owner: space.owner, members: space.members?.map(SpaceMember.init))
    }
}

extension Components.Schemas.SpaceRef {
    public init(_ space: SpaceRef) {
        self.init(id: space.id, name: space.name)
    }
}
