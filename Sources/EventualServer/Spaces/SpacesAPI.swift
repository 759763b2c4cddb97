import EventualAPI
import Foundation

extension APIService {
    func listSpaces(_ input: Operations.ListSpaces.Input) async throws -> Operations.ListSpaces.Output {
        _ = try await authenticatedUserID()
        throw APIError(.notImplemented, "spaces are not served yet")
    }

    func createSpace(_ input: Operations.CreateSpace.Input) async throws -> Operations.CreateSpace.Output {
        _ = try await authenticatedUserID()
        throw APIError(.notImplemented, "spaces are not served yet")
    }

    func inviteToSpace(_ input: Operations.InviteToSpace.Input) async throws -> Operations.InviteToSpace.Output {
        _ = try await authenticatedUserID()
        throw APIError(.notImplemented, "spaces are not served yet")
    }

    func setSpaceRole(_ input: Operations.SetSpaceRole.Input) async throws -> Operations.SetSpaceRole.Output {
        _ = try await authenticatedUserID()
        throw APIError(.notImplemented, "spaces are not served yet")
    }

    func removeSpaceMember(_ input: Operations.RemoveSpaceMember.Input) async throws -> Operations.RemoveSpaceMember.Output {
        _ = try await authenticatedUserID()
        throw APIError(.notImplemented, "spaces are not served yet")
    }

    func listInvitations(_ input: Operations.ListInvitations.Input) async throws -> Operations.ListInvitations.Output {
        _ = try await authenticatedUserID()
        throw APIError(.notImplemented, "spaces are not served yet")
    }

    func acceptInvitation(_ input: Operations.AcceptInvitation.Input) async throws -> Operations.AcceptInvitation.Output {
        _ = try await authenticatedUserID()
        throw APIError(.notImplemented, "spaces are not served yet")
    }

    func declineInvitation(_ input: Operations.DeclineInvitation.Input) async throws -> Operations.DeclineInvitation.Output {
        _ = try await authenticatedUserID()
        throw APIError(.notImplemented, "spaces are not served yet")
    }
}
