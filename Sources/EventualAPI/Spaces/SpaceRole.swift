/// What a member may do in a space: the server's rule and the device's, one type.
public enum SpaceRole: String, Sendable, Codable, CaseIterable {
    /// Everything; the only one who invites, changes roles and removes members.
    case owner
    /// Reads and writes records.
    case editor
    /// Reads records.
    case viewer

    /// Whether the role lets its member change the space's records.
    public var writes: Bool { self != .viewer }

    /// A role this version does not know (a newer server's) is read as the least one.
    public init(from decoder: any Decoder) throws {
        self = SpaceRole(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .viewer
    }
}

/// Whose a space is.
public enum SpaceKind: String, Sendable, Codable {
    /// A person's own: every person has one (its id is theirs), it holds what is theirs alone, and
    /// no one else joins it.
    case personal
    /// One that people share (a household, a couple's budget).
    case shared

    /// A kind this version does not know is read as shared: it is not the person's own.
    public init(from decoder: any Decoder) throws {
        self = SpaceKind(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .shared
    }
}

extension SpaceRole {
    /// The generated types' role.
    public init(_ role: Components.Schemas.SpaceRole) {
        switch role {
        case .owner: self = .owner
        case .editor: self = .editor
        case .viewer: self = .viewer
        }
    }
}

extension Components.Schemas.SpaceRole {
    public init(_ role: SpaceRole) {
        switch role {
        case .owner: self = .owner
        case .editor: self = .editor
        case .viewer: self = .viewer
        }
    }
}

extension SpaceKind {
    /// The generated types' kind.
    public init(_ kind: Components.Schemas.SpaceKind) {
        switch kind {
        case .personal: self = .personal
        case .shared: self = .shared
        }
    }
}

extension Components.Schemas.SpaceKind {
    public init(_ kind: SpaceKind) {
        switch kind {
        case .personal: self = .personal
        case .shared: self = .shared
        }
    }
}
