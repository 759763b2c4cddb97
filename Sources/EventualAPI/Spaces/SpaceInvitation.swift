import Foundation

/// An invitation to a space that waits for its invitee's answer (`openapi.yaml`'s `Invitation`).
public struct SpaceInvitation: Sendable, Equatable, Codable {
    public let id: String
    public let spaceID: String
    public let spaceName: String
    /// The username of who invited them.
    public let invitedBy: String
    public let role: SpaceRole
    public let createdAt: Date

    public init(id: String, spaceID: String, spaceName: String, invitedBy: String, role: SpaceRole, createdAt: Date) {
        self.id = id
        self.spaceID = spaceID
        self.spaceName = spaceName
        self.invitedBy = invitedBy
        self.role = role
        self.createdAt = createdAt
    }
}

/// The invitations that wait for a person's answer, and whether more wait for them to prove their
/// email: an invitation sent to an email address is shown only once its account verified it.
public struct SpaceInvitations: Sendable, Equatable, Codable {
    public let waiting: [SpaceInvitation]
    /// Invitations sent to the person's email wait for them to verify it; the server mailed a code.
    public let awaitingEmailVerification: Bool

    public init(waiting: [SpaceInvitation], awaitingEmailVerification: Bool) {
        self.waiting = waiting
        self.awaitingEmailVerification = awaitingEmailVerification
    }
}

extension SpaceInvitation {
    /// An invitation as the generated client reads it.
    public init(_ invitation: Components.Schemas.Invitation) {
        self.init(id: invitation.id, spaceID: invitation.space.id, spaceName: invitation.space.name, invitedBy: invitation.invitedBy,
                  role: SpaceRole(invitation.role), createdAt: invitation.createdAt)
    }
}

extension Components.Schemas.Invitation {
    /// An invitation as the generated server writes it.
    public init(_ invitation: SpaceInvitation) {
        self.init(id: invitation.id, space: .init(id: invitation.spaceID, name: invitation.spaceName), invitedBy: invitation.invitedBy,
                  role: .init(invitation.role), createdAt: invitation.createdAt)
    }
}

extension SpaceInvitations {
    /// The listing as the generated client reads it.
    public init(_ list: Components.Schemas.InvitationList) {
        self.init(waiting: list.invitations.map(SpaceInvitation.init), awaitingEmailVerification: list.awaitingEmailVerification)
    }
}

extension Components.Schemas.InvitationList {
    /// The listing as the generated server writes it.
    public init(_ invitations: SpaceInvitations) {
        self.init(invitations: invitations.waiting.map(Components.Schemas.Invitation.init),
                  awaitingEmailVerification: invitations.awaitingEmailVerification)
    }
}
