import EventualAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The sync endpoints' bodies, written and read without the generated client's generic JSON
/// containers.
///
/// NB: the hot path of a phone leaving a basement with thousands of changes. The generated
/// client would decode each outbox payload and wrap its fields in `OpenAPIObjectContainer`s, then
/// encode them again; here a change goes on the wire as the outbox stored it, spliced after its
/// id, collection and record id, and a pulled record's fields decode straight into `SyncValue`s.
/// The shapes are `openapi.yaml`'s `SyncPushRequest` and `SyncPullResponse`; the engine's tests
/// run them against the real server.
enum SyncWire {
    /// `{"changes":[…]}` for a batch of change entries.
    static func pushBody(_ batch: [OutboxEntry]) -> Data {
        var body = Data(#"{"changes":["#.utf8)
        body.reserveCapacity(batch.reduce(32) { $0 + $1.payload.count + 120 })
        for (index, entry) in batch.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: #"{"id":"#.utf8)
            appendString(entry.id, to: &body)
            body.append(contentsOf: #","collection":"#.utf8)
            appendString(entry.operation, to: &body)
            body.append(contentsOf: #","recordId":"#.utf8)
            appendString(entry.recordID ?? "", to: &body)
            if let space = entry.space {
                // NB: absent for the person's own space: what a device sent before spaces, byte for byte.
                body.append(contentsOf: #","space":"#.utf8)
                appendString(space, to: &body)
            }
            // NB: the payload is a JSON object written by `ChangePayload`'s encoder: its members follow.
            body.append(UInt8(ascii: ","))
            body.append(entry.payload.dropFirst())
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }

    /// A JSON string literal, escaped as RFC 8259 requires.
    static func appendString(_ text: String, to data: inout Data) {
        data.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): data.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): data.append(contentsOf: #"\\"#.utf8)
            case 0x00..<0x20: data.append(contentsOf: String(format: "\\u%04x", byte).utf8)
            default: data.append(byte)
            }
        }
        data.append(UInt8(ascii: "\""))
    }

    /// A pull's page, its fields as `SyncValue`s.
    struct PulledPage: Decodable, Sendable {
        let changes: [PulledRecord]
        let cursor: String
        let hasMore: Bool
        /// Every space the person is in. NB: absent from a server that predates spaces: the
        /// engine then keeps the spaces it knows.
        let spaces: [PulledSpace]?
        /// Spaces the person was in at the cursor and is no longer in.
        let removed: [RemovedSpace]?
        /// With `count=true`: how many records the subscription has still to send after this page.
        let remaining: Int?

        /// The person's own space, whose records the engine keeps with no space id.
        var personalSpace: String? { spaces?.first { $0.kind == SpaceKind.personal.rawValue }?.id }
    }

    /// A push's answer: one result per change.
    struct PushAnswer: Decodable {
        let results: [PushResult]
    }

    struct PushResult: Decodable {
        enum Status: String, Decodable { case applied, duplicate, rejected }

        let id: String
        let status: Status
        let message: String?
        /// A rule's refusal: its code (`below_minimum`, …) and the field it is about.
        let code: String?
        let field: String?
        /// The server's record when it refused the change by a rule; absent when it holds none.
        let current: PulledRecord?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            status = try container.decode(Status.self, forKey: .status)
            message = try container.decodeIfPresent(String.self, forKey: .message)
            // NB: what a refusal adds is read leniently: an answer whose extras this version cannot
            // read still settles every change of the batch.
            code = try? container.decodeIfPresent(String.self, forKey: .code)
            field = try? container.decodeIfPresent(String.self, forKey: .field)
            current = try? container.decodeIfPresent(PulledRecord.self, forKey: .current)
        }

        private enum CodingKeys: String, CodingKey { case id, status, message, code, field, current }
    }

    /// `GET /v1/sync/records`'s answer.
    struct RecordList: Decodable, Sendable {
        let records: [PulledRecord]
    }

    struct PulledRecord: Codable, Sendable {
        let collection: String
        let recordId: String
        let fields: [String: SyncValue]
        let deleted: Bool
        let hlc: String
        let space: String?
        /// The username of the person whose change the server applied last.
        let changedBy: String?

        /// The record, with no space when it is in `personalSpace`.
        func remote(personalSpace: String?) -> RemoteRecord {
            RemoteRecord(collection: collection, recordID: recordId, fields: fields, deleted: deleted, hlc: hlc,
                         space: space == personalSpace ? nil : space, changedBy: changedBy)
        }
    }

    struct PulledSpace: Decodable, Sendable {
        let id: String
        let name: String
        let kind: String
        let role: String
        let owner: String?
        var app: String? = nil
        /// A shared space's members, the owner first. NB: absent from a server that predates them.
        var members: [PulledMember]? = nil

        /// The members as this device keeps them.
        var spaceMembers: [SpaceMember]? {
            members?.map { SpaceMember(username: $0.username, role: SpaceRole(rawValue: $0.role) ?? .viewer,
                                       since: Self.date($0.since) ?? Date(timeIntervalSince1970: 0)) }
        }

        private static func date(_ text: String) -> Date? {
            let formatter = ISO8601DateFormatter()
            if let date = formatter.date(from: text) { return date }
            formatter.formatOptions.insert(.withFractionalSeconds)
            return formatter.date(from: text)
        }
    }

    struct PulledMember: Decodable, Sendable {
        let username: String
        let role: String
        let since: String
    }

    struct RemovedSpace: Decodable, Sendable {
        let id: String
        let name: String
    }
}
