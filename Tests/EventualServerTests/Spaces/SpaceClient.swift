import EventualAPI
import Foundation
import HTTPTypes
import Testing

struct SpaceMemberJSON: Decodable, Equatable {
    let username: String
    let role: String
}

struct SpaceJSON: Decodable, Equatable {
    let id: String
    let name: String
    let kind: String
    let role: String
    let owner: String
    let members: [SpaceMemberJSON]
}

struct SpaceRefJSON: Decodable, Equatable {
    let id: String
    let name: String
}

struct SpaceSummaryJSON: Decodable, Equatable {
    let id: String
    let name: String
    let kind: String
    let role: String
}

struct InvitationJSON: Decodable, Equatable {
    let id: String
    let space: SpaceRefJSON
    let invitedBy: String
    let role: String
}

/// A pulled record with the space it lives in and who changed it last.
struct SpaceRecordJSON: Decodable, Equatable {
    let space: String
    let changedBy: String?
    let collection: String
    let recordId: String
    let fields: [String: SyncValue]
    let deleted: Bool
}

struct SpacePullJSON: Decodable {
    let changes: [SpaceRecordJSON]
    let cursor: String
    let hasMore: Bool
    let spaces: [SpaceSummaryJSON]
    let removed: [SpaceRefJSON]
}

extension API {
    /// Sends a space call as `account`, with an Idempotency-Key when one is given.
    func spaceCall(_ method: HTTPRequest.Method, _ path: String, json: String? = nil, key: String? = nil,
                   as account: Account) async throws -> Answer {
        var headers = account.bearer
        if let key { headers[HTTPField.Name("Idempotency-Key")!] = key }
        return try await send(method, path, headers: headers, json: json)
    }

    func createSpace(_ id: String, name: String, key: String? = nil, as account: Account) async throws -> Answer {
        try await spaceCall(.post, "/v1/spaces", json: #"{"id":\#(jsonString(id)),"name":\#(jsonString(name))}"#, key: key, as: account)
    }

    /// Creates a shared space named `name` with a new id, requiring a 201.
    func createdSpace(_ name: String, as account: Account, sourceLocation: SourceLocation = #_sourceLocation) async throws -> SpaceJSON {
        let answer = try await createSpace(UUID().uuidString.lowercased(), name: name, as: account)
        try #require(answer.status == .created, "create space: \(answer.text)", sourceLocation: sourceLocation)
        return try answer.decode(SpaceJSON.self, sourceLocation: sourceLocation)
    }

    func invite(_ invitee: String, role: String = "editor", to spaceID: String, key: String? = nil, as account: Account) async throws -> Answer {
        try await spaceCall(.post, "/v1/spaces/\(pathComponent(spaceID))/invitations",
                            json: #"{"invitee":\#(jsonString(invitee)),"role":"\#(role)"}"#, key: key, as: account)
    }

    func invitations(as account: Account, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [InvitationJSON] {
        let answer = try await spaceCall(.get, "/v1/invitations", as: account)
        try #require(answer.status == .ok, "invitations: \(answer.text)", sourceLocation: sourceLocation)
        struct List: Decodable { let invitations: [InvitationJSON] }
        return try answer.decode(List.self, sourceLocation: sourceLocation).invitations
    }

    func accept(_ invitationID: String, key: String? = nil, as account: Account) async throws -> Answer {
        try await spaceCall(.post, "/v1/invitations/\(pathComponent(invitationID))/accept", key: key, as: account)
    }

    func decline(_ invitationID: String, as account: Account) async throws -> Answer {
        try await spaceCall(.post, "/v1/invitations/\(pathComponent(invitationID))/decline", as: account)
    }

    func setRole(_ role: String, of username: String, in spaceID: String, as account: Account) async throws -> Answer {
        try await spaceCall(.put, "/v1/spaces/\(pathComponent(spaceID))/members/\(pathComponent(username))",
                            json: #"{"role":"\#(role)"}"#, as: account)
    }

    func removeMember(_ username: String, from spaceID: String, as account: Account) async throws -> Answer {
        try await spaceCall(.delete, "/v1/spaces/\(pathComponent(spaceID))/members/\(pathComponent(username))", as: account)
    }

    func spaces(as account: Account, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [SpaceJSON] {
        let answer = try await spaceCall(.get, "/v1/spaces", as: account)
        try #require(answer.status == .ok, "spaces: \(answer.text)", sourceLocation: sourceLocation)
        struct List: Decodable { let spaces: [SpaceJSON] }
        return try answer.decode(List.self, sourceLocation: sourceLocation).spaces
    }

    /// Invites `invitee` into the space and has them accept, requiring success at each step.
    func join(_ invitee: Account, to spaceID: String, role: String = "editor", by owner: Account,
              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let invited = try await invite(invitee.username, role: role, to: spaceID, as: owner)
        try #require(invited.status == .accepted, "invite: \(invited.text)", sourceLocation: sourceLocation)
        let invitation = try #require(try await invitations(as: invitee).first { $0.space.id == spaceID },
                                      sourceLocation: sourceLocation)
        let accepted = try await accept(invitation.id, as: invitee)
        try #require(accepted.status == .ok, "accept: \(accepted.text)", sourceLocation: sourceLocation)
    }

    /// Pushes changes, each to `space` (nil: the pusher's personal space), and returns the results.
    func pushed(_ changes: [SyncChangeJSON], to space: String?, as account: Account,
                sourceLocation: SourceLocation = #_sourceLocation) async throws -> [SyncResultJSON] {
        let answer = try await push(changes, to: space, as: account)
        try #require(answer.status == .ok, "push: \(answer.text)", sourceLocation: sourceLocation)
        struct Results: Decodable { let results: [SyncResultJSON] }
        return try answer.decode(Results.self, sourceLocation: sourceLocation).results
    }

    func push(_ changes: [SyncChangeJSON], to space: String?, as account: Account) async throws -> Answer {
        let encoded = try changes.map { change -> [String: Any] in
            var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(change)) as! [String: Any]
            object["space"] = space
            return object
        }
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["changes": encoded]), as: UTF8.self)
        return try await send(.post, "/v1/sync/push", headers: account.bearer, json: body)
    }

    /// Pulls one page with the spaces' fields, requiring a 200.
    func spacePull(since: String? = nil, limit: Int? = nil, as account: Account,
                   sourceLocation: SourceLocation = #_sourceLocation) async throws -> SpacePullJSON {
        let answer = try await pull(since: since, limit: limit, as: account)
        try #require(answer.status == .ok, "pull: \(answer.text)", sourceLocation: sourceLocation)
        return try answer.decode(SpacePullJSON.self, sourceLocation: sourceLocation)
    }

    /// Pulls page after page from `since` until nothing is left: every record seen (by space and
    /// record id, the newest state), how many came in all, and the last page.
    func pulledAll(since: String? = nil, limit: Int? = nil, as account: Account,
                   sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> (records: [String: SpaceRecordJSON], count: Int, last: SpacePullJSON)
    {
        var records: [String: SpaceRecordJSON] = [:]
        var count = 0
        var cursor = since
        while true {
            let page = try await spacePull(since: cursor, limit: limit, as: account, sourceLocation: sourceLocation)
            for record in page.changes { records["\(record.space)/\(record.recordId)"] = record }
            count += page.changes.count
            cursor = page.cursor
            if !page.hasMore { return (records, count, page) }
        }
    }

    private func pathComponent(_ component: String) -> String {
        component.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? component
    }
}
