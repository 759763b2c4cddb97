import EventualAPI
import Foundation
import GRDB
import Testing
@testable import EventualKit

/// A registered person, as a test signs them in and invites them.
struct Person: Sendable {
    let username: String
    let email: String
    let password: String
}

/// Registers a person through the real API.
func registerPerson(_ server: URL, name: String) async throws -> Person {
    let suffix = UUID().uuidString.prefix(8).lowercased()
    let person = Person(username: "\(name)_\(suffix)", email: "\(name).\(suffix)@example.com", password: "pass-\(suffix)")
    let link = ServerLink(serverURL: server, timeouts: .patient) { nil }
    let answer = try await link.client.register(body: .json(.init(username: person.username, email: person.email, password: person.password)))
    guard case .created = answer else { throw TestFailure("register failed: \(answer)") }
    return person
}

/// An item as a test of spaces reads it back: where it is and who changed it last.
struct SpaceItem: Equatable, Sendable, CustomStringConvertible {
    let name: String
    let quantity: Double
    let space: String?
    let changedBy: String?

    var description: String { "\(name) ×\(quantity) in \(space ?? "own") by \(changedBy ?? "-")" }
}

extension Device {
    /// A device of `person`, signed in.
    static func of(_ person: Person, server: URL, folder: URL, configuration: SyncConfiguration = .fast) async throws -> Device {
        let device = try Device(folder: folder, serverURL: server, configuration: configuration)
        try await device.vault.signIn(email: person.email, password: person.password, client: device.link.client)
        return device
    }

    func spaces(of person: Person) -> Spaces {
        Spaces(store: store, username: person.username, client: link.client, patience: .seconds(20))
    }

    /// Puts an item in `space` (nil: the person's own), as an app would.
    @discardableResult
    func put(_ name: String, quantity: Double, in space: String?, id: String = UUIDv7.make()) async throws -> String {
        try await store.write { tx in
            try Self.items.insert(id, ["name": .string(name), "quantity": .number(quantity), "status": "inPantry",
                                       "boughtAt": .integer(1_764_000_000_000)], space: space, in: tx)
        }
        return id
    }

    /// Uses up `amount` of an item, wherever it is.
    func use(_ id: String, _ amount: Double) async throws {
        try await store.write { tx in try Self.items.update(id, adding: ["quantity": -amount], in: tx) }
    }

    func spaceItems() throws -> [SpaceItem] {
        try store.reader.read { db in
            try Row.fetchAll(db, sql: "SELECT name, quantity, space_id, changed_by FROM items ORDER BY name").map {
                SpaceItem(name: $0["name"], quantity: $0["quantity"], space: $0["space_id"], changedBy: $0["changed_by"])
            }
        }
    }

    /// The failed entries' reasons.
    func refusals() throws -> [String] {
        try outbox.entries(state: .failed).map { $0.lastError ?? "" }
    }

    static let items = TableMirror(SyncCollections.pantryItems, table: "items")
}

/// Ann's household "Home" with Bob in it as `role`, both synced: returns the space's id.
func household(ann: (Device, Person), bob: (Device, Person), role: SpaceRole = .editor) async throws -> String {
    let home = try await ann.0.spaces(of: ann.1).create(name: "Home")
    try await ann.0.spaces(of: ann.1).invite(bob.1.username, to: home, role: role)
    let sent = await ann.0.engine.syncNow()
    guard sent.isComplete, sent.calls == 2 else { throw TestFailure("Ann's space calls: \(sent.rejections) \(String(describing: sent.failure))") }
    let invitations = try await bob.0.spaces(of: bob.1).invitations()
    guard let invitation = invitations.value.waiting.first(where: { $0.spaceID == home }) else { throw TestFailure("Bob sees no invitation") }
    try await bob.0.spaces(of: bob.1).accept(invitation.id)
    let joined = await bob.0.engine.syncNow()
    guard joined.isComplete, joined.calls == 1 else { throw TestFailure("Bob's accept: \(joined.rejections) \(String(describing: joined.failure))") }
    return home
}
