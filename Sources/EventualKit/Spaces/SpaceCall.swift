import EventualAPI
import Foundation

/// The queued calls that change spaces and their members, what each carries, and how each is
/// sent: with its outbox entry's id as `Idempotency-Key`, so that a replay changes nothing.
enum SpaceCall: String, CaseIterable {
    case create = "spaces.create"
    case invite = "spaces.invite"
    case accept = "spaces.accept"
    case decline = "spaces.decline"
    case setRole = "spaces.setRole"
    case removeMember = "spaces.removeMember"

    static let operations = Set(allCases.map(\.rawValue))

    /// NB: `app` is absent from a call queued by a version from before a space belonged to one app.
    struct Create: Codable, Sendable { let id: String; let name: String; var app: String? = nil }
    struct Invite: Codable, Sendable { let spaceId: String; let invitee: String; let role: SpaceRole }
    /// NB: `app` is absent from an answer queued by a version from before a space belonged to one app.
    struct Answer: Codable, Sendable { let invitationId: String; var app: String? = nil }
    struct Member: Codable, Sendable { let spaceId: String; let username: String }
    struct Role: Codable, Sendable { let spaceId: String; let username: String; let role: SpaceRole }

    /// Every space call's handler, which the engine runs itself (an app's handler of the same name never replaces one).
    static let handlers: [String: CallHandler] = [
        create.rawValue: runCreate, invite.rawValue: runInvite, accept.rawValue: runAccept, decline.rawValue: runDecline,
        setRole.rawValue: runSetRole, removeMember.rawValue: runRemoveMember,
    ]

    @Sendable static func runCreate(_ context: CallContext) async throws {
        let call = try context.decode(Create.self)
        let space: Components.Schemas.Space
        switch try await context.client.createSpace(headers: .init(idempotencyKey: context.idempotencyKey),
                                                    body: .json(.init(id: call.id, app: call.app,
                                                                      name: call.name))) {
        case .created(let answer): space = try answer.body.json
        case .ok(let answer): space = try answer.body.json
        case .badRequest(let answer): throw try answer.body.json.spaceFailure
        case .unauthorized(let answer): throw try answer.body.json.spaceFailure
        case .notFound(let answer): throw try answer.body.json.spaceFailure
        case .conflict(let answer): throw try answer.body.json.spaceFailure
        case .unprocessableContent(let answer): throw try answer.body.json.spaceFailure
        case .contentTooLarge(let answer): throw try answer.body.json.spaceFailure
        case .unsupportedMediaType(let answer): throw try answer.body.json.spaceFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Creating the space")
        }
        try await remember(space, in: context)
    }

    @Sendable static func runInvite(_ context: CallContext) async throws {
        let call = try context.decode(Invite.self)
        let role: Components.Schemas.NewInvitation.RolePayload = call.role == .viewer ? .viewer : .editor
        switch try await context.client.inviteToSpace(path: .init(spaceId: call.spaceId), headers: .init(idempotencyKey: context.idempotencyKey),
                                                      body: .json(.init(invitee: call.invitee, role: role))) {
        case .accepted: return
        case .badRequest(let answer): throw try answer.body.json.spaceFailure
        case .unauthorized(let answer): throw try answer.body.json.spaceFailure
        case .forbidden(let answer): throw try answer.body.json.spaceFailure
        case .notFound(let answer): throw try answer.body.json.spaceFailure
        case .conflict(let answer): throw try answer.body.json.spaceFailure
        case .unprocessableContent(let answer): throw try answer.body.json.spaceFailure
        case .contentTooLarge(let answer): throw try answer.body.json.spaceFailure
        case .tooManyRequests(let answer): throw try answer.body.json.spaceFailure
        case .unsupportedMediaType(let answer): throw try answer.body.json.spaceFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "The invitation")
        }
    }

    @Sendable static func runAccept(_ context: CallContext) async throws {
        let call = try context.decode(Answer.self)
        let space: Components.Schemas.Space
        switch try await context.client.acceptInvitation(path: .init(invitationId: call.invitationId),
                                                         query: .init(app: call.app),
                                                         headers: .init(idempotencyKey: context.idempotencyKey)) {
        case .ok(let answer): space = try answer.body.json
        case .badRequest(let answer): throw try answer.body.json.spaceFailure
        case .unauthorized(let answer): throw try answer.body.json.spaceFailure
        case .notFound(let answer): throw try answer.body.json.spaceFailure
        case .conflict(let answer): throw try answer.body.json.spaceFailure
        case .unprocessableContent(let answer): throw try answer.body.json.spaceFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Accepting the invitation")
        }
        try await remember(space, in: context)
    }

    @Sendable static func runDecline(_ context: CallContext) async throws {
        let call = try context.decode(Answer.self)
        switch try await context.client.declineInvitation(path: .init(invitationId: call.invitationId),
                                                          query: .init(app: call.app),
                                                          headers: .init(idempotencyKey: context.idempotencyKey)) {
        case .noContent: return
        case .badRequest(let answer): throw try answer.body.json.spaceFailure
        case .unauthorized(let answer): throw try answer.body.json.spaceFailure
        case .notFound(let answer): throw try answer.body.json.spaceFailure
        case .conflict(let answer): throw try answer.body.json.spaceFailure
        case .unprocessableContent(let answer): throw try answer.body.json.spaceFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Declining the invitation")
        }
    }

    @Sendable static func runSetRole(_ context: CallContext) async throws {
        let call = try context.decode(Role.self)
        let space: Components.Schemas.Space
        switch try await context.client.setSpaceRole(path: .init(spaceId: call.spaceId, username: call.username),
                                                     headers: .init(idempotencyKey: context.idempotencyKey),
                                                     body: .json(.init(role: Components.Schemas.SpaceRole(call.role)))) {
        case .ok(let answer): space = try answer.body.json
        case .badRequest(let answer): throw try answer.body.json.spaceFailure
        case .unauthorized(let answer): throw try answer.body.json.spaceFailure
        case .forbidden(let answer): throw try answer.body.json.spaceFailure
        case .notFound(let answer): throw try answer.body.json.spaceFailure
        case .conflict(let answer): throw try answer.body.json.spaceFailure
        case .unprocessableContent(let answer): throw try answer.body.json.spaceFailure
        case .contentTooLarge(let answer): throw try answer.body.json.spaceFailure
        case .unsupportedMediaType(let answer): throw try answer.body.json.spaceFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Changing the role")
        }
        try await remember(space, in: context)
    }

    @Sendable static func runRemoveMember(_ context: CallContext) async throws {
        let call = try context.decode(Member.self)
        switch try await context.client.removeSpaceMember(path: .init(spaceId: call.spaceId, username: call.username),
                                                          headers: .init(idempotencyKey: context.idempotencyKey)) {
        case .noContent: return
        case .badRequest(let answer): throw try answer.body.json.spaceFailure
        case .unauthorized(let answer): throw try answer.body.json.spaceFailure
        case .forbidden(let answer): throw try answer.body.json.spaceFailure
        case .notFound(let answer): throw try answer.body.json.spaceFailure
        case .conflict(let answer): throw try answer.body.json.spaceFailure
        case .unprocessableContent(let answer): throw try answer.body.json.spaceFailure
        case .undocumented(let status, _): throw RemoteFailure.undocumented(status, doing: "Removing the member")
        }
    }

    /// A space call said for people ("invitation of bob to Home as editor"); nil for another entry.
    /// `noun`: what the app calls a shared space ("household").
    static func summary(of entry: OutboxEntry, username: String, noun: String = "space", store: LocalStore) throws -> String? {
        guard entry.kind == .call, let call = SpaceCall(rawValue: entry.operation) else { return nil }
        let space = try entry.space.flatMap { id in try store.reader.read { db in try SpaceTable.space(id, db)?.name } ?? id }
        let decoder = JSONDecoder()
        switch call {
        case .create: return "new \(noun) \(try decoder.decode(Create.self, from: entry.payload).name)"
        case .invite:
            let invite = try decoder.decode(Invite.self, from: entry.payload)
            return "invitation of \(invite.invitee) to \(space ?? invite.spaceId) as \(invite.role.rawValue)"
        case .accept: return "acceptance of an invitation"
        case .decline: return "refusal of an invitation"
        case .setRole:
            let change = try decoder.decode(Role.self, from: entry.payload)
            return "\(change.username) made \(change.role.rawValue) of \(space ?? change.spaceId)"
        case .removeMember:
            let member = try decoder.decode(Member.self, from: entry.payload)
            return member.username == username ? "leaving \(space ?? member.spaceId)" : "removal of \(member.username) from \(space ?? member.spaceId)"
        }
    }

    /// What the server answered of a space the person is in now, known on this device at once.
    private static func remember(_ space: Components.Schemas.Space, in context: CallContext) async throws {
        let details = SpaceDetails(space)
        try await context.store.writer.write { db in try SpaceTable.upsert(details, db: db) }
    }
}

extension Components.Schemas._Error {
    /// NB: a 409 about a space (a member already, an owner who would leave others behind) stays
    /// true until a person acts: it is a refusal, never retried.
    var spaceFailure: RemoteFailure {
        statusCode == 409 ? .rejected(status: statusCode, message: message) : .status(statusCode, message: message)
    }
}
