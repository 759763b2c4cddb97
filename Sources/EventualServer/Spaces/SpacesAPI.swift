import EventualAPI
import Foundation

extension APIService {
    /// The spaces, their members and invitations (Spaces/), on the sync store's database.
    var spaces: SpaceStore { SpaceStore(database: sync.database) }

    func listSpaces(_ input: Operations.ListSpaces.Input) async throws -> Operations.ListSpaces.Output {
        let userID = try await authenticatedUserID()
        let spaces = try await spaces.spaces(of: userID, app: try servedAppID(input.query.app))
        return .ok(.init(body: .json(.init(spaces: spaces.map(Components.Schemas.Space.init)))))
    }

    func createSpace(_ input: Operations.CreateSpace.Input) async throws -> Operations.CreateSpace.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let id = try SpaceRules.id(body.id, field: "id")
        let name = try SpaceRules.name(body.name)
        let userID = try await authenticatedUserID()
        let app = try servedAppID(body.app)
        struct Fingerprint: Encodable { let id, name: String; let app: String? }
        struct Answer: Codable, Sendable {
            let space: SpaceDetails
            let created: Bool
        }
        let replay = try idempotency.request(key: input.headers.idempotencyKey, scope: "user:\(userID)",
                                             body: Fingerprint(id: id, name: name, app: body.app))
        let spaces = self.spaces, now = UnixMillis.now()
        let answer = try await idempotency.perform(replay) { sql in
            let made = try await spaces.create(id: id, name: name, app: app, by: userID, now: now, on: sql)
            return Answer(space: made.space, created: made.created)
        }
        let space = Components.Schemas.Space(answer.space)
        return answer.created ? .created(.init(body: .json(space))) : .ok(.init(body: .json(space)))
    }

    func inviteToSpace(_ input: Operations.InviteToSpace.Input) async throws -> Operations.InviteToSpace.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let spaceID = try SpaceRules.id(input.path.spaceId, field: "spaceId")
        let invitee = try SpaceRules.invitee(body.invitee)
        let role: SpaceRole = body.role == .editor ? .editor : .viewer
        let userID = try await authenticatedUserID()
        struct Fingerprint: Encodable { let spaceID, invitee, role: String }
        let replay = try idempotency.request(key: input.headers.idempotencyKey, scope: "user:\(userID)",
                                             body: Fingerprint(spaceID: spaceID, invitee: body.invitee, role: role.rawValue))
        let spaces = self.spaces, now = UnixMillis.now()
        let sent = try await idempotency.perform(replay) { sql in
            try await spaces.invite(invitee, as: role, to: spaceID, by: userID, byteQuota: quotas.bytesPerUser, now: now, on: sql)
            return Components.Schemas.InvitationSent(status: .invited)
        }
        return .accepted(.init(body: .json(sent)))
    }

    func setSpaceRole(_ input: Operations.SetSpaceRole.Input) async throws -> Operations.SetSpaceRole.Output {
        guard case .json(let body) = input.body else { throw APIError.badRequest("expected a JSON body") }
        let spaceID = try SpaceRules.id(input.path.spaceId, field: "spaceId")
        let username = try SpaceRules.id(input.path.username, field: "username")
        let role = SpaceRole(body.role)
        let userID = try await authenticatedUserID()
        struct Fingerprint: Encodable { let spaceID, username, role: String }
        let replay = try idempotency.request(key: input.headers.idempotencyKey, scope: "user:\(userID)",
                                             body: Fingerprint(spaceID: spaceID, username: username, role: role.rawValue))
        let spaces = self.spaces
        let space = try await idempotency.perform(replay) { sql in
            try await spaces.setRole(role, of: username, in: spaceID, by: userID, on: sql)
        }
        return .ok(.init(body: .json(.init(space))))
    }

    func removeSpaceMember(_ input: Operations.RemoveSpaceMember.Input) async throws -> Operations.RemoveSpaceMember.Output {
        let spaceID = try SpaceRules.id(input.path.spaceId, field: "spaceId")
        let username = try SpaceRules.id(input.path.username, field: "username")
        let userID = try await authenticatedUserID()
        struct Fingerprint: Codable, Sendable { let spaceID, username: String }
        let replay = try idempotency.request(key: input.headers.idempotencyKey, scope: "user:\(userID)",
                                             body: Fingerprint(spaceID: spaceID, username: username))
        let spaces = self.spaces, now = UnixMillis.now()
        _ = try await idempotency.perform(replay) { sql in
            try await spaces.remove(username, from: spaceID, by: userID, now: now, on: sql)
            return Fingerprint(spaceID: spaceID, username: username)
        }
        // Their devices pull now, and learn they left: no signal of the space reaches them after this.
        if let removed = try await accounts.userID(username: username) { await live.publish(.poke([removed])) }
        return .noContent(.init())
    }

    func listInvitations(_ input: Operations.ListInvitations.Input) async throws -> Operations.ListInvitations.Output {
        let userID = try await authenticatedUserID()
        let now = UnixMillis.now()
        let found = try await spaces.invitations(for: userID, app: try servedAppID(input.query.app), now: now)
        // NB: every unverified account is told its email invitations wait for a proven address,
        // whether or not one waits: the answer must not tell whoever registered an address that
        // someone invited it. Only the mailbox learns that, from the code mailed when one waits.
        if let email = found.unverifiedEmail, found.waitOnEmail {
            // NB: at most one mail a minute and ten a day (`EmailVerification.resend`); a mail that
            // cannot go is logged there and does not fail the listing: the person asks again.
            do {
                try await verification.resend(email: email, now: now)
            } catch {
                RequestScope.current?.logger.warning("verification mail not sent", metadata: ["error": "\(LogSafe.describe(error))"])
            }
        }
        let invitations = SpaceInvitations(waiting: found.invitations, awaitingEmailVerification: found.unverifiedEmail != nil)
        return .ok(.init(body: .json(.init(invitations))))
    }

    func acceptInvitation(_ input: Operations.AcceptInvitation.Input) async throws -> Operations.AcceptInvitation.Output {
        let invitationID = try SpaceRules.id(input.path.invitationId, field: "invitationId")
        let userID = try await authenticatedUserID()
        struct Fingerprint: Encodable { let accept: String }
        let replay = try idempotency.request(key: input.headers.idempotencyKey, scope: "user:\(userID)",
                                             body: Fingerprint(accept: invitationID))
        let spaces = self.spaces, now = UnixMillis.now()
        let space = try await idempotency.perform(replay) { sql in
            try await spaces.accept(invitation: invitationID, by: userID, app: try servedAppID(input.query.app), now: now, on: sql)
        }
        // The person's other devices pull the space they joined now.
        await live.publish(.poke([userID]))
        return .ok(.init(body: .json(.init(space))))
    }

    func declineInvitation(_ input: Operations.DeclineInvitation.Input) async throws -> Operations.DeclineInvitation.Output {
        let invitationID = try SpaceRules.id(input.path.invitationId, field: "invitationId")
        let userID = try await authenticatedUserID()
        struct Fingerprint: Codable, Sendable { let decline: String }
        let replay = try idempotency.request(key: input.headers.idempotencyKey, scope: "user:\(userID)",
                                             body: Fingerprint(decline: invitationID))
        let spaces = self.spaces
        _ = try await idempotency.perform(replay) { sql in
            try await spaces.decline(invitation: invitationID, by: userID, app: try servedAppID(input.query.app), on: sql)
            return Fingerprint(decline: invitationID)
        }
        return .noContent(.init())
    }
}
