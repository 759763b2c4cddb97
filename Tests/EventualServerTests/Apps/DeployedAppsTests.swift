import EventualAPI
import EventualStorage
import Foundation
import Logging
import Testing
@testable import EventualServer

/// Issue 47: an app is deployed to the server's database, not compiled in. A running server
/// serves a deploy made by another process within a second or two, on both databases; before it,
/// the app's records, spaces and registrations are refused naming it; a redeploy only adds.
@Suite("Deployed apps", .timeLimit(.minutes(3)))
struct DeployedAppsTests {
    static let shelf = """
        id: shelf
        title: Shelf
        collections:
          - name: shelf_books
            scope: space
            fields:
              title: { type: string, nullable: false, maxLength: 200 }
              copies: { type: counter }
            rules:
              - notBelow: { field: copies, minimum: 0 }
        """

    /// The database a running server uses, opened apart, as `eventual-server apps deploy` opens it.
    private func deploy(_ text: String, to location: DatabaseLocation) async throws -> DeployedApps.Outcome {
        try await deployApp(text, to: location)
    }

    @Test(arguments: Backend.available)
    func aDeployByAnotherProcessIsServedWithinSecondsWithoutARestart(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api, location in
            let alice = try await api.signUp("alice")
            // Before: the app is unknown, and said so by name wherever it is named
            #expect(try await api.send(.get, "/v1/apps/shelf").status == .notFound)
            let space = #"{"id": "s-1", "name": "Books", "app": "shelf"}"#
            let early = try await api.send(.post, "/v1/spaces", headers: alice.bearer, json: space)
            #expect(early.status == .notFound && early.text.contains("does not serve the app 'shelf'"), "\(early.text)")
            let book = SyncChangeJSON(collection: "shelf_books", recordId: "b1", hlc: Stamps.at(0), fields: ["title": .string("Dune"), "copies": .integer(2)])
            let refused = try await api.pushed([book], as: alice)
            #expect(refused.first?.status == "rejected" && refused.first?.message?.contains("no app deployed on this server declares it") == true,
                    "\(refused)")
            let registration = #"{"username": "ben", "email": "ben@example.com", "password": "correct horse", "app": "shelf"}"#
            let unknownApp = try await api.send(.post, "/users", json: registration)
            #expect(unknownApp.status == .notFound && unknownApp.text.contains("'shelf'"), "\(unknownApp.text)")
            let badName = try await api.send(.get, "/v1/apps/Shelf%00")
            #expect(badName.status == .badRequest, "\(badName.text)")

            // When another process deploys it
            guard case .deployed(let revision) = try await deploy(Self.shelf, to: location) else {
                Issue.record("a new app is deployed")
                return
            }
            let started = ContinuousClock.now
            var served = try await api.send(.get, "/v1/apps/shelf")
            while served.status != .ok, ContinuousClock.now - started < .seconds(5) {
                try await Task.sleep(for: .milliseconds(50))
                served = try await api.send(.get, "/v1/apps/shelf")
            }
            let waited = ContinuousClock.now - started
            #expect(served.status == .ok && waited < .seconds(3), "served after \(waited)")

            // Then the server serves it as deployed: its declaration, its spaces, its records
            struct Served: Decodable {
                struct Field: Decodable { let type: String; let nullable: Bool; let maxLength: Int? }
                struct Collection: Decodable { let name, scope: String; let fields: [String: Field] }
                let id, title, declaration: String
                let revision: Int64
                let collections: [Collection]
            }
            let answer = try served.decode(Served.self)
            #expect(answer.id == "shelf" && answer.title == "Shelf" && answer.revision == revision && answer.declaration == Self.shelf)
            #expect(answer.collections.map(\.name) == ["shelf_books"] && answer.collections.first?.scope == "space")
            let title = try #require(answer.collections.first?.fields["title"])
            #expect(title.type == "string" && !title.nullable && title.maxLength == 200)
            #expect(try await api.send(.post, "/v1/spaces", headers: alice.bearer, json: space).status == .created)
            let again = SyncChangeJSON(collection: "shelf_books", recordId: "b1", hlc: Stamps.at(1), fields: ["title": .string("Dune"), "copies": .integer(2)])
            #expect(try await api.pushed([again], as: alice).first?.status == "applied")
            let below = SyncChangeJSON(collection: "shelf_books", recordId: "b1", hlc: Stamps.at(2), deltas: ["copies": -5])
            #expect(try await api.pushed([below], as: alice).first?.code == "below_minimum", "its rules hold as declared")
            #expect(try await api.pulledRecords(as: alice)["b1"]?.fields["title"] == .string("Dune"))
            #expect(try await api.send(.post, "/users", json: registration).status == .created)
        }
    }

    @Test(arguments: Backend.available)
    func aRedeployOnlyAddsAndTwoAppsNeverShareACollection(_ backend: Backend) async throws {
        try await withServer(backend) { _, location in
            // The built-in apps were deployed at first start, once
            let first = try await deploy(BuiltInApps.text(of: "pantry"), to: location)
            guard case .unchanged = first else {
                Issue.record("the built-in pantry is deployed at first start: \(first)")
                return
            }
            #expect(try await deploy(Self.shelf, to: location) != .unchanged(revision: 0))
            #expect(try await deploy(Self.shelf, to: location) == .unchanged(revision: 4))
            let wider = Self.shelf.replacingOccurrences(of: "      copies: { type: counter }", with: "      copies: { type: counter }\n      note: { type: string }")
            // A new declaration is a new version: the same version otherwise declared is refused, naming the version to give.
            do {
                _ = try await deploy(wider, to: location)
                Issue.record("a changed declaration at the version served is refused")
            } catch let refusal as DeployedApps.Refusal {
                #expect(refusal.description == "version is 1, the version served, which declares the app otherwise (it adds shelf_books.note (null by"
                        + " default)): give this declaration version 2",
                        "\(refusal)")
            }
            let second = wider.replacingOccurrences(of: "title: Shelf", with: "title: Shelf\nversion: 2")
            #expect(try await deploy(second, to: location) == .redeployed(revision: 5, from: 1, steps: ["adds shelf_books.note (null by default)"]))
            do {
                _ = try await deploy(Self.shelf, to: location)
                Issue.record("an earlier version is refused once a later one is served")
            } catch let refusal as DeployedApps.Refusal {
                #expect(refusal.problems.first?.message == "is 1, below version 2 served: a version only goes up; give this declaration version 3",
                        "\(refusal)")
                #expect(refusal.description.contains("shelf_books.fields.note is gone"), "and the step it would take back: \(refusal)")
            }
            let thief = "id: thief\ntitle: Thief\ncollections:\n  - name: shelf_books\n    fields:\n      x: { type: string }\n"
            do {
                _ = try await deploy(thief, to: location)
                Issue.record("a collection of another app is refused")
            } catch let refusal as DeployedApps.Refusal {
                #expect(refusal.description.contains("'shelf_books' is a collection of the app shelf"), "\(refusal)")
            }
            let pantryThief = "id: shelf\ntitle: Shelf\ncollections:\n  - name: pantry_items\n    fields:\n      x: { type: string }\n"
            await #expect(throws: DeployedApps.Refusal.self) { try await deploy(pantryThief, to: location) }
        }
    }

    /// A push names the device's app and version: a change that uses what the served version lacks,
    /// from a device of a newer version, is `newer_app` (it waits there); from one of the version
    /// served, or none named, it is refused as before. A malformed app or version is a 400.
    @Test(arguments: Backend.available)
    func aDeviceNewerThanTheServerIsToldItsChangeWaits(_ backend: Backend) async throws {
        try await withServer(backend, mode: .live) { api, location in
            let alice = try await api.signUp("alice")
            _ = try await deploy(Self.shelf, to: location)
            var served = try await api.send(.get, "/v1/apps/shelf")
            for _ in 0..<100 where served.status != .ok {
                try await Task.sleep(for: .milliseconds(50))
                served = try await api.send(.get, "/v1/apps/shelf")
            }
            #expect(served.status == .ok && served.text.contains("\"version\":1"), "\(served.text)")
            func push(_ app: String?, field: String, stamp: Int) async throws -> Answer {
                let change = #"{"id": "c\#(stamp)", "collection": "shelf_books", "recordId": "b1", "hlc": "\#(Stamps.at(Int64(stamp)))", "#
                    + #""deleted": false, "fields": {"title": "Dune", "\#(field)": "Ace"}}"#
                return try await api.send(.post, "/v1/sync/push", headers: alice.bearer,
                                          json: #"{"changes": [\#(change)]"# + (app.map { #", "app": \#($0)}"# } ?? "}"))
            }
            let newer = try await push(#"{"id": "shelf", "version": 2}"#, field: "brand", stamp: 1)
            #expect(newer.status == .ok && newer.text.contains("\"code\":\"newer_app\"")
                    && newer.text.contains("this server serves version 1 of shelf, the device runs version 2"), "\(newer.text)")
            for app in [#"{"id": "shelf", "version": 1}"#, nil] {
                let same = try await push(app, field: "brand", stamp: 2)
                #expect(same.status == .ok && same.text.contains("unknown field 'brand'") && !same.text.contains("newer_app"), "\(same.text)")
            }
            let otherField = try await push(#"{"id": "shelf", "version": 2}"#, field: "copies", stamp: 3)
            #expect(otherField.status == .ok && !otherField.text.contains("newer_app"), "a wrong type is no newer version's: \(otherField.text)")
            for app in [#"{"id": "Shelf!", "version": 2}"#, #"{"id": "shelf", "version": 0}"#, #"{"id": "shelf", "version": 1000001}"#,
                        #"{"id": "shelf"}"#] {
                #expect(try await push(app, field: "brand", stamp: 4).status == .badRequest, "\(app)")
            }
        }
    }
}
