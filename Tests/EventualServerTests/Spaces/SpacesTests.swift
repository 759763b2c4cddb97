import Foundation
import Testing
@testable import EventualServer

@Suite("Spaces: create, invite, accept, roles, leave", .timeLimit(.minutes(3)))
struct SpacesTests {
    @Test(arguments: Backend.available)
    func aSpaceIsCreatedOnceByItsIdAndListedAfterThePersonalOne(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let id = UUID().uuidString.lowercased()
            // When alice creates a space, then sends the same call again (a retry without a key)
            let created = try await api.createSpace(id, name: "  Home  ", as: alice)
            let again = try await api.createSpace(id, name: "Home", as: alice)
            // Then the first made it, the second answers it as it is
            #expect(created.status == .created, "\(created.text)")
            let space = try created.decode(SpaceJSON.self)
            #expect(space == SpaceJSON(id: id, name: "Home", kind: "shared", role: "owner", owner: alice.username,
                                       members: [SpaceMemberJSON(username: alice.username, role: "owner")]))
            #expect(again.status == .ok, "\(again.text)")
            #expect(try again.decode(SpaceJSON.self) == space)
            // And the id is taken for anyone else, as is a person's id (their personal space's)
            let taken = try await api.createSpace(id, name: "Mine", as: bob)
            #expect(taken.status == .conflict)
            #expect(try taken.error().message.contains("taken"))
            #expect(try await api.createSpace(bob.id, name: "Bob's", as: alice).status == .conflict)
            // And alice's spaces are her personal one, then Home; bob's only his own
            let listed = try await api.spaces(as: alice)
            #expect(listed.map(\.id) == [alice.id, id])
            #expect(listed.first.map { [$0.kind, $0.role, $0.owner] } == ["personal", "owner", alice.username])
            #expect(try await api.spaces(as: bob).map(\.id) == [bob.id])
        }
    }

    @Test(arguments: Backend.available)
    func aSpaceCallWithAnIdempotencyKeyAppliesOnce(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let id = UUID().uuidString.lowercased()
            let key = UUID().uuidString
            let first = try await api.createSpace(id, name: "Home", key: key, as: alice)
            let replay = try await api.createSpace(id, name: "Home", key: key, as: alice)
            #expect(first.status == .created)
            #expect(replay.status == .created, "the first answer, replayed: \(replay.text)")
            #expect(try replay.decode(SpaceJSON.self) == first.decode(SpaceJSON.self))
            let other = try await api.createSpace(id, name: "Other name", key: key, as: alice)
            #expect(other.status == .unprocessableContent)
            // And an accepted invitation replayed under its key answers the same space
            _ = try await api.invite(bob.username, to: id, as: alice)
            let invitation = try #require(try await api.invitations(as: bob).first)
            let acceptKey = UUID().uuidString
            let accepted = try await api.accept(invitation.id, key: acceptKey, as: bob)
            let acceptedAgain = try await api.accept(invitation.id, key: acceptKey, as: bob)
            #expect(accepted.status == .ok)
            #expect(acceptedAgain.status == .ok)
            #expect(try acceptedAgain.decode(SpaceJSON.self) == accepted.decode(SpaceJSON.self))
        }
    }

    @Test(arguments: Backend.available)
    func badSpaceNamesAndIdsAreA400(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice")
            for (id, name, mentions) in [("a", "   ", "only spaces"), ("a", String(repeating: "n", count: 61), "1 to 60"),
                                         ("a", "", "1 to 60"), ("", "Home", "1 to 128"),
                                         (String(repeating: "i", count: 129), "Home", "1 to 128"), ("a\u{1}", "Home", "control")] {
                let answer = try await api.createSpace(id, name: name, as: alice)
                #expect(answer.status == .badRequest, "\(id) \(name): \(answer.text)")
                #expect(try answer.error().message.contains(mentions), "\(answer.text)")
            }
            let space = try await api.createdSpace("Home", as: alice)
            let badInvitee = try await api.invite("not an email or name", to: space.id, as: alice)
            #expect(badInvitee.status == .badRequest)
            #expect(try badInvitee.error().message.contains("invitee"))
        }
    }

    @Test(arguments: Backend.available)
    func anInviteeSeesTheInvitationAcceptsItAndIsAMemberWithItsRole(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given alice's space and an invitation for bob as a viewer
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            let invited = try await api.invite(bob.username, role: "viewer", to: home.id, as: alice)
            #expect(invited.status == .accepted)
            #expect(invited.text.contains(#""status":"invited""#))
            // When bob looks
            let invitations = try await api.invitations(as: bob)
            // Then he sees it, named, with its inviter and role; alice has none
            #expect(invitations.map { [$0.space.id, $0.space.name, $0.invitedBy, $0.role] } == [[home.id, "Home", alice.username, "viewer"]])
            #expect(try await api.invitations(as: alice).isEmpty)
            // And before he accepts, nothing of the space reaches him
            #expect(try await api.spacePull(as: bob).spaces.map(\.id) == [bob.id])
            // When he accepts
            let accepted = try await api.accept(invitations[0].id, as: bob)
            // Then he is a viewer of it; the invitation is gone; accepting again answers the same
            #expect(accepted.status == .ok, "\(accepted.text)")
            let space = try accepted.decode(SpaceJSON.self)
            #expect(space.role == "viewer")
            #expect(space.owner == alice.username)
            #expect(space.members.map { [$0.username, $0.role] } == [[alice.username, "owner"], [bob.username, "viewer"]])
            #expect(try await api.invitations(as: bob).isEmpty)
            #expect(try await api.accept(invitations[0].id, as: bob).status == .ok)
            #expect(try await api.spaces(as: bob).map(\.id) == [bob.id, home.id])
            // And inviting him again is a conflict; inviting no one is a 404 naming the name
            let again = try await api.invite(bob.username, to: home.id, as: alice)
            #expect(again.status == .conflict)
            #expect(try again.error().message.contains("already"))
            let nobody = try await api.invite("nobody_here", to: home.id, as: alice)
            #expect(nobody.status == .notFound)
            #expect(try nobody.error().message == "No one is called nobody_here")
        }
    }

    @Test(arguments: Backend.available)
    func anInvitationByEmailNeverSaysWhetherTheAddressHasAnAccountAndWaitsForItsRegistration(_ backend: Backend) async throws {
        let folder = try ScratchFolder("eventual-mail")
        defer { folder.remove() }
        let mailbox = Mailbox(folder: folder.url)
        try await withServer(backend, configure: { $0.mail = .directory(folder.url.path) }) { api in
            /// Proves the account's address with the code mailed to it (an invitation by email waits for that).
            func prove(_ email: String) async throws {
                let answer = try await api.send(.post, "/v1/account/verification",
                                                json: #"{"email":\#(jsonString(email)),"code":"\#(try mailbox.code(to: email))"}"#)
                try #require(answer.status == .noContent, "\(answer.text)")
            }
            // Given alice's space, and bob with an account whose address he proved
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            try await prove(bob.email)
            let home = try await api.createdSpace("Home", as: alice)
            let newcomer = "Carol.\(UUID().uuidString.prefix(8))@Example.com"
            // When alice invites bob's address and an address no account has
            let known = try await api.invite(bob.email, to: home.id, as: alice)
            let unknown = try await api.invite(newcomer, to: home.id, as: alice)
            // Then both answers are the same
            #expect(known.status == .accepted)
            #expect(unknown.status == .accepted)
            #expect(known.text == unknown.text)
            // And bob sees his; a person who registers with the other address later (in another case) sees theirs
            #expect(try await api.invitations(as: bob).map(\.space.id) == [home.id])
            let carolName = "carol_\(UUID().uuidString.prefix(8).lowercased())"
            let registered = try await api.register(username: carolName, email: newcomer.lowercased(), password: "carol-password")
            try #require(registered.status == .created, "\(registered.text)")
            let login = try await api.login(email: newcomer.lowercased(), password: "carol-password")
            struct Token: Decodable { let accessToken: String }
            let carol = Account(id: try registered.decode(UserJSON.self).id, username: carolName, email: newcomer.lowercased(),
                                password: "carol-password", accessToken: try login.decode(Token.self).accessToken)
            #expect(try await api.invitations(as: carol).isEmpty)
            try await prove(carol.email)
            let carols = try await api.invitations(as: carol)
            #expect(carols.map(\.space.name) == ["Home"])
            // When she declines, twice
            #expect(try await api.decline(carols[0].id, as: carol).status == .noContent)
            #expect(try await api.decline(carols[0].id, as: carol).status == .noContent)
            // Then it is gone, and accepting it now is a conflict
            #expect(try await api.invitations(as: carol).isEmpty)
            let late = try await api.accept(carols[0].id, as: carol)
            #expect(late.status == .conflict)
            #expect(try late.error().message.contains("declined"))
            // And an invitation by email to a member stores nothing, answered the same
            _ = try await api.accept(try #require(try await api.invitations(as: bob).first).id, as: bob)
            let member = try await api.invite(bob.email, to: home.id, as: alice)
            #expect(member.status == .accepted)
            #expect(member.text == unknown.text)
            #expect(try await api.invitations(as: bob).isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func someoneElsesInvitationIsA404(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob"), mallory = try await api.signUp("mallory")
            let home = try await api.createdSpace("Home", as: alice)
            _ = try await api.invite(bob.username, to: home.id, as: alice)
            let invitation = try #require(try await api.invitations(as: bob).first)
            for answer in [try await api.accept(invitation.id, as: mallory), try await api.decline(invitation.id, as: mallory),
                           try await api.accept("no-such-invitation", as: mallory)] {
                #expect(answer.status == .notFound, "\(answer.text)")
                _ = try answer.error()
            }
            #expect(try await api.spaces(as: mallory).map(\.id) == [mallory.id])
            #expect(try await api.invitations(as: bob).count == 1)
        }
    }

    @Test(arguments: Backend.available)
    func aNonMemberGets404ForEveryCallAboutASpaceAndAMemberNotTheOwner403(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given alice's space with bob as an editor, and mallory outside it
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob"), mallory = try await api.signUp("mallory")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            // When mallory guesses its id, and an id no space has
            for spaceID in [home.id, "no-such-space"] {
                let answers = [
                    try await api.invite(mallory.username, to: spaceID, as: mallory),
                    try await api.setRole("viewer", of: bob.username, in: spaceID, as: mallory),
                    try await api.removeMember(bob.username, from: spaceID, as: mallory),
                    try await api.removeMember(mallory.username, from: spaceID, as: mallory),
                ]
                // Then each is a 404 in the same words, never naming the space
                for answer in answers {
                    #expect(answer.status == .notFound, "\(answer.text)")
                    #expect(try answer.error().message == "You are not a member of space \(spaceID)")
                }
            }
            // And bob, a member, is refused the owner's calls with a 403
            for answer in [try await api.invite(mallory.username, to: home.id, as: bob),
                           try await api.setRole("viewer", of: alice.username, in: home.id, as: bob),
                           try await api.removeMember(alice.username, from: home.id, as: bob)] {
                #expect(answer.status == .forbidden, "\(answer.text)")
                #expect(try answer.error().message.contains("owner of Home"))
            }
            #expect(try await api.spaces(as: alice).last?.members.count == 2)
        }
    }

    @Test(arguments: Backend.available)
    func aPersonalSpaceTakesNoInvitationsAndNoOneLeavesIt(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            for answer in [try await api.invite(bob.username, to: alice.id, as: alice),
                           try await api.removeMember(alice.username, from: alice.id, as: alice),
                           try await api.setRole("editor", of: alice.username, in: alice.id, as: alice)] {
                #expect(answer.status == .conflict, "\(answer.text)")
                #expect(try answer.error().message == "Your personal space is yours alone")
            }
            // And someone else's personal space is like any space they are not in
            #expect(try await api.invite(bob.username, to: alice.id, as: bob).status == .notFound)
        }
    }

    @Test(arguments: Backend.available)
    func theOwnerHandsTheSpaceOverLeavesAndTheLastOneOutDeletesIt(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            // Given alice's space with bob as a viewer, and a record in it
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, role: "viewer", by: alice)
            _ = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-1000), fields: pantryItem())], to: home.id, as: alice)
            // When the owner tries to leave with bob still in
            let leave = try await api.removeMember(alice.username, from: home.id, as: alice)
            // Then she is told how to
            #expect(leave.status == .conflict)
            #expect(try leave.error().message == "You own Home: make another member its owner first")
            // When she makes bob an editor, then its owner
            #expect(try await api.setRole("editor", of: bob.username, in: home.id, as: alice).status == .ok)
            let handed = try await api.setRole("owner", of: bob.username, in: home.id, as: alice)
            // Then bob owns it and alice is an editor
            #expect(handed.status == .ok, "\(handed.text)")
            let space = try handed.decode(SpaceJSON.self)
            #expect(space.owner == bob.username)
            #expect(space.role == "editor")
            #expect(space.members.map { [$0.username, $0.role] } == [[bob.username, "owner"], [alice.username, "editor"]])
            // And alice leaves; bob, alone, leaves too: the space is gone with its records
            #expect(try await api.removeMember(alice.username, from: home.id, as: alice).status == .noContent)
            #expect(try await api.removeMember(alice.username, from: home.id, as: alice).status == .notFound)
            #expect(try await api.removeMember(bob.username, from: home.id, as: bob).status == .noContent)
            #expect(try await api.spaces(as: bob).map(\.id) == [bob.id])
            #expect(try await api.spaces(as: alice).map(\.id) == [alice.id])
            let refused = try await api.pushed([SyncChangeJSON(recordId: "milk", hlc: Stamps.at(-500), fields: ["quantity": 2])],
                                               to: home.id, as: bob)
            #expect(refused.map(\.message) == ["You are no longer a member of Home"])
        }
    }

    @Test(arguments: Backend.available)
    func theOwnerRemovesAMemberAndRemovingThemAgainChangesNothing(_ backend: Backend) async throws {
        try await withServer(backend) { api in
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob"), carol = try await api.signUp("carol")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            #expect(try await api.removeMember(bob.username, from: home.id, as: alice).status == .noContent)
            #expect(try await api.removeMember(bob.username, from: home.id, as: alice).status == .noContent)
            let never = try await api.removeMember(carol.username, from: home.id, as: alice)
            #expect(never.status == .notFound)
            #expect(try never.error().message == "\(carol.username) is not a member of Home")
            #expect(try await api.spaces(as: alice).last?.members.map(\.username) == [alice.username])
            #expect(try await api.spaces(as: bob).map(\.id) == [bob.id])
            // And bob may be invited back
            try await api.join(bob, to: home.id, by: alice)
            #expect(try await api.spaces(as: bob).map(\.id) == [bob.id, home.id])
        }
    }
}

@Suite("Spaces: a space's bytes count against its owner", .timeLimit(.minutes(2)))
struct SpaceQuotaTests {
    /// About 450 bytes stored: a name of 200 characters and its stamps.
    private func bigItem(_ id: String) -> SyncChangeJSON {
        SyncChangeJSON(recordId: id, hlc: Stamps.at(-1000), fields: pantryItem(["name": .string(String(repeating: "n", count: 200))]))
    }

    @Test(arguments: Backend.available)
    func bytesMoveWithTheSpaceToItsNewOwnerAndGoWithItsDeletion(_ backend: Backend) async throws {
        try await withServer(backend, configure: { $0.quotas.bytesPerUser = 1200 }) { api in
            // Given bob's two big items in alice's Home: they count against alice
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(bob, to: home.id, by: alice)
            #expect(try await api.pushed([bigItem("b1"), bigItem("b2")], to: home.id, as: bob).map(\.status) == ["applied", "applied"])
            let full = try await api.pushed([bigItem("a1")], to: nil, as: alice)
            #expect(full.map(\.status) == ["rejected"] && full[0].code == "quota", "\(full)")
            // When alice hands Home over to bob, they count against him: she has room, he has none
            #expect(try await api.setRole("owner", of: bob.username, in: home.id, as: alice).status == .ok)
            #expect(try await api.pushed([bigItem("a1")], to: nil, as: alice).map(\.status) == ["applied"])
            let none = try await api.pushed([bigItem("own")], to: nil, as: bob)
            #expect(none.map(\.status) == ["rejected"] && none[0].code == "quota", "\(none)")
            // When alice leaves and bob, alone, leaves too, the space's bytes go with it
            #expect(try await api.removeMember(alice.username, from: home.id, as: alice).status == .noContent)
            #expect(try await api.removeMember(bob.username, from: home.id, as: bob).status == .noContent)
            #expect(try await api.pushed([bigItem("own")], to: nil, as: bob).map(\.status) == ["applied"])
        }
    }
}
