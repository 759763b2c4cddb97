import EventualAPI
import Foundation
import GRDB

/// A space this device knows the person is in, as of its last sync (or created here since).
public struct Space: Sendable, Equatable, Codable, FetchableRecord {
    public let id: String
    public let name: String
    public let kind: SpaceKind
    /// The person's role in it.
    public let role: SpaceRole
    /// The owner's username, when this device has heard it.
    public let owner: String?
    /// The app whose records it holds (`pantry`, `spendiq`); nil for the personal space (every
    /// app's) and a shared one no app has claimed yet.
    public var app: String? = nil
    /// Who is in a shared space, the owner first, as the server last said (a pull, or a listing);
    /// empty when this device has not heard yet, and for the personal space.
    public var members: [SpaceMember] = []

    /// Everyone in it but `username`, the owner first: whom the person shares it with.
    public func others(than username: String) -> [String] {
        members.map(\.username).filter { $0.caseInsensitiveCompare(username) != .orderedSame }
    }
}

extension Space {
    public init(row: Row) throws {
        id = row["id"]
        name = row["name"]
        kind = row["kind"]
        role = row["role"]
        owner = row["owner"]
        app = row["app"]
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        // NB: a copy this version cannot read is "not heard yet": the next pull writes it again.
        members = (row["members"] as String?).flatMap { try? decoder.decode([SpaceMember].self, from: Data($0.utf8)) } ?? []
    }
}

/// An invitation the server refused (no one of that name, a member already, too many): it
/// waits in the outbox until the app undoes what it did for it, or the person discards it.
public struct RefusedInvitation: Sendable, Equatable {
    /// The outbox entry's id.
    public let entryID: String
    public let spaceID: String
    public let invitee: String
    public let role: SpaceRole
    /// The server's words.
    public let reason: String
}

/// Why a space call was refused on this device, before anything was queued.
public enum SpaceError: Error, Equatable, CustomStringConvertible {
    /// A name that is empty, longer than 60 characters, or holds a control character.
    case badName(String)
    /// A role that cannot be given this way (an invitation as owner).
    case roleNotInvitable(SpaceRole)
    /// The person's own space: no one joins it and it is never left.
    case personalSpace
    /// A space this device does not know the person is in.
    case unknownSpace(String)
    /// A name that more than one of the person's spaces has.
    case ambiguousName(String)
    /// An invitee, a username, that is empty.
    case noOne
    /// The owner leaving a space others are still in: it must be handed over first.
    case ownerWithOthers(String, others: [String])
    /// A change of membership in a space the person does not own (its owner, when known).
    case notOwner(String, owner: String?)
    /// Someone this device knows is not in the space (or whose removal waits to be sent).
    case notAMember(String, String)
    /// Someone invited to a space they are in already.
    case memberAlready(String, String)
    /// The owner changing their own role: they hand the space over instead.
    case ownRole(String)
    /// Characters of an invitation's id that pick no single one (too few, or shared by two).
    case invitationReferenceTooShort(String)
    /// An id that names no invitation waiting for the person.
    case noInvitation(String)

    public var description: String {
        switch self {
        case .badName(let name): return "'\(name)' is not a space's name: give 1 to 60 characters"
        case .roleNotInvitable(let role): return "No one is invited as \(role.rawValue): invite them as editor or viewer"
        case .personalSpace: return "Your personal space is yours alone"
        case .unknownSpace(let id): return "You are in no space called \(id) on this device: sync, or check the name"
        case .ambiguousName(let name): return "You are in more than one space called \(name): give its id"
        case .noOne: return "Say who: a username or an email"
        case .ownerWithOthers(let space, let others):
            return "You own \(space) and \(others.joined(separator: ", ")) \(others.count == 1 ? "is" : "are") in it: make one of them its owner first"
        case .notOwner(let space, let owner): return "Only the owner of \(space)\(owner.map { " (\($0))" } ?? "") changes who is in it"
        case .notAMember(let who, let space): return "\(who) is not in \(space)"
        case .memberAlready(let who, let space): return "\(who) is in \(space) already"
        case .ownRole(let space): return "You own \(space): to step down, make another member its owner"
        case .invitationReferenceTooShort(let typed):
            return "'\(typed)' does not pick one invitation: give at least \(Spaces.shortestInvitationReference) characters of its id"
        case .noInvitation(let typed): return "No invitation \(typed) waits for you"
        }
    }
}

extension SpaceRole: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { rawValue.databaseValue }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> SpaceRole? {
        String.fromDatabaseValue(value).map { SpaceRole(rawValue: $0) ?? .viewer }
    }
}

extension SpaceKind: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { rawValue.databaseValue }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> SpaceKind? {
        String.fromDatabaseValue(value).map { SpaceKind(rawValue: $0) ?? .shared }
    }
}
