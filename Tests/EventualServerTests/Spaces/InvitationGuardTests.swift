import EventualAPI
import EventualStorage
import Foundation
import Logging
import SQLKit
import Testing
@testable import EventualServer

/// Nobody joins a space they were not invited to: an invitation by email is for whoever reads
/// that mailbox, and invitations have limits like every other way a person's data grows.
@Suite("Invitations: by email only to a proven address, and bounded", .timeLimit(.minutes(3)))
struct InvitationGuardTests {
    /// A live server whose mail lands in a scratch folder.
    private func withMailingServer(_ backend: Backend, configure: @escaping @Sendable (inout ServerConfiguration) -> Void = { _ in },
                                   _ test: @Sendable (API, Mailbox, DatabaseLocation) async throws -> Void) async throws {
        let folder = try ScratchFolder("eventual-mail")
        defer { folder.remove() }
        let mailbox = Mailbox(folder: folder.url)
        try await withServer(backend, mode: .live, configure: { configuration in
            configuration.mail = .directory(folder.url.path)
            configure(&configuration)
        }) { api, location in try await test(api, mailbox, location) }
    }

    /// Registers through the pantry (which mails no code) and signs in.
    private func pantryAccount(_ api: API, email: String, username: String) async throws -> Account {
        let password = "correct horse \(username)"
        let registered = try await api.send(.post, "/users", json:
            #"{"username":\#(jsonString(username)),"email":\#(jsonString(email)),"password":\#(jsonString(password)),"app":"pantry"}"#)
        try #require(registered.status == .created, "\(registered.text)")
        let login = try await api.login(email: email, password: password)
        struct Token: Decodable { let accessToken: String }
        struct User: Decodable { let id: String }
        return Account(id: try registered.decode(User.self).id, username: username, email: email, password: password,
                       accessToken: try login.decode(Token.self).accessToken)
    }

    private struct Listing: Decodable {
        let invitations: [InvitationJSON]
        let awaitingEmailVerification: Bool
    }

    @Test(arguments: Backend.available)
    func whoeverRegistersAnInvitedAddressMustProveItBeforeSeeingOrJoining(_ backend: Backend) async throws {
        try await withMailingServer(backend) { api, mailbox, location in
            // Given alice invites partner@example.com, who has no account yet, into her household
            let alice = try await api.signUp("alice")
            let home = try await api.createdSpace("Home", as: alice)
            #expect(try await api.invite("partner@example.com", to: home.id, as: alice).status == .accepted)
            // When someone registers that address through the pantry, which mails no code
            let stranger = try await pantryAccount(api, email: "partner@example.com", username: "stranger")
            // Then they see no invitation, only that their address has to be proven, and a code goes to the mailbox
            let listed = try await api.spaceCall(.get, "/v1/invitations", as: stranger).decode(Listing.self)
            #expect(listed.invitations.isEmpty)
            #expect(listed.awaitingEmailVerification)
            let code = try mailbox.code(to: "partner@example.com")
            // And the invitation itself, by its id, can be neither accepted nor declined
            let invitationID = try await Self.invitationIDs(in: home.id, at: location).first ?? ""
            #expect(try await api.accept(invitationID, as: stranger).status == .notFound)
            #expect(try await api.decline(invitationID, as: stranger).status == .notFound)
            // And nothing of the household reaches them
            #expect(try await api.spaces(as: stranger).allSatisfy { $0.id != home.id })
            // When whoever reads the mailbox proves it
            let verified = try await api.send(.post, "/v1/account/verification",
                                              json: #"{"email":"partner@example.com","code":"\#(code)"}"#)
            #expect(verified.status == .noContent, "\(verified.text)")
            // Then the invitation shows and can be accepted
            let after = try await api.spaceCall(.get, "/v1/invitations", as: stranger).decode(Listing.self)
            #expect(after.invitations.map(\.id) == [invitationID])
            #expect(!after.awaitingEmailVerification)
            #expect(try await api.accept(invitationID, as: stranger).status == .ok)
        }
    }

    @Test(arguments: Backend.available)
    func anUnverifiedAccountIsAnsweredAlikeInvitedOrNotAndInvitationsByUsernameAreUnchanged(_ backend: Backend) async throws {
        try await withMailingServer(backend) { api, mailbox, _ in
            let alice = try await api.signUp("alice")
            let dan = try await pantryAccount(api, email: "dan@example.com", username: "dan_pantry")
            // An unverified account that nobody invited by email gets the same answer as one whose address
            // someone invited (nothing tells whoever registered an address of an invitation to it), and no mail
            let before = try await api.spaceCall(.get, "/v1/invitations", as: dan).decode(Listing.self)
            #expect(before.awaitingEmailVerification && before.invitations.isEmpty)
            #expect(try mailbox.all().allSatisfy { !$0.contains("To: dan@example.com") })
            // An invitation by username reaches the account, verified or not
            let home = try await api.createdSpace("Home", as: alice)
            try await api.join(dan, to: home.id, by: alice)
            #expect(try await api.spaces(as: dan).contains { $0.id == home.id })
        }
    }

    @Test(arguments: Backend.available)
    func aSpaceHoldsTwentyWaitingInvitationsAndAPersonSendsFiftyADay(_ backend: Backend) async throws {
        try await withMailingServer(backend) { api, _, _ in
            let owner = try await api.signUp("owner")
            let first = try await api.createdSpace("First", as: owner)
            // Twenty invitations wait in one space; the twenty-first is refused with what to do
            for index in 0..<SpaceStore.maxPendingInvitationsPerSpace {
                #expect(try await api.invite("guest\(index)@example.com", to: first.id, as: owner).status == .accepted)
            }
            let crowded = try await api.invite("guest-extra@example.com", to: first.id, as: owner)
            #expect(crowded.status == .conflict, "\(crowded.text)")
            #expect(try crowded.error().message.contains("waiting for an answer"))
            // Inviting someone again changes their role and costs nothing
            #expect(try await api.invite("guest0@example.com", role: "viewer", to: first.id, as: owner).status == .accepted)
            // Past fifty new invitations in a day, from any of the person's spaces, a 429 says when to try again
            var sent = SpaceStore.maxPendingInvitationsPerSpace
            var space = 1
            while sent < SpaceStore.maxInvitationsPerDay {
                let next = try await api.createdSpace("Space \(space)", as: owner)
                space += 1
                for _ in 0..<min(SpaceStore.maxPendingInvitationsPerSpace, SpaceStore.maxInvitationsPerDay - sent) {
                    #expect(try await api.invite("guest\(sent)@example.com", to: next.id, as: owner).status == .accepted)
                    sent += 1
                }
            }
            let spare = try await api.createdSpace("Spare", as: owner)
            let tooMany = try await api.invite("one-more@example.com", to: spare.id, as: owner)
            #expect(tooMany.status == .tooManyRequests, "\(tooMany.text)")
            #expect(Int(tooMany.headers[.retryAfter] ?? "") ?? 0 > 0)
            #expect(try tooMany.error().message.contains("invitations in the last 24 hours"))
        }
    }

    @Test(arguments: Backend.available)
    func invitationsCountInTheInvitersByteQuota(_ backend: Backend) async throws {
        try await withMailingServer(backend, configure: { $0.quotas.bytesPerUser = 1500 }) { api, _, _ in
            let owner = try await api.signUp("owner")
            let home = try await api.createdSpace("Home", as: owner)
            // Each invitation's row counts against its inviter: a small quota holds only a few
            var answers: [Int] = []
            for index in 0..<15 {
                answers.append(Int(try await api.invite("guest\(index)@example.com", to: home.id, as: owner).status.code))
            }
            #expect(answers.first == 202)
            #expect(answers.contains(413), "\(answers)")
            #expect(answers.prefix { $0 == 202 }.count < 15)
        }
    }

    @Test(arguments: Backend.available)
    func anInvitationExpiresAfterThirtyDays(_ backend: Backend) async throws {
        try await withMailingServer(backend) { api, _, location in
            let alice = try await api.signUp("alice"), bob = try await api.signUp("bob")
            let home = try await api.createdSpace("Home", as: alice)
            #expect(try await api.invite(bob.username, to: home.id, as: alice).status == .accepted)
            // Given the invitation was sent 31 days ago
            let database = try await Database.open(location, logger: Logger(label: "test"))
            let old = UnixMillis.now() - 31 * 24 * 3600 * 1000
            try await database.withConnection { sql in try await sql.update("space_invitations").set("created_at", to: old).run() }
            await database.close()
            // Then it is listed no more, and accepting it says it expired
            let id = try await Self.invitationIDs(in: home.id, at: location).first ?? ""
            #expect(try await api.invitations(as: bob).isEmpty)
            let late = try await api.accept(id, as: bob)
            #expect(late.status == .conflict)
            #expect(try late.error().message.contains("expired"))
            // And a new invitation can be sent and accepted
            try await api.join(bob, to: home.id, by: alice)
        }
    }

    private static func invitationIDs(in spaceID: String, at location: DatabaseLocation) async throws -> [String] {
        let database = try await Database.open(location, logger: Logger(label: "test"))
        let ids = try await database.withConnection { sql in
            try await sql.select().column("id").from("space_invitations").where("space_id", .equal, spaceID).orderBy("created_at").all()
                .map { try $0.decode(column: "id", as: String.self) }
        }
        await database.close()
        return ids
    }
}
