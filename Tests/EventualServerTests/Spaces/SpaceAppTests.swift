import EventualAPI
import Foundation
import Testing
@testable import EventualServer

/// A shared space belongs to one app: a pantry household is the pantry's, a shared account
/// SpendiQ's. Each app lists, is invited to and files records into its own spaces only.
@Suite("Spaces: each app its own", .timeLimit(.minutes(3)))
struct SpaceAppTests {
    private struct SpacesList: Decodable { let spaces: [SpaceJSON] }
    private struct InvitationsList: Decodable { let invitations: [InvitationJSON] }

    private func create(_ name: String, app: String?, as account: Account, _ api: API) async throws -> String {
        let id = UUID().uuidString.lowercased()
        let appField = app.map { #","app":"\#($0)""# } ?? ""
        let answer = try await api.spaceCall(.post, "/v1/spaces", json: #"{"id":"\#(id)","name":\#(jsonString(name))\#(appField)}"#, as: account)
        try #require(answer.status == .created, "\(answer.text)")
        return id
    }

    private func spendingAccount(_ id: String) -> [String: SyncValue] {
        ["name": .string("Account \(id)"), "kind": "bank", "currency": "EUR", "openingBalanceMinor": 0, "archived": false,
         "createdAt": 1_764_000_000_000]
    }

    @Test(arguments: Backend.available)
    func eachAppListsAndIsInvitedToItsOwnSpacesOnly(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given alice's household (the pantry's) and her shared account (SpendiQ's), both with dan invited
            let alice = try await api.signUp("alice"), dan = try await api.signUp("dan")
            let cabin = try await create("Cabin", app: "pantry", as: alice, api)
            let joint = try await create("alice & dan", app: "spendiq", as: alice, api)
            for space in [cabin, joint] { #expect(try await api.invite(dan.username, to: space, as: alice).status == .accepted) }
            // When each app asks for dan's invitations, it sees its own
            let forPantry = try await api.spaceCall(.get, "/v1/invitations?app=pantry", as: dan).decode(InvitationsList.self)
            let forSpendiq = try await api.spaceCall(.get, "/v1/invitations?app=spendiq", as: dan).decode(InvitationsList.self)
            #expect(forPantry.invitations.map(\.space.id) == [cabin])
            #expect(forSpendiq.invitations.map(\.space.id) == [joint])
            // And one app cannot answer the other's invitation, even by its whole id
            let crossed = try await api.spaceCall(.post, "/v1/invitations/\(forSpendiq.invitations[0].id)/accept?app=pantry", as: dan)
            #expect(crossed.status == .notFound, "\(crossed.text)")
            #expect(try await api.spaceCall(.post, "/v1/invitations/\(forPantry.invitations[0].id)/decline?app=spendiq", as: dan).status
                == .notFound)
            // And, once dan is in both, each app lists its own beside the personal space
            for (invitation, app) in [(forPantry.invitations[0], "pantry"), (forSpendiq.invitations[0], "spendiq")] {
                let accepted = try await api.spaceCall(.post, "/v1/invitations/\(invitation.id)/accept?app=\(app)", as: dan)
                #expect(accepted.status == .ok, "\(accepted.text)")
            }
            let pantrySpaces = try await api.spaceCall(.get, "/v1/spaces?app=pantry", as: dan).decode(SpacesList.self)
            let spendiqSpaces = try await api.spaceCall(.get, "/v1/spaces?app=spendiq", as: dan).decode(SpacesList.self)
            #expect(pantrySpaces.spaces.map(\.id) == [dan.id, cabin])
            #expect(spendiqSpaces.spaces.map(\.id) == [dan.id, joint])
            // And without an app, every space, each saying whose it is
            let all = try await api.spaceCall(.get, "/v1/spaces", as: dan)
            #expect(try all.decode(SpacesList.self).spaces.count == 3)
            #expect(all.text.contains(#""app":"pantry""#) && all.text.contains(#""app":"spendiq""#), "\(all.text)")
            // And an app this server does not serve is a 404, a name no app could have a 400
            #expect(try await api.spaceCall(.get, "/v1/spaces?app=nope", as: dan).status == .notFound)
            #expect(try await api.spaceCall(.get, "/v1/spaces?app=No%20pe", as: dan).status == .badRequest)
        }
    }

    @Test(arguments: Backend.available)
    func aSpaceHoldsTheRecordsOfItsAppOnlyAndAnUnclaimedOneIsClaimedByItsFirst(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice")
            let cabin = try await create("Cabin", app: "pantry", as: alice, api)
            let joint = try await create("alice & dan", app: "spendiq", as: alice, api)
            let older = try await create("Made by an older app", app: nil, as: alice, api)
            // A pantry item into the shared account, and an account into the household, are refused
            let item = SyncChangeJSON(recordId: "bread", hlc: Stamps.at(-5000), fields: pantryItem())
            let account = SyncChangeJSON(collection: "spending_accounts", recordId: "joint", hlc: Stamps.at(-5000),
                                         fields: spendingAccount("joint"))
            let crossed = try await api.pushed([item], to: joint, as: alice) + (try await api.pushed([account], to: cabin, as: alice))
            #expect(crossed.map(\.status) == ["rejected", "rejected"])
            #expect(crossed.allSatisfy { $0.message?.contains("shared in another app") == true }, "\(crossed)")
            // While each goes into its own app's space
            var intoOwn = try await api.pushed([SyncChangeJSON(recordId: "bread", hlc: Stamps.at(-4000), fields: pantryItem())], to: cabin, as: alice)
            intoOwn += try await api.pushed([SyncChangeJSON(collection: "spending_accounts", recordId: "joint", hlc: Stamps.at(-4000),
                                                            fields: spendingAccount("joint"))], to: joint, as: alice)
            #expect(intoOwn.map(\.status) == ["applied", "applied"], "\(intoOwn)")
            // A space no app claimed yet is claimed by the first record filed into it
            let first = try await api.pushed([SyncChangeJSON(recordId: "jam", hlc: Stamps.at(-3000), fields: pantryItem())], to: older, as: alice)
            #expect(first.map(\.status) == ["applied"])
            let second = try await api.pushed([SyncChangeJSON(collection: "spending_accounts", recordId: "cash", hlc: Stamps.at(-3000),
                                                              fields: spendingAccount("cash"))], to: older, as: alice)
            #expect(second.map(\.status) == ["rejected"])
            let listed = try await api.spaceCall(.get, "/v1/spaces?app=spendiq", as: alice).decode(SpacesList.self)
            #expect(!listed.spaces.map(\.id).contains(older))
            // And the personal space holds every app's records
            let personal = try await api.pushed([SyncChangeJSON(recordId: "tea", hlc: Stamps.at(-2000), fields: pantryItem()),
                                                 SyncChangeJSON(collection: "spending_accounts", recordId: "wallet", hlc: Stamps.at(-2000),
                                                                fields: spendingAccount("wallet"))], to: nil, as: alice)
            #expect(personal.map(\.status) == ["applied", "applied"], "\(personal)")
        }
    }
}
