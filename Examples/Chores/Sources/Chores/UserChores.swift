import EventualAPI
import EventualKit
import Foundation
import GRDB

/// The app on one device: accounts, sign-in online or offline, sign-out (`AppHost`), and the person's chores.
public typealias ChoresApp = AppHost<UserChores>

/// The signed-in person's chores. Every write lands on this device with its change in the outbox,
/// in one transaction; the engine sends it. Households are the engine's spaces (`device.spaces`).
public final class UserChores: AppUser {
    public typealias Configuration = ChoresConfiguration
    public static var deviceApp: DeviceApp { .chores }
    static let chores = RecordTable<Chore>()
    public let device: SignedInDevice

    public init(session: Session, host: ChoresApp) throws {
        device = try SignedInDevice(session: session, accounts: host.accounts, collections: [Self.chores.mirror])
    }

    /// Adds a chore to `household` (nil: the household the person is in, if one; with none, their own list).
    public func add(_ title: String, assignee: String?, due: String?, household: String?) async throws -> Chore {
        let title = try Chore.checked(title, .title), assignee = try assignee.map { try Chore.checked($0, .assignee) }
        let due = try due.map { typed in
            guard let day = Chore.day(typed) else { throw ChoresError.badDue(typed) }
            return day
        }
        let space = try household.map { try device.spaces.space($0) } ?? onlyHousehold(orNone: true)
        if let space, space.role == .viewer { throw ChoresError.viewer(space.name) }
        if let assignee { try await checkMember(assignee, of: space?.id) }
        let chore = Chore(id: UUIDv7.make(), title: title, assignee: assignee, due: due, done: false, createdAt: UnixMillis.now(), space: space?.id)
        try await device.store.write { tx in try Self.chores.insert(chore, space: chore.space, in: tx) }
        return chore
    }

    /// Marks the chore `id` names (its id, or its end as lists show it) done, or open again; a
    /// chore already so is left as it is (`changed` false), and nothing is sent.
    public func tick(_ id: String, done: Bool) async throws -> (chore: Chore, changed: Bool) {
        let chore = try find(id)
        guard chore.done != done else { return (chore, false) }
        return (try await change(id) { $0.done = done }, true)
    }

    /// Gives the chore `id` names to `user`, who must be in its household (or be the person, on their own list).
    public func assign(_ id: String, to user: String) async throws -> Chore {
        let user = try Chore.checked(user, .assignee)
        try await checkMember(user, of: try find(id).space)
        return try await change(id) { $0.assignee = user }
    }

    /// Refuses a chore for `user` in `space` (nil: the person's own list) when they are not in it:
    /// someone this device has not heard of in it is looked up on the server; offline, or before
    /// the device has heard who is in it, anyone is taken.
    private func checkMember(_ user: String, of space: String?) async throws {
        let me = device.session.username
        guard let space else {
            guard user.caseInsensitiveCompare(me) == .orderedSame else { throw ChoresError.notMember(user, list: "your own list", members: [me]) }
            return
        }
        let isIn = { (members: [SpaceMember]) in members.contains { $0.username.caseInsensitiveCompare(user) == .orderedSame } }
        guard let household = try device.spaces.list().first(where: { $0.id == space }), !isIn(household.members) else { return }
        // NB: the copy of the last pull may predate someone's joining: the server's word decides.
        guard let fresh = try? await device.spaces.members(of: space), fresh.source == .network, !isIn(fresh.value.members) else { return }
        throw ChoresError.notMember(user, list: household.name, members: fresh.value.members.map(\.username))
    }

    /// Every chore on this device, open first and the soonest due first, each with its sync state.
    public func list() throws -> [(chore: Chore, state: SyncState)] {
        let chores = try device.store.reader.read { db in try Chore.ordered.fetchAll(db) }
        let states = try device.syncStates(Chore.collection, ids: chores.map(\.id))
        return chores.map { ($0, states[$0.id] ?? .confirmed) }
    }

    /// The household the person is in when they are in one only; with none, nil when `orNone`.
    public func onlyHousehold(orNone: Bool = false) throws -> Space? {
        let households = try device.spaces.list().filter { $0.kind == .shared }
        guard households.count == 1 || (orNone && households.isEmpty) else { throw ChoresError.whichHousehold(households.count) }
        return households.first
    }

    /// The one chore `id` names (its id, or its end as lists show it).
    private func find(_ id: String) throws -> Chore {
        let typed = id.trimmingCharacters(in: .whitespaces).lowercased()
        guard typed.count >= OutboxEntry.shortIDLength else { throw ChoresError.badID(id) }
        let matches = try device.store.reader.read { db in try Chore.fetchAll(db) }.filter { $0.id.hasSuffix(typed) }
        guard let chore = matches.first else { throw ChoresError.noChore(id) }
        guard matches.count == 1 else { throw ChoresError.badID(id) }
        return chore
    }

    private func change(_ id: String, _ edit: @escaping @Sendable (inout Chore) -> Void) async throws -> Chore {
        let chore = try find(id)
        if let space = try device.spaces.viewedOnly(chore.space) { throw ChoresError.viewer(space.name) }
        return try await device.store.write { tx in try Self.chores.update(chore.id, in: tx, edit) ?? chore }
    }
}

/// Chores on a device: the device's configuration, nothing of its own.
public struct ChoresConfiguration: AppConfiguration {
    public var device: DeviceConfiguration

    public init(dataDirectory: URL, serverURL: URL) {
        device = DeviceConfiguration(dataDirectory: dataDirectory, serverURL: serverURL, databaseName: "chores.sqlite")
    }
}

extension DeviceApp {
    /// Chores to the device layer: its table, made from the collection, and what waits as "chore Bins".
    static let chores = DeviceApp(.chores, version: "1.0.0", migrations: [.table(for: Chore.self, named: "chores-1", indexes: [[.done, .due]])],
                                  spaceNoun: "household") { entry, store in Chore.name(entry.recordID ?? "", store) }
}

extension EventualApp {
    /// Chores as its declaration file says (`Resources/chores.app.yaml`, bundled with this module):
    /// the one spelling of its collection, which the server is deployed with too.
    /// NB: the bundled file is read by the tests at every build; one that does not read is a broken build.
    public static let chores: EventualApp = {
        guard let url = Bundle.module.url(forResource: "chores.app", withExtension: "yaml") else {
            preconditionFailure("chores.app.yaml is not in the Chores bundle")
        }
        do {
            return try EventualApp.declared(at: url)
        } catch {
            preconditionFailure("chores.app.yaml: \(error)")
        }
    }()
}
